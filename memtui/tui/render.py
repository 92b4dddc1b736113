"""Text for the screen: stored strings shown literally, never run as markup or escape codes."""

from __future__ import annotations

import re

from rich.text import Text

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_BREAKS = re.compile(r"[\r\n\t]+")


def clean(value: object) -> str:
    """One line of text: line breaks and tabs become spaces, other control characters
    (escape codes included) become visible ``\\xNN``."""
    text = _BREAKS.sub(" ", str(value))
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}", text)


def lit(value: object, style: str = "") -> Text:
    """A Text of a stored string, shown exactly as written (no markup is parsed)."""
    return Text(clean(value), style=style, no_wrap=True, overflow="ellipsis", end="")


def block(value: object) -> Text:
    """Multi-line stored text (a detail, a file's lines): control characters made visible."""
    lines = str(value).replace("\r\n", "\n").split("\n")
    return Text("\n".join(_CONTROL.sub(lambda m: f"\\x{ord(m.group(0)):02x}",
                                       line.replace("\t", "    ")) for line in lines))
