"""Flows: their runs and effectiveness, and matching actions to flows."""

from __future__ import annotations

import pytest

from memtui.db import Database
from memtui.errors import MemtuiError, NotFound
from memtui.serving.flowmatch import rank_flows
from memtui.stores import flows as store


def test_record_updates_counters_and_effectiveness(db: Database) -> None:
    store.add(db, "deploy-production", actor="cli", steps=["tag", "deploy"],
              trigger_phrases=["deploy to production"])
    for outcome in ["pass"] * 32 + ["fail"] * 2:
        flow = store.record(db, "deploy-production", outcome, actor="cli", agent="ops")
    assert (flow.times_used, flow.times_succeeded, flow.times_failed) == (34, 32, 2)
    assert flow.effectiveness_line() == "Effectiveness: 94% (32/34 successful)"
    history = store.runs(db, "deploy-production")
    assert len(history) == 34 and history[-1].outcome == "fail"


def test_bad_flow_input_is_refused(db: Database) -> None:
    with pytest.raises(MemtuiError):
        store.add(db, "Deploy Prod", actor="cli", steps=["x"])
    with pytest.raises(MemtuiError):
        store.add(db, "deploy", actor="cli", steps=[])
    store.add(db, "deploy", actor="cli", steps=["x"])
    with pytest.raises(MemtuiError, match="exists already"):
        store.add(db, "deploy", actor="cli", steps=["y"])
    with pytest.raises(MemtuiError):
        store.record(db, "deploy", "maybe", actor="cli")
    with pytest.raises(NotFound):
        store.record(db, "nope", "pass", actor="cli")


def test_matching_uses_stems_and_word_boundaries(db: Database) -> None:
    store.add(db, "deploy-production", actor="cli", steps=["a"],
              trigger_phrases=["deploy to production", "release to prod"])
    store.add(db, "deploy-staging", actor="cli", steps=["a"],
              trigger_phrases=["deploy to staging"])
    store.add(db, "renew-tls-certificate", actor="cli", steps=["a"],
              trigger_phrases=["renew certificate", "tls expiry"])
    flows = store.list_flows(db)
    assert rank_flows(flows, "Deploying v2.15 to production")[0].flow.name == "deploy-production"
    assert rank_flows(flows, "deployed to staging")[0].flow.name == "deploy-staging"
    assert rank_flows(flows, "the certificates need renewing")[0].flow.name == (
        "renew-tls-certificate")
    # "productive" shares letters with "production" but is not the word.
    assert all(m.flow.name != "deploy-production"
               for m in rank_flows(flows, "a productive morning"))
    assert rank_flows(flows, "write the newsletter") == []


def test_most_used_live_flows_their_count_and_recent_outcomes(db: Database) -> None:
    store.add(db, "shared", actor="cli", steps=["a"])
    store.add(db, "ops-only", actor="cli", steps=["a"], agent="ops")
    store.add(db, "old", actor="cli", steps=["a"])
    store.add(db, "idea", actor="cli", steps=["a"], status="draft")
    store.set_status(db, "old", "retired", actor="cli")
    for i, outcome in enumerate(["fail"] + ["pass"] * 12 + ["fail"]):
        store.record(db, "ops-only", outcome, actor="cli", at=f"2026-01-01T00:00:{i:02d}Z")
    store.record(db, "shared", "pass", actor="cli")
    # Retired flows are left out; drafts count; another agent's flows are left out.
    assert [f.name for f in store.most_used(db)] == ["ops-only", "shared", "idea"]
    assert [f.name for f in store.most_used(db, agent="content")] == ["shared", "idea"]
    assert [f.name for f in store.most_used(db, limit=1)] == ["ops-only"]
    assert (store.live_count(db), store.live_count(db, agent="content")) == (3, 2)
    ops = store.get(db, "ops-only")
    assert store.recent_outcomes(db, ops.id) == (True,) * 11 + (False,)
    assert store.recent_outcomes(db, ops.id, 2) == (True, False)
