"""Markdown memory: `remember` appends to the daily log or MEMORY.md; `get` reads them safely.

Where the files are and which day a daily log is named after: ``memtui.workspace.layout``.
``remember`` writes through the one writer (``memtui.workspace.writer``), under its lock.

``get`` is reachable by agents (over MCP and hooks), so it reads only those files and
only inside the workspace: relative paths without ``..``, no NUL bytes, no symbolic
link anywhere on the way (``layout.open_inside``), regular files only, and it confirms
the resolved path lies inside the resolved workspace with a path comparison, never a
string-prefix one (``/ws-evil`` is not in ``/ws``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath

from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.redact import scrub
from memtui.workspace import writer
from memtui.workspace.layout import (
    LONG_TERM_HEADER,
    MEMORY_FILE,
    check_memory_path,
    daily_header,
    daily_log,
    existing_workspace,
    local_day,
    open_inside,
)

MAX_READ_BYTES = 8 * 1024 * 1024
"""`get` refuses files larger than this: memory files are notes, not dumps."""


@dataclass(frozen=True)
class Remembered:
    """Where `remember` wrote: the file (relative to the workspace) and the entry's line."""

    path: str
    absolute: str
    line: int
    long_term: bool


@dataclass(frozen=True)
class MemoryText:
    """Lines of a memory file, as `get` returns them."""

    path: str
    start_line: int
    end_line: int
    total_lines: int
    text: str


def get(home: Home, agent: str, path: str, *, start: int = 1,
        lines: int | None = None) -> MemoryText:
    """Lines ``start`` .. ``start + lines - 1`` (1-based) of a memory file of the agent."""
    if start < 1:
        raise MemtuiError(f"--from must be 1 or more, got {start}")
    if lines is not None and lines < 1:
        raise MemtuiError(f"--lines must be 1 or more, got {lines}")
    rel = check_memory_path(path)
    root = existing_workspace(home, agent)
    target = (root / rel).resolve(strict=False)
    if not target.is_relative_to(root) or target != root / rel:
        raise MemtuiError(f"refusing {rel}: it resolves outside {root} or through a link")
    fd = open_inside(root, rel, str(rel))
    with os.fdopen(fd, "rb") as fh:
        data = fh.read(MAX_READ_BYTES + 1)
    if len(data) > MAX_READ_BYTES:
        raise MemtuiError(f"{rel} is larger than {MAX_READ_BYTES // (1024 * 1024)} MiB")
    all_lines = data.decode("utf-8", errors="replace").splitlines()
    total = len(all_lines)
    end = total if lines is None else min(total, start + lines - 1)
    chosen = all_lines[start - 1:end]
    return MemoryText(path=str(rel), start_line=start, end_line=start + len(chosen) - 1,
                      total_lines=total, text="\n".join(chosen))


# -- remember -------------------------------------------------------------------------------


def _entry(text: str, stamp: str | None) -> str:
    first, *rest = text.splitlines()
    head = f"- {stamp} {first}" if stamp else f"- {first}"
    return "\n".join([head, *("  " + line if line else "" for line in rest)]) + "\n"


def remember(home: Home, agent: str, text: str, *, long_term: bool = False,
             now: datetime | None = None) -> Remembered:
    """Append ``text`` to today's daily log (or MEMORY.md), atomically; returns where."""
    body = scrub(text).strip()  # the way in: no control characters, no secrets
    if not body:
        raise MemtuiError("nothing to remember: the text is empty")
    moment = (now or datetime.now()).astimezone()
    ws = home.workspace(agent)
    ws.mkdir(parents=True, exist_ok=True)
    root = ws.resolve(strict=True)
    if long_term:
        rel, header = PurePosixPath(MEMORY_FILE), LONG_TERM_HEADER
        entry = _entry(body, None)
    else:
        day = local_day(moment)
        rel, header = daily_log(day), daily_header(day)
        entry = _entry(body, moment.strftime("%H:%M"))
    line = 0

    def add(current: str) -> str:
        nonlocal line
        if current and not current.endswith("\n"):
            current += "\n"
        line = current.count("\n") + 1
        return current + entry

    target = root / rel
    with writer.memory_lock(home, agent):
        writer.append(target, header, add)
    _mark_index_dirty(home, agent)
    return Remembered(path=str(rel), absolute=str(target), line=line, long_term=long_term)


def _mark_index_dirty(home: Home, agent: str) -> None:
    """Tell the index a memory file changed (the cheap check would notice it anyway)."""
    path = home.index_path(agent)
    if not path.exists():
        return
    from memtui.db import mark_dirty

    mark_dirty(path)
