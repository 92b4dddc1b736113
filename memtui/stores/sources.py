"""Transcript sources: files or globs registered per agent, and the files they expand to."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass
from pathlib import Path

from memtui import timeutil
from memtui.db import Database
from memtui.errors import MemtuiError, NotFound
from memtui.stores import audit
from memtui.transcripts.names import is_side_file

FORMATS = ("auto", "openclaw", "claude-code", "generic")


@dataclass(frozen=True)
class Source:
    id: int
    pattern: str
    """An absolute file path or glob."""
    format: str
    agent: str
    added_at: str

    @property
    def is_glob(self) -> bool:
        return glob.has_magic(self.pattern)

    def files(self) -> list[Path]:
        """The regular files the source names now, sorted (a glob picks up new files).

        A glob leaves out the side files agents keep beside their transcripts (traces,
        checkpoint copies, locks: ``transcripts.names.is_side_file``).
        """
        if self.is_glob:
            found = [p for p in glob.glob(self.pattern, recursive=True)
                     if not is_side_file(Path(p))]
        else:
            found = [self.pattern] if os.path.exists(self.pattern) else []
        return sorted(Path(p) for p in found if os.path.isfile(p))


def add(db: Database, pattern: str, *, agent: str, fmt: str = "auto", actor: str) -> Source:
    """Register a file or glob (made absolute) for an agent; adding it twice is an error."""
    if fmt not in FORMATS:
        raise MemtuiError(f"unknown transcript format {fmt!r}; expected {', '.join(FORMATS)}")
    absolute = os.path.abspath(os.path.expanduser(pattern))
    if not glob.has_magic(absolute) and not os.path.isfile(absolute):
        raise NotFound(f"no transcript file at {absolute}")
    with db.write():
        if db.scalar("SELECT 1 FROM sources WHERE pattern = ? AND agent = ?", (absolute, agent)):
            raise MemtuiError(f"{absolute} is already a source of agent {agent}")
        source_id = db.execute(
            "INSERT INTO sources(pattern, format, agent, added_at) VALUES (?,?,?,?)",
            (absolute, fmt, agent, timeutil.iso(timeutil.now())),
        )
        source = get(db, source_id)
        audit.record(db, actor, "source.add", f"source:{source_id}", None,
                     {"pattern": absolute, "format": fmt, "agent": agent})
    return source


def get(db: Database, source_id: int) -> Source:
    row = db.one("SELECT * FROM sources WHERE id = ?", (source_id,))
    if row is None:
        raise NotFound(f"no source {source_id}")
    return Source(**row)


def find(db: Database, pattern_or_id: str) -> Source:
    """A source by id or by its (absolute) pattern."""
    if pattern_or_id.isdigit():
        return get(db, int(pattern_or_id))
    absolute = os.path.abspath(os.path.expanduser(pattern_or_id))
    row = db.one("SELECT * FROM sources WHERE pattern = ? ORDER BY id LIMIT 1", (absolute,))
    if row is None:
        raise NotFound(f"no source {pattern_or_id!r} (list them: memtui sources list)")
    return Source(**row)


def list_sources(db: Database, agent: str | None = None) -> list[Source]:
    sql, params = ("SELECT * FROM sources WHERE agent = ? ORDER BY id", (agent,)) if agent else (
        "SELECT * FROM sources ORDER BY id", ())
    return [Source(**r) for r in db.query(sql, params)]


def remove(db: Database, source_id: int, *, actor: str) -> Source:
    """Forget a source and its per-file watermarks; what was extracted from it stays."""
    with db.write():
        source = get(db, source_id)
        db.execute("DELETE FROM source_files WHERE source_id = ?", (source_id,))
        db.execute("DELETE FROM sources WHERE id = ?", (source_id,))
        audit.record(db, actor, "source.remove", f"source:{source_id}",
                     {"pattern": source.pattern, "agent": source.agent}, None)
    return source
