"""Markdown memory: `remember` appends to the daily log or MEMORY.md; `get` reads them safely.

The canonical, human-editable memory of an agent is ``MEMORY.md`` (curated long-term
facts) and ``memory/YYYY-MM-DD.md`` (the daily log, append-only) in its workspace.

``get`` is reachable by agents (over MCP and hooks), so it reads only those files and
only inside the workspace: relative paths without ``..``, no NUL bytes, no symbolic
link anywhere on the way, regular files only. It opens each path component relative to
the one before with ``O_NOFOLLOW`` (so a symlink swapped in between a check and the
open is refused, not followed), and confirms the resolved path lies inside the resolved
workspace with a path comparison, never a string-prefix one (``/ws-evil`` is not in
``/ws``): the classes of bugs of CVE-2025-53109 and CVE-2025-53110.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path, PurePosixPath

from memtui.errors import MemtuiError, NotFound
from memtui.home import Home, atomic_write
from memtui.locks import file_lock

MEMORY_FILE = "MEMORY.md"
MEMORY_DIR = "memory"
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


# -- path checks ----------------------------------------------------------------------------


def check_memory_path(path: str) -> PurePosixPath:
    """The relative path if it names MEMORY.md or memory/**/*.md, else MemtuiError."""
    if not isinstance(path, str) or not path.strip():
        raise MemtuiError("give the path of a memory file (MEMORY.md or memory/….md)")
    if "\x00" in path:
        raise MemtuiError("invalid memory path: it contains a NUL byte")
    if "\\" in path:
        raise MemtuiError(f"invalid memory path {path!r}: use '/' between folders")
    if path.startswith("/") or os.path.isabs(path) or (len(path) > 1 and path[1] == ":"):
        raise MemtuiError(f"invalid memory path {path!r}: give it relative to the workspace")
    parts = [p for p in path.split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise MemtuiError(f"invalid memory path {path!r}: '..' is not allowed")
    if not parts:
        raise MemtuiError(f"invalid memory path {path!r}")
    rel = PurePosixPath(*parts)
    allowed = (parts == [MEMORY_FILE]
               or (len(parts) >= 2 and parts[0] == MEMORY_DIR and parts[-1].endswith(".md")))
    if not allowed:
        raise MemtuiError(f"{path!r} is not a memory file: only MEMORY.md and memory/**/*.md "
                          "can be read")
    return rel


def _workspace(home: Home, agent: str) -> Path:
    ws = home.workspace(agent)
    if not ws.is_dir():
        raise NotFound(f"agent {agent} has no workspace at {ws}")
    return ws.resolve(strict=True)


def _open_inside(root: Path, rel: PurePosixPath, display: str) -> int:
    """Open ``root/rel`` for reading, refusing symlinks and non-regular files on the way."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        *folders, name = rel.parts
        for folder in folders:
            try:
                nxt = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                              dir_fd=fd)
            except FileNotFoundError as exc:
                raise NotFound(f"no memory file {display} in {root}") from exc
            except (NotADirectoryError, OSError) as exc:
                raise MemtuiError(f"refusing {display}: {folder!r} is a symbolic link or not "
                                  f"a folder") from exc
            os.close(fd)
            fd = nxt
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except FileNotFoundError as exc:
            raise NotFound(f"no memory file {display} in {root}") from exc
        if stat.S_ISLNK(st.st_mode):
            raise MemtuiError(f"refusing {display}: it is a symbolic link")
        if not stat.S_ISREG(st.st_mode):
            raise MemtuiError(f"refusing {display}: not a regular file")
        try:
            file_fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                              dir_fd=fd)
        except FileNotFoundError as exc:
            raise NotFound(f"no memory file {display} in {root}") from exc
        except OSError as exc:  # ELOOP: swapped for a symlink since the stat
            raise MemtuiError(f"refusing {display}: it is a symbolic link") from exc
    finally:
        os.close(fd)
    st = os.fstat(file_fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(file_fd)
        raise MemtuiError(f"refusing {display}: not a regular file")
    return file_fd


def get(home: Home, agent: str, path: str, *, start: int = 1,
        lines: int | None = None) -> MemoryText:
    """Lines ``start`` .. ``start + lines - 1`` (1-based) of a memory file of the agent."""
    if start < 1:
        raise MemtuiError(f"--from must be 1 or more, got {start}")
    if lines is not None and lines < 1:
        raise MemtuiError(f"--lines must be 1 or more, got {lines}")
    rel = check_memory_path(path)
    root = _workspace(home, agent)
    target = (root / rel).resolve(strict=False)
    if not target.is_relative_to(root) or target != root / rel:
        raise MemtuiError(f"refusing {rel}: it resolves outside {root} or through a link")
    fd = _open_inside(root, rel, str(rel))
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


@contextmanager
def _locked(home: Home, agent: str) -> Iterator[None]:
    """One writer at a time per agent, across processes: the append is read-modify-write."""
    with file_lock(home.index_dir / f".{agent}.memory.lock"):
        yield


def _entry(text: str, stamp: str | None) -> str:
    first, *rest = text.splitlines()
    head = f"- {stamp} {first}" if stamp else f"- {first}"
    return "\n".join([head, *("  " + line if line else "" for line in rest)]) + "\n"


def remember(home: Home, agent: str, text: str, *, long_term: bool = False,
             now: datetime | None = None) -> Remembered:
    """Append ``text`` to today's daily log (or MEMORY.md), atomically; returns where."""
    body = text.strip()
    if not body:
        raise MemtuiError("nothing to remember: the text is empty")
    if "\x00" in body:
        raise MemtuiError("cannot remember text with a NUL byte")
    moment = (now or datetime.now()).astimezone()
    ws = home.workspace(agent)
    ws.mkdir(parents=True, exist_ok=True)
    root = ws.resolve(strict=True)
    if long_term:
        rel = PurePosixPath(MEMORY_FILE)
        header = "# Long-term memory\n\n"
        entry = _entry(body, None)
    else:
        rel = PurePosixPath(MEMORY_DIR, f"{moment.date().isoformat()}.md")
        header = f"# {moment.date().isoformat()}\n\n"
        entry = _entry(body, moment.strftime("%H:%M"))
    folder = root / rel.parent
    if folder != root:
        if folder.is_symlink():
            raise MemtuiError(f"refusing to write through {rel.parent}/: it is a symbolic link")
        folder.mkdir(exist_ok=True)
    target = root / rel
    with _locked(home, agent):
        if os.path.lexists(target):
            fd = _open_inside(root, rel, str(rel))
            with os.fdopen(fd, "rb") as fh:
                current = fh.read().decode("utf-8", errors="replace")
        else:
            current = header
        if current and not current.endswith("\n"):
            current += "\n"
        line = current.count("\n") + 1
        atomic_write(target, current + entry)
    _mark_index_dirty(home, agent)
    return Remembered(path=str(rel), absolute=str(target), line=line, long_term=long_term)


def _mark_index_dirty(home: Home, agent: str) -> None:
    """Tell the index a memory file changed (the cheap check would notice it anyway)."""
    path = home.index_path(agent)
    if not path.exists():
        return
    from memtui.search.index import mark_dirty

    mark_dirty(path)
