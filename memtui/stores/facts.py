"""Facts: key → value pairs per agent, where a new value supersedes the old one.

At most one fact per (agent, key) is current (``superseded_at IS NULL``); setting a
different value closes the current one (``superseded_at``, ``superseded_by``) and the
chain answers "what did I use before?".
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from memtui import text, timeutil
from memtui.db import Database
from memtui.errors import MemtuiError, NotFound
from memtui.redact import scrub
from memtui.stores import audit

_KEY_SPACE = re.compile(r"[^0-9a-z._/'-]+")


@dataclass(frozen=True)
class Fact:
    """One row of the facts table."""

    id: int
    agent: str
    key: str
    value: str
    created_at: str
    superseded_at: str | None
    superseded_by: int | None
    source_file: str | None
    source_entry: str | None
    confidence: float

    @property
    def current(self) -> bool:
        return self.superseded_at is None

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class FactChange:
    """What ``put`` did: "added", "superseded" (``previous`` closed), "unchanged", or
    "stale" (the value is older than the current one, so it does not replace it)."""

    action: str
    fact: Fact
    previous: Fact | None = None


def normalise_key(key: str) -> str:
    """Keys compare lowercased, with runs of other characters as one space."""
    return " ".join(_KEY_SPACE.sub(" ", key.lower()).split())


def same_value(a: str, b: str) -> bool:
    """Values equal after normalising ("Postgres 16" == "postgres 16.")."""
    return text.normalise(a) == text.normalise(b)


def _fact(row: dict[str, Any]) -> Fact:
    return Fact(**row)


def get(db: Database, fact_id: int) -> Fact:
    row = db.one("SELECT * FROM facts WHERE id = ?", (fact_id,))
    if row is None:
        raise NotFound(f"no fact {fact_id}")
    return _fact(row)


def current(db: Database, agent: str, key: str) -> Fact | None:
    """The current value of a key, or None."""
    row = db.one("SELECT * FROM facts WHERE agent = ? AND key = ? AND superseded_at IS NULL",
                 (agent, normalise_key(key)))
    return _fact(row) if row else None


def put(
    db: Database, agent: str, key: str, value: str, *, actor: str,
    source_file: str | None = None, source_entry: str | None = None,
    confidence: float = 1.0, at: str | None = None,
) -> FactChange:
    """Set a key's value: add it, supersede a different current value, or change nothing."""
    norm = normalise_key(scrub(key))
    value = scrub(value).strip()
    if not norm:
        raise MemtuiError("a fact needs a non-empty key")
    if not value:
        raise MemtuiError(f"fact {norm!r} needs a non-empty value")
    if not 0.0 <= confidence <= 1.0:
        raise MemtuiError(f"confidence must be between 0 and 1, not {confidence}")
    stamp = timeutil.iso(timeutil.parse(at)) if at else timeutil.iso(timeutil.now())
    with db.write():
        old = current(db, agent, norm)
        if old is not None and same_value(old.value, value):
            return FactChange("unchanged", old)
        if old is not None and stamp < old.created_at:
            # Read from an older transcript than the current value came from.
            return FactChange("stale", old)
        if old is not None:
            # Close the old one first: the partial unique index allows one current row.
            db.execute("UPDATE facts SET superseded_at = ? WHERE id = ?", (stamp, old.id))
        fact_id = db.execute(
            "INSERT INTO facts(agent, key, value, created_at, source_file, source_entry, "
            "confidence) VALUES (?,?,?,?,?,?,?)",
            (agent, norm, value, stamp, source_file, source_entry, confidence),
        )
        fact = get(db, fact_id)
        audit.record(db, actor, "fact.add", f"fact:{fact_id}", None,
                     {"key": norm, "value": value, "source_entry": source_entry})
        if old is None:
            return FactChange("added", fact)
        db.execute("UPDATE facts SET superseded_by = ? WHERE id = ?", (fact_id, old.id))
        audit.record(db, actor, "fact.supersede", f"fact:{old.id}",
                     {"value": old.value, "superseded_by": None},
                     {"superseded_by": fact_id, "value": value})
        return FactChange("superseded", fact, get(db, old.id))


def history(db: Database, agent: str, key: str) -> list[Fact]:
    """Every value a key has had, oldest first; the last one is current."""
    rows = db.query("SELECT * FROM facts WHERE agent = ? AND key = ? ORDER BY created_at, id",
                    (agent, normalise_key(key)))
    return [_fact(r) for r in rows]


def previous(db: Database, agent: str, key: str) -> Fact | None:
    """The value used before the current one ("what did I use before?")."""
    chain = history(db, agent, key)
    return chain[-2] if len(chain) >= 2 else None


def list_facts(
    db: Database, agent: str | None = None, *, include_superseded: bool = False,
    limit: int = 200,
) -> list[Fact]:
    """Facts by key; only current ones unless asked."""
    where: list[str] = []
    params: list[Any] = []
    if agent:
        where.append("agent = ?")
        params.append(agent)
    if not include_superseded:
        where.append("superseded_at IS NULL")
    sql = "SELECT * FROM facts" + (" WHERE " + " AND ".join(where) if where else "")
    rows = db.query(sql + " ORDER BY agent, key, created_at, id LIMIT ?", [*params, limit])
    return [_fact(r) for r in rows]


def forget(db: Database, fact_id: int, *, actor: str) -> Fact:
    """Close a current fact without a successor (callers add a tombstone to make it stick)."""
    with db.write():
        before = get(db, fact_id)
        if before.superseded_at is not None:
            return before
        db.execute("UPDATE facts SET superseded_at = ? WHERE id = ?",
                   (timeutil.iso(timeutil.now()), fact_id))
        audit.record(db, actor, "fact.forget", f"fact:{fact_id}",
                     {"key": before.key, "value": before.value}, None)
        return get(db, fact_id)
