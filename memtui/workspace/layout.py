"""Where an agent's markdown memory lives: its file names, the day rule, and safe reading.

The canonical, human-editable memory of an agent is ``MEMORY.md`` (curated long-term
facts) and ``memory/YYYY-MM-DD.md`` (the daily log, append-only) in its workspace.

**The day rule.** A daily log is named after the agent's local day: the date of the
moment in the box's local time zone (the ``TZ`` environment variable, else the system
zone), the way a person reading ``memory/`` thinks of "today". Everything that writes a
daily log (``remember``, the stenographer) names the file with ``local_day``, so a day's
memory is never split across two files near midnight.

Reading (``open_inside``) is reachable by agents (over MCP and hooks), so it opens each
path component relative to the one before with ``O_NOFOLLOW`` (a symlink swapped in
between a check and the open is refused, not followed), and regular files only: the
classes of bugs of CVE-2025-53109 and CVE-2025-53110.
"""

from __future__ import annotations

import os
import stat
from datetime import datetime
from pathlib import Path, PurePosixPath

from memtui.errors import MemtuiError, NotFound
from memtui.home import Home

MEMORY_FILE = "MEMORY.md"
MEMORY_DIR = "memory"
LONG_TERM_HEADER = "# Long-term memory\n\n"


def local_day(moment: datetime | None = None) -> str:
    """The agent's day of ``moment`` (now if None), YYYY-MM-DD; naive means local time."""
    return (moment or datetime.now()).astimezone().date().isoformat()


def daily_log(day: str) -> PurePosixPath:
    """The daily log of ``day``, relative to the workspace."""
    return PurePosixPath(MEMORY_DIR, f"{day}.md")


def daily_header(day: str) -> str:
    """The first lines of a new daily log."""
    return f"# {day}\n\n"


def daily_log_path(home: Home, agent: str, day: str) -> Path:
    return home.workspace(agent) / daily_log(day)


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


def existing_workspace(home: Home, agent: str) -> Path:
    """The agent's workspace, resolved; NotFound when it does not exist."""
    ws = home.workspace(agent)
    if not ws.is_dir():
        raise NotFound(f"agent {agent} has no workspace at {ws}")
    return ws.resolve(strict=True)


def open_inside(root: Path, rel: PurePosixPath, display: str) -> int:
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
