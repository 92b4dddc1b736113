"""State: decisions, tasks, rejections and the rest, with supersede chains."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from memtui import text, timeutil
from memtui.db import Database, contains_any
from memtui.errors import MemtuiError, NotFound
from memtui.redact import scrub
from memtui.stores import audit

CATEGORIES = ("decision", "task", "rejected", "agent_state", "context", "discovery", "learning")
STATUSES = ("active", "completed", "archived", "superseded", "proposed")
"""proposed: a backtest proposal waiting for review; never served until accepted."""


@dataclass(frozen=True)
class StateEntry:
    """One row of the state table."""

    id: int
    created_at: str
    updated_at: str
    agent: str
    category: str
    domain: str
    summary: str
    detail: str
    status: str
    session_date: str | None
    superseded_by: int | None
    completed_at: str | None
    source_file: str | None
    source_entry: str | None
    confidence: float
    answers_entry: str | None = None
    """The assistant message this entry answers (a refused or accepted proposal)."""

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @property
    def cite(self) -> str:
        """Where it was said (file#message) and, for a reply, the proposal it answers."""
        said = f"{self.source_file or 'manual'}#{self.source_entry or ''}".rstrip("#")
        return said + (f" (answers #{self.answers_entry})" if self.answers_entry else "")


@dataclass
class NewState:
    """What a caller gives to add an entry; the store fills ids and times."""

    agent: str
    category: str
    summary: str
    domain: str = "general"
    detail: str = ""
    status: str = "active"
    session_date: str | None = None
    completed_at: str | None = None
    source_file: str | None = None
    source_entry: str | None = None
    confidence: float = 1.0
    created_at: str | None = None
    answers_entry: str | None = None

    def validate(self) -> None:
        if self.category not in CATEGORIES:
            raise MemtuiError(
                f"unknown category {self.category!r}; expected one of {', '.join(CATEGORIES)}"
            )
        if self.status not in ("active", "completed", "archived", "proposed"):
            raise MemtuiError(f"a new entry's status must be active, completed, archived or "
                              f"proposed, "
                              f"not {self.status!r}")
        if not self.summary.strip():
            raise MemtuiError("a state entry needs a non-empty summary")
        if not 0.0 <= self.confidence <= 1.0:
            raise MemtuiError(f"confidence must be between 0 and 1, not {self.confidence}")


@dataclass
class StateFilter:
    """Which entries to list; every field narrows the list when set."""

    agent: str | None = None
    domain: str | None = None
    category: str | None = None
    status: str | None = "active"
    since: str | None = None
    until: str | None = None
    text: str | None = None
    limit: int = 50


_COLUMNS = ("created_at", "updated_at", "agent", "category", "domain", "summary", "detail",
            "status", "session_date", "completed_at", "source_file", "source_entry", "confidence",
            "answers_entry")
_INSERT = f"INSERT INTO state({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"


def _entry(row: dict[str, Any]) -> StateEntry:
    return StateEntry(**row)


def _values(new: NewState, stamp: str) -> tuple[Any, ...]:
    created = timeutil.iso(timeutil.parse(new.created_at)) if new.created_at else stamp
    completed = new.completed_at
    if new.status == "completed" and not completed:
        completed = stamp
    summary = scrub(new.summary).strip()
    if not summary:
        raise MemtuiError("a state entry needs a summary with something printable in it")
    return (created, stamp, new.agent, new.category, scrub(new.domain) or "general",
            summary, scrub(new.detail), new.status,
            new.session_date or created[:10], completed, new.source_file, new.source_entry,
            new.confidence, new.answers_entry)


def get(db: Database, entry_id: int) -> StateEntry:
    row = db.one("SELECT * FROM state WHERE id = ?", (entry_id,))
    if row is None:
        raise NotFound(f"no state entry {entry_id}")
    return _entry(row)


def add(db: Database, new: NewState, *, actor: str) -> StateEntry:
    """Add one entry."""
    new.validate()
    with db.write():
        entry_id = db.execute(_INSERT, _values(new, timeutil.iso(timeutil.now())))
        entry = get(db, entry_id)
        audit.record(db, actor, "state.add", f"state:{entry_id}", None, entry.as_dict())
    return entry


def add_many(db: Database, entries: Sequence[NewState], *, actor: str) -> list[int]:
    """Add many entries in one transaction; returns their ids in order."""
    for new in entries:
        new.validate()
    stamp = timeutil.iso(timeutil.now())
    rows = [_values(new, stamp) for new in entries]
    with db.write():
        ids = [db.execute(_INSERT, values) for values in rows]
        audit.record_many(
            db, actor, "state.add",
            ((f"state:{i}", None, dict(zip(_COLUMNS, v, strict=True)))
             for i, v in zip(ids, rows, strict=True)),
        )
    return ids


def update(
    db: Database, entry_id: int, *, actor: str, summary: str | None = None,
    detail: str | None = None, domain: str | None = None, confidence: float | None = None,
    status: str | None = None,
) -> StateEntry:
    """Change an entry in place: its words (consolidation of a near-identical entry, a human
    correction) and, between active and completed, its status."""
    summary, detail, domain = (None if v is None else scrub(v)
                               for v in (summary, detail, domain))
    if summary is not None and not summary.strip():
        raise MemtuiError("a state entry needs a non-empty summary")
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        raise MemtuiError(f"confidence must be between 0 and 1, not {confidence}")
    if status is not None and status not in ("active", "completed"):
        raise MemtuiError(f"update sets status active or completed, not {status!r}")
    changes: dict[str, Any] = {k: v for k, v in
                               (("summary", summary), ("detail", detail), ("domain", domain),
                                ("confidence", confidence), ("status", status))
                               if v is not None}
    if status is not None:
        changes["completed_at"] = timeutil.iso(timeutil.now()) if status == "completed" else None
    with db.write():
        before = get(db, entry_id)
        if not changes:
            return before
        _write_changes(db, entry_id, before.as_dict(), changes, actor)
        return get(db, entry_id)


def restate(
    db: Database, entry_id: int, *, actor: str, summary: str, detail: str,
    confidence: float, source_entry: str, source_file: str | None = None,
    answers_entry: str | None = None,
) -> bool:
    """Record a restatement of an entry (consolidation): the entry keeps the higher
    confidence and cites the latest message (``source_entry``, and ``source_file`` when
    given) and what that message answers (``answers_entry``); when the words differ
    (normalised), it also takes ``summary`` and, when given, ``detail``. The audit row
    keeps what was replaced, the previous source included.

    True when the words changed (an update); False for the same words (a duplicate, whose
    newer source is still recorded) and for an entry that is gone."""
    summary, detail = scrub(summary).strip(), scrub(detail)
    with db.write():
        row = db.one("SELECT summary, detail, confidence, source_file, source_entry, "
                     "answers_entry FROM state WHERE id = ?", (entry_id,))
        if row is None:
            return False
        reworded = text.normalise(row["summary"]) != text.normalise(summary)
        wanted: dict[str, Any] = {
            "confidence": max(float(row["confidence"]), confidence),
            "source_file": source_file or row["source_file"],
            "source_entry": source_entry, "answers_entry": answers_entry}
        if reworded:
            wanted |= {"summary": summary, "detail": detail or row["detail"]}
        changes = {k: v for k, v in wanted.items() if v != row[k]}
        if changes:
            _write_changes(db, entry_id, row, changes, actor)
    return reworded


def _write_changes(db: Database, entry_id: int, before: dict[str, Any],
                   changes: dict[str, Any], actor: str) -> None:
    """Set ``changes`` on an entry and audit them against ``before``; inside a write."""
    sets = ", ".join(f"{k} = ?" for k in changes)
    db.execute(f"UPDATE state SET {sets}, updated_at = ? WHERE id = ?",
               (*changes.values(), timeutil.iso(timeutil.now()), entry_id))
    audit.record(db, actor, "state.update", f"state:{entry_id}",
                 {k: before[k] for k in changes}, changes)


def _set_status(
    db: Database, entry_id: int, status: str, actor: str, action: str,
    allowed_from: tuple[str, ...], extra: str = "", extra_params: tuple[Any, ...] = (),
) -> StateEntry:
    with db.write():
        before = get(db, entry_id)
        if before.status not in allowed_from:
            raise MemtuiError(
                f"state entry {entry_id} is {before.status}; cannot {action.split('.')[-1]} it"
            )
        db.execute(f"UPDATE state SET status = ?, updated_at = ?{extra} WHERE id = ?",
                   (status, timeutil.iso(timeutil.now()), *extra_params, entry_id))
        audit.record(db, actor, action, f"state:{entry_id}", {"status": before.status},
                     {"status": status})
        return get(db, entry_id)


def complete(db: Database, entry_id: int, *, actor: str) -> StateEntry:
    """Mark an active entry completed (maintenance archives it after a few days)."""
    return _set_status(db, entry_id, "completed", actor, "state.complete", ("active",),
                       ", completed_at = ?", (timeutil.iso(timeutil.now()),))


def archive(db: Database, entry_id: int, *, actor: str) -> StateEntry:
    return _set_status(db, entry_id, "archived", actor, "state.archive", ("active", "completed"))


def reopen(db: Database, entry_id: int, *, actor: str) -> StateEntry:
    return _set_status(db, entry_id, "active", actor, "state.reopen", ("completed", "archived"),
                       ", completed_at = NULL")


def supersede(db: Database, old_id: int, new: NewState, *, actor: str) -> StateEntry:
    """Add ``new`` and point the old entry at it; the old one is kept, marked superseded."""
    new.validate()
    with db.write():
        get(db, old_id)
        entry = add(db, new, actor=actor)
        link_superseded(db, old_id, entry.id, actor=actor)
    return entry


def link_superseded(db: Database, old_id: int, new_id: int, *, actor: str) -> None:
    """Mark ``old_id`` as superseded by the (existing) entry ``new_id``."""
    with db.write():
        old = get(db, old_id)
        get(db, new_id)
        if old.status == "superseded":
            raise MemtuiError(
                f"state entry {old_id} is already superseded by {old.superseded_by}; "
                f"supersede the newest entry of its chain"
            )
        if old_id == new_id:
            raise MemtuiError(f"state entry {old_id} cannot supersede itself")
        db.execute("UPDATE state SET status = 'superseded', superseded_by = ?, updated_at = ? "
                   "WHERE id = ?", (new_id, timeutil.iso(timeutil.now()), old_id))
        audit.record(db, actor, "state.supersede", f"state:{old_id}",
                     {"status": old.status, "superseded_by": None},
                     {"status": "superseded", "superseded_by": new_id})


def chain(db: Database, entry_id: int) -> list[StateEntry]:
    """The whole supersede chain an entry belongs to, oldest first."""
    first = get(db, entry_id)
    older: list[StateEntry] = []
    cursor = first
    seen = {cursor.id}
    while True:
        row = db.one("SELECT * FROM state WHERE superseded_by = ? LIMIT 1", (cursor.id,))
        if row is None or row["id"] in seen:
            break
        cursor = _entry(row)
        seen.add(cursor.id)
        older.append(cursor)
    newer: list[StateEntry] = []
    cursor = first
    while cursor.superseded_by is not None and cursor.superseded_by not in seen:
        cursor = get(db, cursor.superseded_by)
        seen.add(cursor.id)
        newer.append(cursor)
    return [*reversed(older), first, *newer]


def list_entries(db: Database, flt: StateFilter | None = None) -> list[StateEntry]:
    """Entries matching a filter, newest first."""
    flt = flt or StateFilter()
    where: list[str] = []
    params: list[Any] = []
    for column in ("agent", "domain", "category", "status"):
        value = getattr(flt, column)
        if value:
            where.append(f"{column} = ?")
            params.append(value)
    if flt.since:
        where.append("created_at >= ?")
        params.append(timeutil.iso(timeutil.parse(flt.since)))
    if flt.until:
        where.append("created_at < ?")
        params.append(timeutil.iso(timeutil.parse(flt.until)))
    if flt.text:
        clause, values = contains_any(("summary", "detail"), flt.text)
        where.append(clause)
        params += values
    sql = "SELECT * FROM state" + (" WHERE " + " AND ".join(where) if where else "")
    sql += " ORDER BY created_at DESC, id DESC LIMIT ?"
    return [_entry(r) for r in db.query(sql, [*params, flt.limit])]


def find_similar(
    db: Database, *, agent: str, category: str, summary: str, domain: str | None = None,
    threshold: float = 0.82, within: timedelta | None = None, now: datetime | None = None,
) -> StateEntry | None:
    """The most similar active (or recently completed) entry above ``threshold``, if any."""
    sql = ("SELECT * FROM state WHERE agent = ? AND category = ? "
           "AND status IN ('active','completed')")
    params: list[Any] = [agent, category]
    if domain:
        sql += " AND domain = ?"
        params.append(domain)
    if within is not None:
        sql += " AND updated_at >= ?"
        params.append(timeutil.iso((now or timeutil.now()) - within))
    best: tuple[float, StateEntry] | None = None
    wanted = text.normalise(summary)
    for row in db.query(sql + " ORDER BY updated_at DESC LIMIT 500", params):
        score = text.ratio_at_least(wanted, text.normalise(row["summary"]), threshold)
        if score and (best is None or score > best[0]):
            best = (score, _entry(row))
    return best[1] if best else None


def recent(
    db: Database, *, category: str | None = None, agent: str | None = None,
    exclude_category: str | None = None, statuses: Sequence[str] = ("active",), limit: int = 50,
) -> list[StateEntry]:
    """The newest entries of a category (or all but ``exclude_category``), newest first."""
    where = [f"status IN ({', '.join('?' * len(statuses))})"]
    params: list[Any] = list(statuses)
    if category:
        where.append("category = ?")
        params.append(category)
    if exclude_category:
        where.append("category != ?")
        params.append(exclude_category)
    if agent:
        where.append("agent = ?")
        params.append(agent)
    sql = (f"SELECT * FROM state WHERE {' AND '.join(where)} "
           "ORDER BY created_at DESC, id DESC LIMIT ?")
    return [_entry(r) for r in db.query(sql, [*params, limit])]


REJECTION_STATUSES = ("active", "completed")
"""A rejection stays in force when its entry is completed (v_rejected agrees)."""


def new_since(db: Database, category: str, after_id: int) -> list[StateEntry]:
    """Active entries of a category added after ``after_id``, oldest first."""
    return [_entry(r) for r in db.query(
        "SELECT * FROM state WHERE category = ? AND status = 'active' AND id > ? ORDER BY id",
        (category, after_id))]


def archive_completed_before(db: Database, cutoff: str, *, actor: str) -> list[int]:
    """Archive every entry completed before ``cutoff`` in one statement; returns the ids."""
    with db.write():
        ids = sorted(r[0] for r in db.rows(
            "UPDATE state SET status = 'archived', updated_at = ? "
            "WHERE status = 'completed' AND completed_at < ? RETURNING id",
            (timeutil.iso(timeutil.now()), cutoff)))
        if ids:
            audit.record(db, actor, "state.archive", "state",
                         {"status": "completed", "ids": ids}, {"status": "archived"})
    return ids


def counts(db: Database, agent: str | None = None) -> dict[str, int]:
    """Active entries per category."""
    sql = "SELECT category, count(*) FROM state WHERE status = 'active'"
    params: list[Any] = []
    if agent:
        sql += " AND agent = ?"
        params.append(agent)
    return {c: n for c, n in db.rows(sql + " GROUP BY category", params)}
