"""The daily review: what extraction added since an agent's review mark, and proposals.

Each agent has a review mark (the watermark ``review:<agent>``, a state id): entries at or
below it have been reviewed. Above it, an entry a human accepted, edited or rejected is
recorded in ``review_decisions`` and leaves the queue; marking the agent reviewed moves
the mark to the newest entry and forgets the decisions below it.

Backtest proposals, and rejections the extractor was unsure of, have the status
``proposed``: gates, boot and search never serve them, and the unsure rejections head the
queue (an unserved refusal is one the agent may propose again). Accepting one makes it
active; rejecting one archives it and leaves a tombstone, so
extraction never brings it back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memtui import timeutil
from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.stores import audit, tombstones, watermarks
from memtui.stores import state as state_store
from memtui.stores.state import StateEntry

MARK = "review:{agent}"
_ACTIONS = {"accepted": "review.accept", "edited": "review.edit", "rejected": "review.reject"}


def mark(db: Database, agent: str) -> int:
    """The id of the newest state entry this agent's review has covered (0: never)."""
    value = watermarks.get(db, MARK.format(agent=agent))
    return int(value) if value else 0


@dataclass(frozen=True)
class Pending:
    """The review queue of one agent (or all): entries in review order, and how many in all."""

    entries: tuple[StateEntry, ...]
    total: int


_WAITING = ("(status = 'proposed' OR (status = 'active' AND source_entry IS NOT NULL)) "
            "AND id NOT IN (SELECT state_id FROM review_decisions WHERE agent = ?)")
"""Proposals, and active entries that came from a transcript message (what extraction
added), not yet decided. Each agent's queue is walked by id above its mark (a rowid
range), never joined row by row."""

_DOUBTED = "status = 'proposed' AND category = 'rejected'"
"""A rejection the extractor was unsure of: it is not served until a person accepts it,
so the agent may propose again what was refused; the queue shows these first."""

COUNT_LIMIT = 100_000
"""Counting stops here: a queue this long is shown as "at least"."""


def _agents(db: Database, agent: str | None, agents: Sequence[str] | None) -> list[str]:
    if agent:
        return [agent]
    if agents is not None:
        return list(agents)
    return [str(a) for (a,) in db.rows("SELECT DISTINCT agent FROM state ORDER BY agent")]


def pending(db: Database, agent: str | None = None, *, limit: int = 200,
            count_limit: int = COUNT_LIMIT, agents: Sequence[str] | None = None) -> Pending:
    """What waits for review, at most ``limit`` entries (of one agent, or of all: of
    ``agents``, default every agent with state), and how many in all (counted up to
    ``count_limit``).

    Proposed rejections come first, the most recently said first; then everything else,
    oldest first."""
    doubted: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    total = 0
    for name in _agents(db, agent, agents):
        floor = mark(db, name)
        # "+id": not a walk of the whole queue by id, but of the (few) proposed rejections
        # in an index by time (state_category or state_agent_status).
        doubted += db.query(
            f"SELECT * FROM state WHERE agent = ? AND {_DOUBTED} AND +id > ? AND id NOT IN "
            "(SELECT state_id FROM review_decisions WHERE agent = ?) "
            "ORDER BY created_at DESC, id DESC LIMIT ?", (name, floor, name, limit))
        rows += db.query(f"SELECT * FROM state WHERE id > ? AND agent = ? AND {_WAITING} "
                         f"AND NOT ({_DOUBTED}) ORDER BY id LIMIT ?", (floor, name, name, limit))
        total += int(db.scalar(
            f"SELECT count(*) FROM (SELECT 1 FROM state WHERE id > ? AND agent = ? AND "
            f"{_WAITING} LIMIT ?)", (floor, name, name, max(0, count_limit - total))))
    doubted.sort(key=lambda r: (str(r["created_at"]), int(r["id"])), reverse=True)
    rows.sort(key=lambda r: int(r["id"]))
    return Pending(tuple(StateEntry(**r) for r in [*doubted, *rows][:limit]), total)


