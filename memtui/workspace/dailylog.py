"""The daily log: what each extraction captured, appended to the agent's memory/YYYY-MM-DD.md.

The markdown is written after the database commit, from rows queued in
``daily_log_pending`` inside the same transaction as the memory they describe. Each
appended section ends with an HTML comment naming its queue id, so a crash between
writing the file and clearing the queue never appends a section twice, and a crash
before writing leaves the section queued for the next run.

The agent appends to the same file, without telling anyone. ``append_sections`` writes
atomically (temp file in the folder, fsync, rename over the file, fsync the folder), and
right before the rename checks that the file is still what it read (inode, size,
mtime_ns). If the agent wrote in between, the temp file is dropped and the read-merge is
done again (at most ``MAX_ATTEMPTS`` times). After the rename, the old file is checked
once more through the descriptor that read it (and, when someone else wrote the file
in the last minute, again after ``LATE_WRITE_GRACE``): bytes an agent appended there
between the check and the rename are appended to the new file (O_APPEND, as the agent
does), so they are not lost either. An agent that keeps one
descriptor open for hours is the one case this cannot cover: its later writes go to
the replaced file.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from memtui import timeutil
from memtui.db import Database
from memtui.home import Home

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


class Contended(OSError):
    """The file kept changing under every attempt; the sections stay queued."""


def marker(pending_id: int) -> str:
    return f"<!-- memtui:extract {pending_id} -->"


def queue(db: Database, agent: str, day: str, lines: list[str], heading: str) -> None:
    """Queue a section for ``day``'s file; call inside the extraction's transaction."""
    if not lines:
        return
    text = f"## {heading}\n\n" + "\n".join(lines) + "\n"
    db.execute("INSERT INTO daily_log_pending(agent, day, text, created_at) VALUES (?,?,?,?)",
               (agent, day, text, timeutil.iso(timeutil.now())))


def path_for(home: Home, agent: str, day: str) -> Path:
    return home.workspace(agent) / "memory" / f"{day}.md"


def flush(home: Home, db: Database) -> list[Path]:
    """Append every queued section to its file (atomically), then clear the queue.

    Sections whose file could not be written (it kept changing) stay queued for the next
    run; the markers make a retry safe.
    """
    rows = db.query("SELECT id, agent, day, text FROM daily_log_pending ORDER BY id")
    if not rows:
        return []
    by_file: dict[tuple[str, str], list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        by_file[(str(row["agent"]), str(row["day"]))].append(row)
    written: list[Path] = []
    done: list[int] = []
    for (agent, day), sections in by_file.items():
        path = path_for(home, agent, day)
        try:
            if append_sections(path, f"# {day}\n",
                               [(int(str(r["id"])), str(r["text"])) for r in sections]):
                written.append(path)
        except Contended:
            continue
        done += [int(str(r["id"])) for r in sections]
    if done:
        with db.write():
            db.executemany("DELETE FROM daily_log_pending WHERE id = ?", [(i,) for i in done])
    return written


def _merge(current: str, sections: Sequence[tuple[int, str]]) -> str:
    for pending_id, text in sections:
        tag = marker(pending_id)
        if tag in current:
            continue
        if not current.endswith("\n"):
            current += "\n"
        current += f"\n{text}{tag}\n"
    return current


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def append_sections(path: Path, header: str, sections: Sequence[tuple[int, str]]) -> bool:
    """Add the sections (queue id, text) not yet in ``path``; True when the file changed.

    See the module docstring for how an agent writing the same file is never overwritten.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    for _ in range(MAX_ATTEMPTS):
        try:
            fd = os.open(path, os.O_RDONLY)
        except FileNotFoundError:
            _create(path, header)
            continue
        try:
            seen = os.fstat(fd)
            data = _read_all(fd)
            seen = os.fstat(fd) if len(data) != seen.st_size else seen
            active = (_left.get(str(path)) != _identity(seen)
                      and time.time() - seen.st_mtime < ACTIVE_WRITER_SECONDS)
            current = data.decode("utf-8", errors="replace")
            merged = _merge(current, sections)
            if merged == current:
                return False
            tmp: str | None = _write_temp(path, merged, seen)
            try:
                # The last moment to notice the agent: is the file still what was read?
                try:
                    now = os.stat(path)
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
            _fsync_dir(path.parent)
            # Appends that landed in the old file between the check and the rename: the
            # agent's own lines, appended to the new file the way the agent appends.
            _carry_late_appends(fd, len(data), path, wait=active)
            return True
        finally:
            os.close(fd)
    raise Contended(f"{path} kept changing while memtui appended to it")


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
            out = os.open(path, os.O_WRONLY | os.O_APPEND)
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
