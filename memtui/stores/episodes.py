"""Episodes: timestamped events (tool calls, decisions, incidents), searchable with FTS5.

An episode says what happened when, and where it was read from (``source_file`` and
``source_entry``, the transcript message id), so any line of memory can be traced
back to the conversation that produced it.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memtui import text, timeutil
from memtui.db import Database, match_expression
from memtui.errors import MemtuiError, NotFound
from memtui.redact import scrub
from memtui.stores import audit

KINDS = ("tool_call", "decision", "incident", "rejection", "fix", "compaction", "note")
"""What an episode records; ``incident`` is a failure, ``fix`` what followed it."""


@dataclass(frozen=True)
class Episode:
    """One row of the episodes table."""

    id: int
    agent: str
    at: str
    kind: str
    summary: str
    detail: str
    session: str | None
    source_file: str | None
    source_entry: str | None
    tool: str | None
    ref: str | None
    """The tool call id of a tool_call episode, so its result can set the outcome."""
    outcome: str | None
    """ok, error or refused for a tool call; None while unknown."""
    created_at: str
    answers_entry: str | None = None
    """The assistant message a rejection or decision answers (its proposal)."""

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class NewEpisode:
    """What a caller gives to add an episode; ``at`` is when it happened (ISO 8601)."""

    agent: str
    kind: str
    summary: str
    at: str | None = None
    detail: str = ""
    session: str | None = None
    source_file: str | None = None
    source_entry: str | None = None
    tool: str | None = None
    ref: str | None = None
    outcome: str | None = None
    answers_entry: str | None = None

    def validate(self) -> None:
        if self.kind not in KINDS:
            raise MemtuiError(f"unknown episode kind {self.kind!r}; expected one of "
                              f"{', '.join(KINDS)}")
        if not self.summary.strip():
            raise MemtuiError("an episode needs a non-empty summary")


_COLUMNS = ("agent", "at", "kind", "summary", "detail", "session", "source_file",
            "source_entry", "tool", "ref", "outcome", "created_at", "answers_entry")
_INSERT = (f"INSERT INTO episodes({', '.join(_COLUMNS)}) "
           f"VALUES ({', '.join('?' * len(_COLUMNS))})")


def _values(new: NewEpisode, stamp: str) -> tuple[Any, ...]:
    at = timeutil.iso(timeutil.parse(new.at)) if new.at else stamp
    return (new.agent, at, new.kind, scrub(new.summary).strip(), scrub(new.detail), new.session,
            new.source_file, new.source_entry, new.tool, new.ref, new.outcome, stamp,
            new.answers_entry)


def get(db: Database, episode_id: int) -> Episode:
    row = db.one("SELECT * FROM episodes WHERE id = ?", (episode_id,))
    if row is None:
        raise NotFound(f"no episode {episode_id}")
    return Episode(**row)


def add(db: Database, new: NewEpisode, *, actor: str) -> Episode:
    """Add one episode."""
    return get(db, add_many(db, [new], actor=actor)[0])


def add_many(db: Database, episodes: Sequence[NewEpisode], *, actor: str) -> list[int]:
    """Add episodes in one transaction (audited as one row each); returns their ids."""
    for new in episodes:
        new.validate()
    stamp = timeutil.iso(timeutil.now())
    rows = [_values(new, stamp) for new in episodes]
    with db.write():
        ids = [db.execute(_INSERT, values) for values in rows]
        audit.record_many(
            db, actor, "episode.add",
            ((f"episode:{i}", None, {"kind": v[2], "summary": v[3], "source_entry": v[7],
                                     **({"outcome": v[10]} if v[10] else {})})
             for i, v in zip(ids, rows, strict=True)),
        )
    return ids


def stored_refs(db: Database, agent: str, refs: Iterable[str | None]) -> set[str]:
    """Which of these tool call ids the agent's tool_call episodes already hold."""
    wanted = sorted({r for r in refs if r is not None})
    if not wanted:
        return set()
    rows = db.query("SELECT DISTINCT ref FROM episodes WHERE agent = ? AND kind = 'tool_call' "
                    "AND ref IN (SELECT value FROM json_each(?))", (agent, json.dumps(wanted)))
    return {str(r["ref"]) for r in rows}


