"""Pre- and post-action gates: what they show, the budget, and what they feed back."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as hst

from memtui.config import load_settings, render_settings
from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.serving.gates import post_gate, pre_gate
from memtui.stores import flows, jobs, rules
from memtui.stores import state as st


@pytest.fixture
def seeded(home: Home, db: Database) -> Home:
    flows.add(db, "deploy-production", actor="test", domain="deploy", agent="ops",
              trigger_phrases=["deploy to production"], needs_approval=True,
              steps=["Check CI is green", "Run migrations with --plan", "Deploy the tag",
                     "Watch the error rate for 10 minutes"])
    for _ in range(3):
        flows.record(db, "deploy-production", "pass", actor="test")
    st.add_many(db, [
        st.NewState(agent="ops", category="rejected", domain="deploy",
                    summary="Rejected: deploying during the Thursday demo window"),
        st.NewState(agent="content", category="rejected", domain="content",
                    summary="Rejected: emoji in newsletter subject lines"),
        st.NewState(agent="ops", category="decision", domain="deploy",
                    summary="Production deploys go through the blue/green script"),
    ], actor="test")
    rules.add(db, "Never restart Postgres between 08:00 and 20:00", actor="test", score=9.5)
    rules.add(db, "Deploy only tagged releases to production", actor="test", score=8.2,
              agent="ops")
    rules.add(db, "Low score rule", actor="test", score=5)
    tools = home.root / "tools"
    tools.mkdir()
    (tools / "deploy-production.sh").write_text("#!/bin/sh\n")
    (tools / "publish-blog-post.py").write_text("")
    settings = load_settings(home.config_path)
    settings.gates.tool_dirs = ["tools"]
    settings.health.checks = {"disk": "true", "db": "false"}
    home.config_path.write_text(render_settings(settings))
    return Home(home.root)


def test_pre_gate_gathers_every_section(seeded: Home, db: Database) -> None:
    from memtui.upkeep.health import run_checks

    run_checks(seeded, db)
    gate = pre_gate(seeded, db, "ops", "deploy to production")
    by = {s.name: [i.text for i in s.items] for s in gate.sections}
    assert gate.flow == "deploy-production"
    assert by["flow"][0].startswith("deploy-production  [needs human approval]: Effectiveness: "
                                    "100% (3/3 successful)")
    assert by["flow"][1:5] == ["  1. Check CI is green", "  2. Run migrations with --plan",
                               "  3. Deploy the tag", "  4. Watch the error rate for 10 minutes"]
    assert any("Thursday demo" in t for t in by["rejections"])
    assert not any("emoji" in t for t in by["rejections"])  # another agent's, unrelated
    assert [t.split("] ")[1] for t in by["rules"]] == [
        "Deploy only tagged releases to production",
        "Never restart Postgres between 08:00 and 20:00"]
    assert any("blue/green" in t for t in by["state"])
    assert any("deploy-production.sh" in t for t in by["tools"])
    assert not any("publish-blog-post" in t for t in by["tools"])
    assert any(t.startswith("db: FAILING") for t in by["health"])
    assert any(t.startswith("disk: ok") for t in by["health"])
    assert gate.cut == {} and gate.tokens <= gate.budget


def test_pre_gate_cuts_least_important_first_and_says_so(seeded: Home, db: Database) -> None:
    full = pre_gate(seeded, db, "ops", "deploy to production", record=False)
    tight = pre_gate(seeded, db, "ops", "deploy to production", budget=full.tokens - 20,
                     record=False)
    assert tight.tokens <= tight.budget
    assert set(tight.cut) <= {"health", "tools", "state"} and tight.cut
    flow_items = next(s.items for s in tight.sections if s.name == "flow")
    assert len(flow_items) == len(next(s.items for s in full.sections if s.name == "flow"))
    # Very tight: later flow steps go before the critical rule does.
    tiny = pre_gate(seeded, db, "ops", "deploy to production", budget=60, record=False)
    texts = [i.text for s in tiny.sections for i in s.items]
    assert any("Never restart Postgres" in t for t in texts)
    assert texts[0].startswith("deploy-production") and tiny.cut["flow"] >= 1


def test_post_gate_feeds_back_flow_rules_and_one_state_entry(seeded: Home, db: Database) -> None:
    gate = pre_gate(seeded, db, "ops", "deploy to production")
    shown = [int(i.ref.split(":")[1]) for s in gate.sections if s.name == "rules"
             for i in s.items if i.relevance > 0]
    # The Postgres rule is shown (critical) but has nothing to do with deploying.
    assert [rules.get(db, r).rule for r in shown] == [
        "Deploy only tagged releases to production"]
    before = {r: rules.get(db, r).score for r in shown}
    violated = shown[0]
    result = post_gate(seeded, db, "ops", "pass", "v2.15.0 deployed in 4m",
                       violated=(violated,))
    assert result.flow == "deploy-production"
    assert result.effectiveness == "Effectiveness: 100% (4/4 successful)"
    assert result.reinforced == []  # the only relevant rule was violated
    for r in result.reinforced:
        assert rules.get(db, r).score > before[r] or rules.get(db, r).score >= 8.9
    assert rules.get(db, violated).violations == 1
    entry = st.get(db, result.state_id)
    assert entry.category == "task" and entry.status == "completed"
    # A second report of the same task updates that entry instead of adding another.
    pre_gate(seeded, db, "ops", "deploy to production")
    again = post_gate(seeded, db, "ops", "pass", "v2.15.0 deployed in 5m")
    assert again.state_updated and again.state_id == result.state_id


def test_post_gate_lesson_without_change_is_flagged(seeded: Home, db: Database) -> None:
    result = post_gate(seeded, db, "ops", "fail", "migration locked the events table",
                       lesson="Run big migrations with lock_timeout set")
    assert result.advice and "not permanent" in result.advice[0]
    assert st.get(db, result.state_id).category == "learning"
    assert result.reinforced == []
    fixed = post_gate(seeded, db, "ops", "pass", "added lock_timeout to the migrate script",
                      lesson="Set lock_timeout in migrate.sh", changed="script")
    assert fixed.advice == []


def test_post_gate_rejects_bad_input_before_writing(seeded: Home, db: Database) -> None:
    count = db.scalar("SELECT count(*) FROM audit")
    with pytest.raises(MemtuiError):
        post_gate(seeded, db, "ops", "pass", "x", violated=(999,))
    with pytest.raises(MemtuiError):
        post_gate(seeded, db, "ops", "meh", "x")
    with pytest.raises(MemtuiError):
        post_gate(seeded, db, "ops", "pass", "x", changed="mood")
    assert db.scalar("SELECT count(*) FROM audit") == count
    assert jobs.last(db, "health") is None


def test_tool_dirs_relative_to_home(seeded: Home) -> None:
    from memtui.serving.gates import tool_dirs

    assert tool_dirs(seeded) == [Path(seeded.root) / "tools"]


def test_post_gate_never_reaches_back_past_a_graded_gate(seeded: Home, db: Database) -> None:
    flows.add(db, "restart-nginx", actor="test", steps=["nginx -t", "reload"],
              trigger_phrases=["restart nginx"])
    deploy = pre_gate(seeded, db, "ops", "deploy to production")
    restart = pre_gate(seeded, db, "ops", "restart nginx")
    first = post_gate(seeded, db, "ops", "pass", "reloaded nginx")
    assert first.gate_id == restart.gate_id and first.flow == "restart-nginx"
    second = post_gate(seeded, db, "ops", "fail", "restarted nginx again, broke")
    assert second.gate_id is None and second.flow is None
    assert flows.get(db, "deploy-production").times_failed == 0
    explicit = post_gate(seeded, db, "ops", "pass", "deployed", gate_id=deploy.gate_id)
    assert explicit.flow == "deploy-production"
    with pytest.raises(MemtuiError, match="already graded"):
        post_gate(seeded, db, "ops", "pass", "again", gate_id=deploy.gate_id)


def test_a_failed_retry_is_not_left_completed(seeded: Home, db: Database) -> None:
    pre_gate(seeded, db, "ops", "rotate the TLS certificate")
    ok = post_gate(seeded, db, "ops", "pass", "rotated")
    pre_gate(seeded, db, "ops", "rotate the TLS certificate")
    failed = post_gate(seeded, db, "ops", "fail", "rotation failed")
    if failed.state_updated:
        assert failed.state_id == ok.state_id
    assert st.get(db, failed.state_id).status == "active"


@given(hst.text(max_size=40), hst.text(max_size=80))
def test_relevance_fast_path_agrees_with_full_tokenising(action: str, other: str) -> None:
    from memtui import text
    from memtui.serving.gates import _relevance

    stems = set(text.keywords(action))
    full = len(stems & set(text.keywords(other))) / len(stems) if stems else 0.0
    assert _relevance(stems, other) == full


def test_an_unconfirmed_refusal_warns_only_when_it_matches(seeded: Home, db: Database) -> None:
    """A rejection waiting in review (the extractor was unsure) still warns before the
    action it may forbid, marked as unconfirmed; it never shows for unrelated actions,
    and once a person rejects it in review it is gone."""
    from memtui.serving.gates import UNCONFIRMED
    from memtui.stores import review

    [entry_id] = st.add_many(db, [st.NewState(
        agent="ops", category="rejected", domain="cache", status="proposed",
        confidence=0.6, summary="Rejected: bumping the redis memory limit")], actor="test")
    by = {s.name: [i.text for i in s.items]
          for s in pre_gate(seeded, db, "ops", "bump the redis memory limit").sections}
    assert any(t.startswith(UNCONFIRMED) and "redis memory" in t for t in by["rejections"])
    assert not any(t.startswith(UNCONFIRMED) and "Thursday" in t for t in by["rejections"])
    by = {s.name: [i.text for i in s.items]
          for s in pre_gate(seeded, db, "ops", "deploy to production").sections}
    assert not any("redis" in t for t in by["rejections"])
    review.reject(db, entry_id, actor="test")  # the person says it was no refusal
    by = {s.name: [i.text for i in s.items]
          for s in pre_gate(seeded, db, "ops", "bump the redis memory limit").sections}
    assert not any("redis" in t for t in by["rejections"])
