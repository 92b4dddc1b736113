"""Tombstones: what a human deleted, forgot or rejected, so extraction never recreates it.

A tombstone names the store of what was buried (state, fact, episode), a kind (the
state category, the fact key, the episode kind), the text that was buried and the
transcript message it came from. The stenographer drops a candidate that matches one of
the same agent and store:

- the same normalised text (whatever the kind);
- or, of the same kind, a text at least ``SIMILARITY`` (0.85) similar after normalising
  (``memtui.text.similarity``) that has the same numbers: "Pin the events DB to
  Postgres 15" stays buried with "pin the events database to Postgres 15", while
  "... to Postgres 16" is a new decision, not the buried one;
- or, of the same kind and from the buried entry's own message, a text at least
  ``SAME_MESSAGE_SIMILARITY`` (0.6) similar (a second reading of the same words).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memtui import text, timeutil
from memtui.db import Database
from memtui.errors import MemtuiError, NotFound
from memtui.stores import audit, episodes, facts, state

STORES = ("state", "fact", "episode")
"""The stores a tombstone can bury from (`memtui forget STORE ID`)."""


@dataclass(frozen=True)
class Tombstone:
    id: int
    agent: str
    layer: str
    """The store of the buried item, one of ``STORES``. (Its first name, kept in the
    database column and the JSON that scripts read; it is not a memory layer.)"""
    kind: str
    text: str
    norm: str
    source_file: str | None
    source_entry: str | None
    reason: str
    actor: str
    created_at: str

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def norm_text(store: str, kind: str, value: str) -> str:
    """The matching key of a buried text (facts match on key and value together)."""
    if store == "fact":
        return text.normalise(f"{facts.normalise_key(kind)} {value}")
    return text.normalise(value)


def add(
    db: Database, *, agent: str, store: str, kind: str, text_: str, actor: str,
    reason: str = "", source_file: str | None = None, source_entry: str | None = None,
) -> Tombstone:
    """Bury a text; nothing matching it is extracted again for this agent."""
    if store not in STORES:
        raise MemtuiError(f"unknown tombstone store {store!r}; expected {', '.join(STORES)}")
    if store == "fact":
        kind = facts.normalise_key(kind)
    stamp = timeutil.iso(timeutil.now())
    with db.write():
        tid = db.execute(
            "INSERT INTO tombstones(agent, layer, kind, text, norm, source_file, source_entry, "
            "reason, actor, created_at) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (agent, store, kind, text_, norm_text(store, kind, text_), source_file,
             source_entry, reason, audit.check_actor(actor), stamp),
        )
        stone = get(db, tid)
        audit.record(db, actor, "tombstone.add", f"tombstone:{tid}", None, stone.as_dict())
    return stone


def get(db: Database, tombstone_id: int) -> Tombstone:
    row = db.one("SELECT * FROM tombstones WHERE id = ?", (tombstone_id,))
    if row is None:
        raise NotFound(f"no tombstone {tombstone_id}")
    return Tombstone(**row)


def remove(db: Database, tombstone_id: int, *, actor: str) -> Tombstone:
    """Lift a tombstone: extraction may produce the text again."""
    with db.write():
        stone = get(db, tombstone_id)
        db.execute("DELETE FROM tombstones WHERE id = ?", (tombstone_id,))
        audit.record(db, actor, "tombstone.remove", f"tombstone:{tombstone_id}",
                     stone.as_dict(), None)
    return stone


def list_tombstones(db: Database, agent: str | None = None, limit: int = 200) -> list[Tombstone]:
    sql, params = ("SELECT * FROM tombstones WHERE agent = ? ORDER BY id DESC LIMIT ?",
                   (agent, limit)) if agent else (
        "SELECT * FROM tombstones ORDER BY id DESC LIMIT ?", (limit,))
    return [Tombstone(**r) for r in db.query(sql, params)]


def bury_state(db: Database, entry_id: int, *, actor: str, reason: str = "") -> Tombstone:
    """Archive a state entry and bury it: a human deleted it or rejected it in review."""
    with db.write():
        entry = state.get(db, entry_id)
        if entry.status in ("active", "completed"):
            state.archive(db, entry_id, actor=actor)
        return add(db, agent=entry.agent, store="state", kind=entry.category,
                   text_=entry.summary, actor=actor, reason=reason,
                   source_file=entry.source_file, source_entry=entry.source_entry)


def bury_fact(db: Database, fact_id: int, *, actor: str, reason: str = "") -> Tombstone:
    """Forget a fact and bury its key and value."""
    with db.write():
        fact = facts.forget(db, fact_id, actor=actor)
        return add(db, agent=fact.agent, store="fact", kind=fact.key, text_=fact.value,
                   actor=actor, reason=reason, source_file=fact.source_file,
                   source_entry=fact.source_entry)


def bury_episode(db: Database, episode_id: int, *, actor: str, reason: str = "") -> Tombstone:
    """Delete an episode and bury it."""
    with db.write():
        ep = episodes.delete(db, episode_id, actor=actor)
        return add(db, agent=ep.agent, store="episode", kind=ep.kind, text_=ep.summary,
                   actor=actor, reason=reason, source_file=ep.source_file,
                   source_entry=ep.source_entry)


SAME_MESSAGE_SIMILARITY = 0.6
"""A candidate from a buried entry's own message matches it at this text similarity (an
extractor may word the same thing a little differently on a second reading)."""
SIMILARITY = 0.85
"""A candidate of the same kind from any message matches a tombstone at this normalised
similarity, if its numbers are the same (a small rewording is not a new memory)."""


def _numbers(norm: str) -> frozenset[str]:
    return frozenset(w for w in norm.split() if any(ch.isdigit() for ch in w))


class Graveyard:
    """The tombstones of one agent held in memory, for matching many candidates fast."""

    def __init__(self, stones: Iterable[Tombstone] = ()) -> None:
        self._norms: set[tuple[str, str]] = set()
        self._entries: dict[tuple[str, str, str], list[str]] = {}
        self._kinds: dict[tuple[str, str], list[tuple[str, frozenset[str]]]] = {}
        for stone in stones:
            self.add(stone)

    @classmethod
    def load(cls, db: Database, agent: str) -> Graveyard:
        rows = db.query("SELECT * FROM tombstones WHERE agent = ?", (agent,))
        return cls(Tombstone(**r) for r in rows)

    def add(self, stone: Tombstone) -> None:
        self._norms.add((stone.layer, stone.norm))
        self._kinds.setdefault((stone.layer, stone.kind), []).append(
            (stone.norm, _numbers(stone.norm)))
        if stone.source_entry:
            key = (stone.layer, stone.kind, stone.source_entry)
            self._entries.setdefault(key, []).append(stone.norm)

    def __len__(self) -> int:
        return len(self._norms)

    def buried(self, store: str, kind: str, value: str, source_entry: str | None) -> bool:
        """True when a candidate matches a tombstone: the same normalised text, a text of
        the same kind at least ``SIMILARITY`` similar with the same numbers, or a text of
        the same kind from the same message at least ``SAME_MESSAGE_SIMILARITY`` similar."""
        if not self._norms:
            return False
        if store == "fact":
            kind = facts.normalise_key(kind)
        norm = norm_text(store, kind, value)
        if (store, norm) in self._norms:
            return True
        numbers: frozenset[str] | None = None
        for buried, buried_numbers in self._kinds.get((store, kind), ()):
            if numbers is None:
                numbers = _numbers(norm)
            if numbers == buried_numbers and text.ratio_at_least(norm, buried, SIMILARITY):
                return True
        if source_entry:
            for buried in self._entries.get((store, kind, source_entry), ()):
                if text.similarity(norm, buried) >= SAME_MESSAGE_SIMILARITY:
                    return True
        return False
