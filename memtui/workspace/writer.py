"""The one writer of an agent's markdown memory (MEMORY.md and the daily logs).

**The locking rule.** Every memtui writer of an agent's memory files (``remember``, the
stenographer's daily-log sections) holds ``memory_lock(home, agent)`` while it writes, so
memtui never races itself. The agent does not take the lock: it appends to the same files
without telling anyone. A merge that only adds at the end (every daily-log section and
every ``remember``) is appended with O_APPEND, exactly as the agent appends, so the two
can never lose each other's lines. Any other change (``forget`` removing lines) is
written atomically (temp file in the folder, fsync,
rename over the file, fsync the folder), and right before the rename checks that the
file is still what it read (inode, size, mtime_ns). If the agent wrote in between, the
temp file is dropped and the read-merge is done again (at most ``MAX_ATTEMPTS`` times).
After the rename, the old file is checked once more through the descriptor that read it
(and, when someone else wrote the file in the last minute, again after
``LATE_WRITE_GRACE``): bytes an agent appended there between the check and the rename
are appended to the new file (O_APPEND, as the agent does), so they are not lost either.
An agent that keeps one descriptor open for hours is the one case this cannot cover: its
later writes go to the replaced file.

A memory file that is a symbolic link, or sits in a folder that is one, is refused: the
rename would otherwise copy whatever the link points at into the workspace.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path, PurePosixPath

from memtui.errors import MemtuiError, NotFound
from memtui.home import Home
from memtui.locks import file_lock
from memtui.workspace.layout import open_inside

MAX_ATTEMPTS = 20
"""Read-merge-rename rounds before giving up on a file the agent keeps writing to."""
LATE_WRITE_GRACE = 0.005
"""Seconds to wait after the rename before looking again for late appends to the old file
(an agent that opened it just before the rename has written by then)."""
ACTIVE_WRITER_SECONDS = 60.0
"""A file someone else changed this recently has an active writer: wait the grace."""

_left: dict[str, tuple[int, int, int, int]] = {}
"""Identity of each file as this process last left it: unchanged since means no one else
has written it (no grace to wait)."""


class Contended(MemtuiError):
    """The file kept changing under every attempt; nothing was written."""


def memory_lock(home: Home, agent: str) -> AbstractContextManager[None]:
    """Held by every memtui writer of the agent's memory files (see the module docstring)."""
    return file_lock(home.index_dir / f".{agent}.memory.lock")


def append(path: Path, header: str, merge: Callable[[str], str]) -> bool:
    """Replace ``path``'s text with ``merge(text)``; True when the file changed.

    A missing file starts as ``header``. ``merge`` may be called more than once (each
    time the agent wrote in between) and must only add to what it is given. Call it with
    ``memory_lock`` held.
    """
    folder = path.parent
    if folder.is_symlink():
        raise MemtuiError(f"refusing to write through {folder}: it is a symbolic link")
    folder.mkdir(parents=True, exist_ok=True)
    name = PurePosixPath(path.name)
    for _ in range(MAX_ATTEMPTS):
        try:
            fd = open_inside(folder, name, str(path))
        except NotFound:
            _create(path, header)
            continue
        try:
            seen = os.fstat(fd)
            data = _read_all(fd)
            seen = os.fstat(fd) if len(data) != seen.st_size else seen
            active = (_left.get(str(path)) != _identity(seen)
                      and time.time() - seen.st_mtime < ACTIVE_WRITER_SECONDS)
            current = data.decode("utf-8", errors="replace")
            merged = merge(current)
            if merged == current:
                return False
            if merged.startswith(current):
                # Only added at the end (every daily-log section, every ``remember``):
                # append those bytes with O_APPEND, as the agent does, so nothing it
                # writes at the same moment can land in a replaced file.
                if not _append_tail(path, seen, merged[len(current):]):
                    continue  # it changed since the read: merge again
                _left[str(path)] = _identity(os.stat(path))
                return True
            tmp: str | None = _write_temp(path, merged, seen)
            try:
                # The last moment to notice the agent: is the file still what was read?
                try:
                    now = os.stat(path, follow_symlinks=False)
                except FileNotFoundError:
                    continue
                if _identity(now) != _identity(seen):
                    continue  # it changed: read and merge again
                os.replace(str(tmp), path)
                tmp = None
            finally:
                if tmp is not None:
                    Path(tmp).unlink(missing_ok=True)
            try:
                _left[str(path)] = _identity(os.stat(path))
            except FileNotFoundError:
                _left.pop(str(path), None)
            _fsync_dir(folder)
            # Appends that landed in the old file between the check and the rename: the
            # agent's own lines, appended to the new file the way the agent appends.
            _carry_late_appends(fd, len(data), path, wait=active)
            return True
        finally:
            os.close(fd)
    raise Contended(f"{path} kept changing while memtui appended to it; try again")


def _append_tail(path: Path, seen: os.stat_result, tail: str) -> bool:
    """Append ``tail`` to ``path`` if it is still the file that was read, unchanged since
    (same inode and size); False when it changed, so the caller reads and merges again."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
    except OSError:  # gone, or replaced by a link: read it again
        return False
    try:
        now = os.fstat(fd)
        if (now.st_dev, now.st_ino, now.st_size) != (seen.st_dev, seen.st_ino, seen.st_size):
            return False
        data = tail.encode("utf-8")
        while data:  # a short write is continued, never repeated
            data = data[os.write(fd, data):]
        os.fsync(fd)
        return True
    finally:
        os.close(fd)


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _create(path: Path, header: str) -> None:
    """Start a new file with its header, unless the agent created it first."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except FileExistsError:
        return
    try:
        os.write(fd, header.encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def _carry_late_appends(old_fd: int, read: int, path: Path, *, wait: bool) -> None:
    """Copy what was appended to the replaced file after ``read`` bytes (through its still
    open descriptor) to the end of ``path``, with O_APPEND like the agent itself.

    Looks at once, and, when the file has an active writer (``wait``, or late bytes were
    found), again after ``LATE_WRITE_GRACE`` until a look finds nothing new.
    """
    waited = False
    for _ in range(4 * MAX_ATTEMPTS):
        size = os.fstat(old_fd).st_size
        if size > read:
            os.lseek(old_fd, read, os.SEEK_SET)
            late = _read_all(old_fd)
            read += len(late)
            out = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW)
            try:
                os.write(out, late)
                os.fsync(out)
            finally:
                os.close(out)
            _left.pop(str(path), None)
            wait, waited = True, False
            continue
        if not wait or waited:
            return
        time.sleep(LATE_WRITE_GRACE)
        waited = True


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_temp(path: Path, text: str, like: os.stat_result) -> str:
    """A fsynced temp file next to ``path`` with the mode of the file it replaces."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, like.st_mode & 0o7777)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return tmp


def _fsync_dir(folder: Path) -> None:
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
