"""Flows: named procedures with trigger phrases, ordered steps and measured results."""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memtui import timeutil
from memtui.db import Database
from memtui.errors import MemtuiError, NotFound
from memtui.redact import scrub
from memtui.stores import audit

NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,79}$")


@dataclass(frozen=True)
class Flow:
    id: int
    name: str
    domain: str
    agent: str | None
    trigger_phrases: list[str]
    needs_approval: bool
    steps: list[str]
    times_used: int
    times_succeeded: int
    times_failed: int
    effectiveness: float | None
    """Succeeded / used, 0..1; None before the first run."""
    status: str
    created_at: str
    updated_at: str

    def effectiveness_line(self) -> str:
        if not self.times_used or self.effectiveness is None:
            return "Effectiveness: not measured yet (0 runs)"
        pct = round(self.effectiveness * 100)
        return f"Effectiveness: {pct}% ({self.times_succeeded}/{self.times_used} successful)"

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class FlowRun:
    id: int
    flow_id: int
    at: str
    agent: str | None
    outcome: str
    note: str


def row_to_flow(row: dict[str, Any]) -> Flow:
    """A flow from its row (a dict keyed by column)."""
    row = dict(row)
    row["trigger_phrases"] = json.loads(row["trigger_phrases"])
    row["steps"] = json.loads(row["steps"])
    row["needs_approval"] = bool(row["needs_approval"])
    return Flow(**row)


def get(db: Database, name: str) -> Flow:
    row = db.one("SELECT * FROM flows WHERE name = ?", (name,))
    if row is None:
        raise NotFound(f"no flow named {name!r} (list them: memtui flows list)")
    return row_to_flow(row)


def add(
    db: Database, name: str, *, actor: str, steps: Sequence[str],
    trigger_phrases: Sequence[str] = (), domain: str = "general", agent: str | None = None,
    needs_approval: bool = False, status: str = "active", created_at: str | None = None,
) -> Flow:
    if not NAME.match(name):
        raise MemtuiError(f"invalid flow name {name!r}: lowercase letters, digits, '-', '_', '.'")
    steps = [s for s in (scrub(step).strip() for step in steps) if s]
    trigger_phrases = [t for t in (scrub(p).strip() for p in trigger_phrases) if t]
    domain = scrub(domain)
    if not steps:
        raise MemtuiError(f"flow {name!r} needs at least one step")
    stamp = timeutil.iso(timeutil.now())
    created = timeutil.iso(timeutil.parse(created_at)) if created_at else stamp
    with db.write():
        if db.scalar("SELECT 1 FROM flows WHERE name = ?", (name,)):
            raise MemtuiError(f"a flow named {name!r} exists already")
        db.execute(
            "INSERT INTO flows(name, domain, agent, trigger_phrases, needs_approval, steps, "
            "status, created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?)",
            (name, domain, agent, json.dumps(list(trigger_phrases)), int(needs_approval),
             json.dumps(list(steps)), status, created, stamp),
        )
        flow = get(db, name)
        audit.record(db, actor, "flow.add", f"flow:{name}", None, flow.as_dict())
    return flow


def record(
    db: Database, name: str, outcome: str, *, actor: str, agent: str | None = None,
    note: str = "", at: str | None = None,
) -> Flow:
    """Record one run (pass or fail) and update the counters and effectiveness."""
    if outcome not in ("pass", "fail"):
        raise MemtuiError(f"a flow run's outcome is pass or fail, not {outcome!r}")
    when = timeutil.iso(timeutil.parse(at)) if at else timeutil.iso(timeutil.now())
    note = scrub(note)
    with db.write():
        flow = get(db, name)
        db.execute("INSERT INTO flow_runs(flow_id, at, agent, outcome, note) VALUES (?,?,?,?,?)",
                   (flow.id, when, agent, outcome, note))
        ok = outcome == "pass"
        db.execute(
            "UPDATE flows SET times_used = times_used + 1, "
            "times_succeeded = times_succeeded + ?, times_failed = times_failed + ?, "
            "effectiveness = CAST(times_succeeded + ? AS REAL) / (times_used + 1), "
            "updated_at = ? WHERE id = ?",
            (int(ok), int(not ok), int(ok), timeutil.iso(timeutil.now()), flow.id),
        )
        after = get(db, name)
        audit.record(db, actor, f"flow.{outcome}", f"flow:{name}",
                     {"times_used": flow.times_used, "times_succeeded": flow.times_succeeded},
                     {"times_used": after.times_used, "times_succeeded": after.times_succeeded,
                      "note": note})
    return after


def set_status(db: Database, name: str, status: str, *, actor: str) -> Flow:
    if status not in ("active", "draft", "retired"):
        raise MemtuiError(f"a flow's status is active, draft or retired, not {status!r}")
    with db.write():
        flow = get(db, name)
        db.execute("UPDATE flows SET status = ?, updated_at = ? WHERE id = ?",
                   (status, timeutil.iso(timeutil.now()), flow.id))
        audit.record(db, actor, "flow.status", f"flow:{name}", {"status": flow.status},
                     {"status": status})
        return get(db, name)


def list_flows(db: Database, *, agent: str | None = None, status: str | None = "active",
               ) -> list[Flow]:
    where: list[str] = []
    params: list[Any] = []
    if agent:
        where.append("(agent IS NULL OR agent = ?)")
        params.append(agent)
    if status:
        where.append("status = ?")
        params.append(status)
    sql = "SELECT * FROM flows" + (" WHERE " + " AND ".join(where) if where else "")
    return [row_to_flow(r) for r in db.query(sql + " ORDER BY name", params)]


def _live_where(agent: str | None) -> tuple[str, list[Any]]:
    """The flows not retired, of one agent (with the shared ones) or of all."""
    if agent:
        return "status != 'retired' AND (agent IS NULL OR agent = ?)", [agent]
    return "status != 'retired'", []


def most_used(db: Database, *, agent: str | None = None, limit: int = 60) -> list[Flow]:
    """The live (not retired) flows, most used first, then by name; at most ``limit``."""
    where, params = _live_where(agent)
    rows = db.query(f"SELECT * FROM flows WHERE {where} ORDER BY times_used DESC, name LIMIT ?",
                    [*params, limit])
    return [row_to_flow(r) for r in rows]


def live_count(db: Database, *, agent: str | None = None) -> int:
    """How many flows are not retired (of one agent with the shared ones, or of all)."""
    where, params = _live_where(agent)
    return int(db.scalar(f"SELECT count(*) FROM flows WHERE {where}", params))


def _last_runs(db: Database, flow_id: int, limit: int) -> list[FlowRun]:
    rows = db.query("SELECT * FROM (SELECT * FROM flow_runs WHERE flow_id = ? "
                    "ORDER BY at DESC, id DESC LIMIT ?) ORDER BY at, id", (flow_id, limit))
    return [FlowRun(**r) for r in rows]


def runs(db: Database, name: str, limit: int = 100) -> list[FlowRun]:
    """A flow's run history, oldest first (to plot effectiveness over time)."""
    return _last_runs(db, get(db, name).id, limit)


def recent_outcomes(db: Database, flow_id: int, limit: int = 12) -> tuple[bool, ...]:
    """The outcomes of a flow's last ``limit`` runs, oldest first (True: pass)."""
    return tuple(r.outcome == "pass" for r in _last_runs(db, flow_id, limit))
