"""Bars, sparklines and ages drawn in Unicode, with an ASCII fallback for every glyph."""

from __future__ import annotations

import locale
import os
import sys
from datetime import datetime

from memtui import timeutil

_EIGHTHS = " ▏▎▍▌▋▊▉"
_SPARK = "▁▂▃▄▅▆▇█"
_SPARK_ASCII = "_.-=#"


def unicode_ok(setting: str = "auto") -> bool:
    """Whether to draw Unicode glyphs: ``on``/``off`` from the config, else the terminal's
    encoding (a C/POSIX locale over SSH gets ASCII)."""
    if setting in ("on", "off"):
        return setting == "off"
    if os.environ.get("MEMTUI_ASCII"):
        return False
    encoding = (getattr(sys.stdout, "encoding", None) or locale.getpreferredencoding(False)
                or "ascii")
    return encoding.lower().replace("-", "") in ("utf8", "utf16", "utf32")


def sep(*, ascii_only: bool = False) -> str:
    """The separator between the parts of a title or status line."""
    return " | " if ascii_only else " · "


def ascii_text(app: object, text: str) -> str:
    """Our own line with its separators in ASCII when the app draws ASCII only."""
    return text.replace(" · ", " | ") if getattr(app, "ascii_only", False) else text


def bar(fraction: float, width: int, *, ascii_only: bool = False) -> str:
    """A horizontal bar ``width`` cells wide filled to ``fraction`` (0..1)."""
    fraction = min(1.0, max(0.0, fraction))
    if ascii_only:
        full = round(fraction * width)
        return "#" * full + "." * (width - full)
    eighths = round(fraction * width * 8)
    full, part = divmod(eighths, 8)
    out = "█" * full + (_EIGHTHS[part] if part and full < width else "")
    return out + " " * (width - len(out))


def spark(outcomes: list[bool], width: int, *, ascii_only: bool = False) -> str:
    """Recent runs as a sparkline of the running success rate (newest on the right)."""
    if not outcomes:
        return ("-" if ascii_only else "·") * min(width, 1) + " " * (width - 1)
    recent = outcomes[-width:]
    levels = _SPARK_ASCII if ascii_only else _SPARK
    out = []
    for i in range(len(recent)):
        window = recent[max(0, i - 2): i + 1]
        rate = sum(window) / len(window)
        out.append(levels[round(rate * (len(levels) - 1))])
    return "".join(out).rjust(width)


def usage_bar(used: int, window: int, marks: list[int], width: int, *,
              ascii_only: bool = False) -> str:
    """A context window as a bar with threshold marks (flush, compaction) at their places."""
    if window <= 0:
        return " " * width
    cells = list(bar(used / window, width, ascii_only=ascii_only))
    fill, empty = ("#", ".") if ascii_only else ("█", "▒")
    cells = [fill if c not in (" ", ".") else empty for c in cells]
    for m in marks:
        i = min(width - 1, max(0, round(m / window * width) - 1))
        cells[i] = "|" if ascii_only else "│"
    return "".join(cells)


def age(stamp: str | None, now: datetime | None = None) -> str:
    """How long ago, in the largest whole unit: 45s, 12m, 3h, 5d, 8w."""
    if not stamp:
        return "-"
    try:
        seconds = ((now or timeutil.now()) - timeutil.parse(stamp)).total_seconds()
    except Exception:
        return "?"
    seconds = max(0.0, seconds)
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size * (2 if unit == "w" else 1):
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


def tokens(n: int | None, *, exact: bool = True) -> str:
    """A token count as 142k / 1.2M; ``~`` in front when it is an estimate."""
    if n is None:
        return "-"
    mark = "" if exact else "~"
    if n >= 1_000_000:
        return f"{mark}{n / 1_000_000:.1f}M"
    if n >= 10_000:
        return f"{mark}{n // 1000}k"
    if n >= 1000:
        return f"{mark}{n / 1000:.1f}k"
    return f"{mark}{n}"
