"""The audit log: when, who (actor), what action, on which target, before and after."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from memtui import timeutil
from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.redact import scrub_value
from memtui.stores import ACTORS


@dataclass(frozen=True)
class AuditEntry:
    id: int
    at: str
    actor: str
    action: str
    target: str
    before: Any
    after: Any


def _dump(value: Any) -> str | None:
    """The detail as stored: every string scrubbed (no secret or control character reaches
    the audit log, whichever actor wrote it)."""
    if value is None:
        return None
    return json.dumps(scrub_value(value), default=str, sort_keys=True)


def check_actor(actor: str) -> str:
    if actor not in ACTORS:
        raise MemtuiError(f"unknown actor {actor!r}; expected one of {', '.join(ACTORS)}")
    return actor


def record(
    db: Database, actor: str, action: str, target: str, before: Any = None, after: Any = None
) -> None:
    """Write one audit row; call inside the transaction that made the change."""
    db.execute(
        "INSERT INTO audit(at, actor, action, target, before, after) VALUES (?,?,?,?,?,?)",
        (timeutil.iso(timeutil.now()), check_actor(actor), action, target, _dump(before),
         _dump(after)),
    )


def record_many(
    db: Database, actor: str, action: str, rows: Iterable[tuple[str, Any, Any]]
) -> None:
    """Audit rows (target, before, after) for a bulk change, in one statement."""
    at = timeutil.iso(timeutil.now())
    check_actor(actor)
    db.executemany(
        "INSERT INTO audit(at, actor, action, target, before, after) VALUES (?,?,?,?,?,?)",
        [(at, actor, action, t, _dump(b), _dump(a)) for t, b, a in rows],
    )


def recent(db: Database, *, target: str | None = None, limit: int = 50) -> list[AuditEntry]:
    """The latest audit rows, newest first, optionally for one target ("rule:12")."""
    where, params = ("WHERE target = ?", [target]) if target else ("", [])
    rows = db.query(f"SELECT * FROM audit {where} ORDER BY id DESC LIMIT ?", [*params, limit])
    return [row_to_entry(r) for r in rows]


def row_to_entry(r: dict[str, Any]) -> AuditEntry:
    """An audit entry from its row, before and after read back from JSON."""
    return AuditEntry(r["id"], r["at"], r["actor"], r["action"], r["target"],
                      json.loads(r["before"]) if r["before"] else None,
                      json.loads(r["after"]) if r["after"] else None)
