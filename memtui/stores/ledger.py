"""The extraction ledger: per-file watermarks (``source_files``) and extracted turns.

A watermark says how far the stenographer got in one transcript file and what the file
looked like then (device, inode, size, the hash of its first bytes, the reader's state).
The turn ledger (``extracted_turns``, keyed by agent, session and message id) says which
messages were already extracted, so a file read again from the start, or the same
session seen in two files, duplicates nothing.

The writers are called inside the stenographer's batch transaction: a watermark never
passes data that was not written. No audit rows: these are bookkeeping of a derived
process, written with every batch, and the memory they cover is audited itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memtui import timeutil
from memtui.db import Database, in_batches


@dataclass(frozen=True)
class Watermark:
    """One row of ``source_files``: where a run stopped in a file, and the file then."""

    path: str
    source_id: int
    format: str | None
    offset: int
    line: int
    last_entry_id: str | None
    device: int | None
    inode: int | None
    size: int | None
    head_hash: str | None
    reader_state: str | None
    failures: int
    last_error: str | None

    @property
    def state(self) -> dict[str, Any]:
        """The reader state as a dict ({} when absent or unreadable)."""
        try:
            data = json.loads(self.reader_state) if self.reader_state else {}
        except ValueError:
            return {}
        return data if isinstance(data, dict) else {}


@dataclass(frozen=True)
class Advance:
    """A watermark moved forward after a batch was written."""

    path: str
    source_id: int
    format: str
    offset: int
    line: int
    last_entry_id: str | None
    device: int
    inode: int
    size: int
    head_hash: str
    reader_state: dict[str, Any]


def watermarks(db: Database) -> dict[str, Watermark]:
    """Every file's watermark, by path."""
    rows = db.query("SELECT path, source_id, format, offset, line, last_entry_id, device, "
                    "inode, size, head_hash, reader_state, failures, last_error FROM source_files")
    return {r["path"]: Watermark(**r) for r in rows}


def offset(db: Database, path: str) -> int | None:
    """The watermark's offset in a file (None: the file has none)."""
    value = db.scalar("SELECT offset FROM source_files WHERE path = ?", (path,))
    return None if value is None else int(value)


def advance(db: Database, mark: Advance) -> None:
    """Move a file's watermark and clear its failures; call inside the batch's transaction."""
    db.execute(
        "INSERT INTO source_files(path, source_id, format, offset, line, last_entry_id, "
        "device, inode, size, head_hash, reader_state, failures, last_error, updated_at) "
        "VALUES (?,?,?,?,?,?,?,?,?,?,?,0,NULL,?) ON CONFLICT(path) DO UPDATE SET "
        "source_id = excluded.source_id, format = excluded.format, offset = excluded.offset, "
        "line = excluded.line, last_entry_id = excluded.last_entry_id, "
        "device = excluded.device, inode = excluded.inode, size = excluded.size, "
        "head_hash = excluded.head_hash, reader_state = excluded.reader_state, "
        "failures = 0, last_error = NULL, updated_at = excluded.updated_at",
        (mark.path, mark.source_id, mark.format, mark.offset, mark.line, mark.last_entry_id,
         mark.device, mark.inode, mark.size, mark.head_hash, json.dumps(mark.reader_state),
         timeutil.iso(timeutil.now())))


def record_failure(db: Database, path: str, source_id: int, message: str) -> None:
    """Count a failed run on a file (its offset stays), with the reason, in one transaction."""
    with db.write():
        db.execute(
            "INSERT INTO source_files(path, source_id, offset, line, failures, last_error, "
            "updated_at) VALUES (?,?,?,?,?,?,?) ON CONFLICT(path) DO UPDATE SET "
            "failures = failures + 1, last_error = excluded.last_error, "
            "updated_at = excluded.updated_at",
            (path, source_id, 0, 1, 1, message[:1000], timeutil.iso(timeutil.now())))


@dataclass(frozen=True)
class LedgerEntry:
    """One extracted message."""

    agent: str
    session: str
    entry: str
    source_file: str
    at: str


def record_turns(db: Database, entries: Iterable[LedgerEntry]) -> None:
    """Add messages to the ledger (already known ones are kept as they were); call inside
    the batch's transaction."""
    db.executemany(
        "INSERT OR IGNORE INTO extracted_turns(agent, session, entry, source_file, at) "
        "VALUES (?,?,?,?,?)", [(e.agent, e.session, e.entry, e.source_file, e.at)
                               for e in entries])


def not_yet_extracted(db: Database, agent: str, keys: Sequence[tuple[str, str]]
                      ) -> set[tuple[str, str]]:
    """The (session, message id) pairs of ``keys`` the agent's ledger does not hold."""
    fresh = set(keys)
    by_session: dict[str, list[str]] = {}
    for session, entry in fresh:
        by_session.setdefault(session, []).append(entry)
    for session, entries in by_session.items():
        for marks, chunk in in_batches(entries):
            for (entry,) in db.rows(
                    f"SELECT entry FROM extracted_turns WHERE agent = ? AND session = ? "
                    f"AND entry IN ({marks})", [agent, session, *chunk]):
                fresh.discard((session, entry))
    return fresh
