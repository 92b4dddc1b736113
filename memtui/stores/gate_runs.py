"""Gate runs: each pre-action gate an agent opened, what it showed, and how it was graded."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memtui import timeutil
from memtui.db import Database
from memtui.errors import MemtuiError, NotFound
from memtui.redact import scrub
from memtui.stores import audit


@dataclass(frozen=True)
class GateRun:
    id: int
    at: str
    agent: str
    action: str
    flow: str | None
    rule_ids: list[int]
    """The rules shown that bear on the action: reinforced when it passes."""
    closed_at: str | None
    outcome: str | None


def _run(row: dict[str, Any]) -> GateRun:
    return GateRun(**{**row, "rule_ids": json.loads(row["rule_ids"])})


def open_gate(db: Database, agent: str, action: str, flow: str | None,
              rule_ids: Sequence[int], *, actor: str) -> int:
    """Record a pre-action gate; returns its id."""
    action = scrub(action)
    with db.write():
        gate_id = db.execute(
            "INSERT INTO gate_runs(at, agent, action, flow, rule_ids) VALUES (?,?,?,?,?)",
            (timeutil.iso(timeutil.now()), agent, action, flow, json.dumps(list(rule_ids))))
        audit.record(db, actor, "gate.pre", f"gate:{gate_id}", None,
                     {"agent": agent, "action": action, "flow": flow})
        return gate_id


def find_open(db: Database, agent: str, gate_id: int | None, since: datetime,
              ) -> GateRun | None:
    """The gate a post-action report grades: ``gate_id`` (which must still be open), else
    the agent's latest open gate since ``since`` that was opened after its last graded one."""
    if gate_id is not None:
        row = db.one("SELECT * FROM gate_runs WHERE id = ? AND agent = ?", (gate_id, agent))
        if row is None:
            raise NotFound(f"no pre-action gate {gate_id} for agent {agent}")
        if row["closed_at"]:
            raise MemtuiError(f"gate {gate_id} was already graded ({row['outcome']})")
        return _run(row)
    row = db.one(
        "SELECT * FROM gate_runs WHERE agent = ? AND closed_at IS NULL AND at >= ? "
        "AND id > coalesce((SELECT max(id) FROM gate_runs WHERE agent = ? "
        "AND closed_at IS NOT NULL), 0) ORDER BY id DESC LIMIT 1",
        (agent, timeutil.iso(since), agent))
    return _run(row) if row else None


def close(db: Database, gate_id: int, outcome: str, *, actor: str, state_id: int) -> None:
    """Grade a gate (pass or fail) and note the state entry that records it."""
    with db.write():
        db.execute("UPDATE gate_runs SET closed_at = ?, outcome = ? WHERE id = ?",
                   (timeutil.iso(timeutil.now()), outcome, gate_id))
        audit.record(db, actor, "gate.post", f"gate:{gate_id}", None,
                     {"outcome": outcome, "state": state_id})
