"""Text for the screen: stored strings shown literally, never run as markup or escape codes."""

from __future__ import annotations

import re

from rich.text import Text

from memtui.text import show_controls

_BREAKS = re.compile(r"[\r\n\t\u2028\u2029]+")


def clean(value: object) -> str:
    """One line of text: line breaks and tabs become spaces, other control characters
    (escape codes included) become visible symbols (``␛``), never obeyed."""
    return show_controls(_BREAKS.sub(" ", str(value)))


def lit(value: object, style: str = "") -> Text:
    """A Text of a stored string, shown exactly as written (no markup is parsed)."""
    return Text(clean(value), style=style, no_wrap=True, overflow="ellipsis", end="")


def block(value: object) -> Text:
    """Multi-line stored text (a detail, a file's lines): control characters made visible."""
    text = str(value).replace("\r\n", "\n").replace("\t", "    ")
    return Text(show_controls(text))