def _decide(db: Database, entry: StateEntry, decision: str, actor: str) -> None:
    db.execute("INSERT OR REPLACE INTO review_decisions(state_id, agent, decision, actor, at) "
               "VALUES (?,?,?,?,?)", (entry.id, entry.agent, decision, audit.check_actor(actor),
                                       timeutil.iso(timeutil.now())))
    audit.record(db, actor, _ACTIONS[decision], f"state:{entry.id}", {"status": entry.status},
                 {"decision": decision})


def _set_status(db: Database, entry: StateEntry, status: str, actor: str, action: str) -> None:
    db.execute("UPDATE state SET status = ?, updated_at = ? WHERE id = ?",
               (status, timeutil.iso(timeutil.now()), entry.id))
    audit.record(db, actor, action, f"state:{entry.id}", {"status": entry.status},
                 {"status": status})


def propose(db: Database, entry_id: int, *, actor: str) -> StateEntry:
    """Turn an active entry into a proposal (backtest's lessons wait for a human)."""
    with db.write():
        entry = state_store.get(db, entry_id)
        if entry.status != "active":
            raise MemtuiError(f"state entry {entry_id} is {entry.status}; only an active entry "
                              "can become a proposal")
        _set_status(db, entry, "proposed", actor, "state.propose")
        return state_store.get(db, entry_id)


def accept(db: Database, entry_id: int, *, actor: str) -> StateEntry:
    """The entry is right: a proposal becomes active; either way it leaves the queue."""
    with db.write():
        entry = state_store.get(db, entry_id)
        if entry.status not in ("active", "proposed"):
            raise MemtuiError(f"state entry {entry_id} is {entry.status}; nothing to accept")
        if entry.status == "proposed":
            _set_status(db, entry, "active", actor, "state.accept")
        _decide(db, entry, "accepted", actor)
        return state_store.get(db, entry_id)


def edit(db: Database, entry_id: int, summary: str, *, actor: str) -> StateEntry:
    """Correct the entry's words (accepting a proposal with them) and take it off the queue."""
    with db.write():
        entry = state_store.get(db, entry_id)
        if entry.status not in ("active", "proposed"):
            raise MemtuiError(f"state entry {entry_id} is {entry.status}; it cannot be edited "
                              "in review")
        if entry.status == "proposed":
            _set_status(db, entry, "active", actor, "state.accept")
        state_store.update(db, entry_id, actor=actor, summary=summary)
        _decide(db, entry, "edited", actor)
        return state_store.get(db, entry_id)


def reject(db: Database, entry_id: int, *, actor: str,
           reason: str = "rejected in review") -> tombstones.Tombstone:
    """The entry is wrong: archive it and bury it, so extraction never recreates it."""
    with db.write():
        entry = state_store.get(db, entry_id)
        if entry.status == "proposed":
            _set_status(db, entry, "archived", actor, "state.archive")
        stone = tombstones.bury_state(db, entry_id, actor=actor, reason=reason)
        _decide(db, entry, "rejected", actor)
        return stone


def mark_reviewed(db: Database, agent: str, *, actor: str, upto: int | None = None) -> int:
    """Move the agent's mark to ``upto`` (default: its newest entry); returns the new mark."""
    with db.write():
        before = mark(db, agent)
        newest = int(db.scalar("SELECT coalesce(max(id), 0) FROM state WHERE agent = ?",
                               (agent,)))
        target = newest if upto is None else min(upto, newest)
        if target <= before:
            return before
        watermarks.put(db, MARK.format(agent=agent), str(target))
        db.execute("DELETE FROM review_decisions WHERE agent = ? AND state_id <= ?",
                   (agent, target))
        audit.record(db, actor, "review.mark", f"review:{agent}", {"mark": before},
                     {"mark": target})
        return target


def decisions(db: Database, agent: str) -> dict[int, str]:
    """Decisions recorded above the agent's mark, by state id."""
    rows: list[tuple[Any, ...]] = db.rows(
        "SELECT state_id, decision FROM review_decisions WHERE agent = ?", (agent,))
    return {int(i): str(d) for i, d in rows}
