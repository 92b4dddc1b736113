"""The context engine's records: one flush per compaction cycle, and the compaction flight
recorder (the agent's own compactions and memtui's), plus the reads they need."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memtui import timeutil
from memtui.db import Database, in_batches
from memtui.stores import audit


@dataclass(frozen=True)
class FlushRecord:
    id: int
    agent: str
    session: str
    cycle: int
    at: str
    tokens: int
    status: str
    captured: dict[str, Any]


@dataclass(frozen=True)
class CompactionRecord:
    """One compaction: who did it, the tokens before and after, what was flushed, and each
    decision and rejection of the compacted region with whether memory has it."""

    id: int
    agent: str
    session: str
    entry: str
    by: str
    at: str
    tokens_before: int | None
    tokens_after: int | None
    first_kept: str | None
    applied: bool
    output: str | None
    flushed: dict[str, Any]
    items: list[dict[str, Any]]


@dataclass(frozen=True)
class RegionEntry:
    """A state entry or tombstone made from a message of a transcript region."""

    ref: str
    category: str
    summary: str
    status: str
    source_entry: str


def flush_for_cycle(db: Database, agent: str, session: str, cycle: int) -> FlushRecord | None:
    row = db.one("SELECT * FROM context_flushes WHERE agent = ? AND session = ? AND cycle = ?",
                 (agent, session, cycle))
    return _flush(row) if row else None


def _flush(row: dict[str, Any]) -> FlushRecord:
    return FlushRecord(row["id"], row["agent"], row["session"], row["cycle"], row["at"],
                       row["tokens"], row["status"], json.loads(row["captured"]))


def record_flush(db: Database, *, agent: str, session: str, cycle: int, tokens: int,
                 status: str, captured: dict[str, Any], actor: str) -> FlushRecord:
    """Record the flush of a compaction cycle (a second one for the cycle replaces it)."""
    with db.write():
        db.execute("INSERT INTO context_flushes(agent, session, cycle, at, tokens, status, "
                   "captured) VALUES (?,?,?,?,?,?,?) ON CONFLICT(agent, session, cycle) DO "
                   "UPDATE SET at = excluded.at, tokens = excluded.tokens, "
                   "status = excluded.status, captured = excluded.captured",
                   (agent, session, cycle, timeutil.iso(timeutil.now()), tokens, status,
                    json.dumps(captured, sort_keys=True)))
        record = flush_for_cycle(db, agent, session, cycle)
        assert record is not None
        audit.record(db, actor, "context.flush", f"session:{session}", None,
                     {"agent": agent, "cycle": cycle, "tokens": tokens, "status": status})
    return record


def _compaction(row: dict[str, Any]) -> CompactionRecord:
    return CompactionRecord(
        row["id"], row["agent"], row["session"], row["entry"], row["by"], row["at"],
        row["tokens_before"], row["tokens_after"], row["first_kept"], bool(row["applied"]),
        row["output"], json.loads(row["flushed"]), json.loads(row["items"]))


def record_compaction(db: Database, *, agent: str, session: str, entry: str, by: str,
                      at: str | None, tokens_before: int | None, tokens_after: int | None,
                      first_kept: str | None, applied: bool, output: str | None,
                      flushed: dict[str, Any], items: Sequence[dict[str, Any]],
                      actor: str) -> tuple[CompactionRecord, bool]:
    """Add a compaction to the flight recorder; (record, False) when it was there already."""
    with db.write():
        row = db.one("SELECT * FROM compactions WHERE session = ? AND entry = ?",
                     (session, entry))
        if row is not None:
            return _compaction(row), False
        new_id = db.execute(
            "INSERT INTO compactions(agent, session, entry, by, at, tokens_before, "
            "tokens_after, first_kept, applied, output, flushed, items) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
            (agent, session, entry, by, at or timeutil.iso(timeutil.now()), tokens_before,
             tokens_after, first_kept, int(applied), output,
             json.dumps(flushed, sort_keys=True), json.dumps(list(items), sort_keys=True)))
        audit.record(db, actor, "context.compaction", f"compaction:{new_id}", None,
                     {"agent": agent, "session": session, "entry": entry, "by": by,
                      "tokens_before": tokens_before, "tokens_after": tokens_after})
        saved = db.one("SELECT * FROM compactions WHERE id = ?", (new_id,))
        assert saved is not None
    return _compaction(saved), True


def compactions(db: Database, agent: str | None = None, limit: int = 50
                ) -> list[CompactionRecord]:
    where, params = ("WHERE agent = ?", [agent]) if agent else ("", [])
    rows = db.query(f"SELECT * FROM compactions {where} ORDER BY at DESC, id DESC LIMIT ?",
                    [*params, limit])
    return [_compaction(r) for r in rows]


def region_entries(db: Database, agent: str, entries: Sequence[str],
                   categories: Sequence[str] = ("decision", "rejected")) -> list[RegionEntry]:
    """State entries of ``categories`` and tombstones made from the given message ids."""
    if not entries:
        return []
    out: list[RegionEntry] = []
    for marks, chunk in in_batches(list(dict.fromkeys(entries))):
        cats = ",".join("?" * len(categories))
        for r in db.query(f"SELECT id, category, summary, status, source_entry FROM state "
                          f"WHERE agent = ? AND source_entry IN ({marks}) AND category IN "
                          f"({cats}) ORDER BY id", [agent, *chunk, *categories]):
            out.append(RegionEntry(f"state:{r['id']}", r["category"], r["summary"],
                                   r["status"], r["source_entry"]))
        for r in db.query(f"SELECT id, kind, text, source_entry FROM tombstones WHERE "
                          f"agent = ? AND layer = 'state' AND source_entry IN ({marks}) AND "
                          f"kind IN ({cats}) ORDER BY id", [agent, *chunk, *categories]):
            out.append(RegionEntry(f"tombstone:{r['id']}", r["kind"], r["text"], "forgotten",
                                   r["source_entry"]))
    return out