def set_outcomes(
    db: Database, agent: str, outcomes: Sequence[tuple[str, str]], *, actor: str
) -> int:
    """Record tool results: (tool call id, ok|error|refused) pairs; returns rows changed."""
    changed = 0
    with db.write():
        for ref, outcome in outcomes:
            db.execute("UPDATE episodes SET outcome = ? WHERE agent = ? AND ref = ? "
                       "AND kind = 'tool_call' AND outcome IS NOT ?",
                       (outcome, agent, ref, outcome))
            n = db.changes()
            if n:
                changed += n
                audit.record(db, actor, "episode.outcome", f"episode-ref:{ref}", None,
                             {"outcome": outcome})
    return changed


def delete(db: Database, episode_id: int, *, actor: str) -> Episode:
    """Remove an episode (callers that mean "never again" add a tombstone too)."""
    with db.write():
        before = get(db, episode_id)
        db.execute("DELETE FROM episodes WHERE id = ?", (episode_id,))
        audit.record(db, actor, "episode.delete", f"episode:{episode_id}", before.as_dict(), None)
    return before


def recent(
    db: Database, *, agent: str | None = None, kind: str | None = None,
    since: str | None = None, limit: int = 50,
) -> list[Episode]:
    """Episodes newest first, narrowed by agent, kind and a start time."""
    where: list[str] = []
    params: list[Any] = []
    if agent:
        where.append("agent = ?")
        params.append(agent)
    if kind:
        where.append("kind = ?")
        params.append(kind)
    if since:
        where.append("at >= ?")
        params.append(timeutil.iso(timeutil.parse(since)))
    sql = "SELECT * FROM episodes" + (" WHERE " + " AND ".join(where) if where else "")
    rows = db.query(sql + " ORDER BY at DESC, id DESC LIMIT ?", [*params, limit])
    return [Episode(**r) for r in rows]


def fts_query(query: str) -> str | None:
    """A safe FTS5 MATCH expression: every word quoted, all of them required.

    Users type shell commands and paths ("mix phx.server", "a-b"); FTS5 syntax
    characters in them would otherwise be operators or errors.
    """
    return match_expression(text.terms(query), "AND")


def search(
    db: Database, query: str, *, agent: str | None = None, kind: str | None = None,
    limit: int = 20,
) -> list[tuple[Episode, float]]:
    """Episodes matching ``query`` (porter-stemmed words, all required), best first.

    The score is FTS5's bm25, negated so that higher is better.
    """
    match = fts_query(query)
    if not match:
        return []
    sql = ("SELECT e.*, -bm25(episodes_fts) AS score FROM episodes_fts "
           "JOIN episodes e ON e.id = episodes_fts.rowid WHERE episodes_fts MATCH ?")
    params: list[Any] = [match]
    if agent:
        sql += " AND e.agent = ?"
        params.append(agent)
    if kind:
        sql += " AND e.kind = ?"
        params.append(kind)
    sql += " ORDER BY bm25(episodes_fts), e.at DESC LIMIT ?"
    out = []
    for row in db.query(sql, [*params, limit]):
        score = float(row.pop("score"))
        out.append((Episode(**row), score))
    return out


def for_entry(db: Database, source_entry: str) -> list[Episode]:
    """The episodes that cite one transcript message."""
    rows = db.query("SELECT * FROM episodes WHERE source_entry = ? ORDER BY id", (source_entry,))
    return [Episode(**r) for r in rows]


def counts(db: Database, agent: str | None = None) -> dict[str, int]:
    """Episodes per kind."""
    sql = "SELECT kind, count(*) FROM episodes"
    params: list[Any] = []
    if agent:
        sql += " WHERE agent = ?"
        params.append(agent)
    return {k: n for k, n in db.rows(sql + " GROUP BY kind", params)}
