"""Rules: bands, reinforcement, violations, promotion, the human-only critical guard."""

from __future__ import annotations

import pytest

from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.stores import audit
from memtui.stores import rules as store


@pytest.mark.parametrize(("score", "status"), [
    (10.0, "critical"), (9.0, "critical"), (8.9, "active"), (7.0, "active"), (5.0, "active"),
    (4.9, "dormant"), (3.0, "dormant"), (2.9, "retired"), (1.0, "retired"),
])
def test_status_follows_the_band(db: Database, score: float, status: str) -> None:
    assert store.add(db, f"rule at {score}", actor="cli", score=score).status == status


def test_reinforce_raises_score_but_never_makes_a_rule_critical(db: Database) -> None:
    rule = store.add(db, "Run migrations with --plan first", actor="cli", score=8.0,
                     last_reinforced="2026-01-01T00:00:00Z")
    once = store.reinforce(db, rule.id, actor="gate")
    assert once.score == 8.9 and once.status == "active"
    assert once.last_reinforced > rule.last_reinforced
    crit = store.add(db, "Never restart Postgres in business hours", actor="cli", score=9.5)
    assert store.reinforce(db, crit.id, actor="gate").score == 10.0


def test_violation_counts_and_is_audited(db: Database) -> None:
    rule = store.add(db, "Keep commit messages short", actor="cli", score=6)
    store.violate(db, rule.id, actor="gate")
    after = store.violate(db, rule.id, actor="gate")
    assert after.violations == 2 and after.score == 6
    actions = [a.action for a in audit.recent(db, target=f"rule:{rule.id}")]
    assert actions == ["rule.violation", "rule.violation", "rule.add"]


def test_only_a_human_retires_or_demotes_a_critical_rule(db: Database) -> None:
    rule = store.add(db, "Never deploy on Fridays after 15:00", actor="cli", score=9.5)
    with pytest.raises(MemtuiError, match="only a human"):
        store.retire(db, rule.id, actor="maintenance")
    with pytest.raises(MemtuiError, match="only a human"):
        store.demote(db, rule.id, actor="tui")
    assert store.get(db, rule.id).status == "critical"
    retired = store.retire(db, rule.id, actor="tui", human=True)
    assert retired.status == "retired" and retired.score <= 2.0
    revived = store.revive(db, rule.id, actor="tui")
    assert (revived.status, revived.score) == ("active", 5.0)


def test_promote_and_demote_move_one_band(db: Database) -> None:
    rule = store.add(db, "Draft LinkedIn posts only", actor="cli", score=5.5)
    assert store.promote(db, rule.id, actor="cli").score == 7.5
    assert store.promote(db, rule.id, actor="cli").status == "critical"
    assert store.demote(db, rule.id, actor="cli", human=True).status == "active"
    assert store.make_critical(db, rule.id, actor="cli").status == "critical"


def test_boot_rules_are_the_top_twenty_for_the_agent(db: Database) -> None:
    for i in range(30):
        store.add(db, f"general rule {i}", actor="cli", score=7 + i * 0.07)
    store.add(db, "on demand only", actor="cli", score=6.9)
    store.add(db, "ops only", actor="cli", score=9.9, agent="ops")
    store.add(db, "dormant", actor="cli", score=4)
    boot = store.boot_rules(db, "main")
    assert len(boot) == 20 and all(r.agent is None and r.score >= 7 for r in boot)
    assert [r.score for r in boot] == sorted((r.score for r in boot), reverse=True)
    assert store.boot_rules(db, "ops")[0].rule == "ops only"
    view = db.query("SELECT score FROM v_boot_rules")
    assert len(view) == 20 and view[0]["score"] == 9.9 and view[-1]["score"] >= 7


def test_invalid_rules_are_refused(db: Database) -> None:
    with pytest.raises(MemtuiError):
        store.add(db, "x", actor="cli", score=11)
    with pytest.raises(MemtuiError):
        store.add(db, "  ", actor="cli")
    with pytest.raises(MemtuiError, match="unknown actor"):
        store.add(db, "x", actor="somebody")
    assert db.scalar("SELECT count(*) FROM rules") == 0
