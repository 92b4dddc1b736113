"""The nightly cycle: decay once a day, bands, merge, archive, promotion, dry runs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memtui import timeutil
from memtui.db import Database
from memtui.home import Home
from memtui.stores import jobs, rules
from memtui.stores import state as st
from memtui.upkeep.maintenance import run_maintenance

NOW = datetime(2026, 11, 25, 3, 0, tzinfo=UTC)


def ago(days: float) -> str:
    return timeutil.iso(NOW - timedelta(days=days))


def snapshot(db: Database) -> list[tuple[object, ...]]:
    return (db.rows("SELECT * FROM rules ORDER BY id")
            + db.rows("SELECT id, status FROM state ORDER BY id"))


def test_decay_bands_and_critical_exemption(home: Home, db: Database) -> None:
    stale = rules.add(db, "stale active", actor="test", score=5.2, last_reinforced=ago(10))
    fresh = rules.add(db, "fresh active", actor="test", score=5.2, last_reinforced=ago(2))
    crit = rules.add(db, "critical", actor="test", score=9.5, last_reinforced=ago(60))
    low = rules.add(db, "nearly gone", actor="test", score=1.2, last_reinforced=ago(30))
    assert low.status == "retired"
    dormant = rules.add(db, "dormant", actor="test", score=3.2, last_reinforced=ago(30))
    report = run_maintenance(home, db, now=NOW)
    assert report.decay_ran and len(report.decayed) == 2  # never critical or retired ones
    assert rules.get(db, stale.id).score == 4.7 and rules.get(db, stale.id).status == "dormant"
    assert rules.get(db, fresh.id).score == 5.2
    assert rules.get(db, crit.id).score == 9.5 and rules.get(db, crit.id).status == "critical"
    assert rules.get(db, dormant.id).status == "retired"
    assert report.became == {"dormant": 1, "retired": 1}
    assert rules.get(db, low.id).score == 1.2
    # Same day again: no second decay.
    again = run_maintenance(home, db, now=NOW + timedelta(hours=5))
    assert not again.decay_ran and rules.get(db, stale.id).score == 4.7
    # Next day: decays again; never below 1.
    for day in range(1, 12):
        run_maintenance(home, db, now=NOW + timedelta(days=day))
    # Once retired (below 3) a rule stops decaying; it is kept for revival.
    assert rules.get(db, stale.id).score == 2.7 and rules.get(db, stale.id).status == "retired"


def test_near_duplicates_merge_into_the_higher_scored(home: Home, db: Database) -> None:
    a = rules.add(db, "Always run migrations with --dry-run first on staging", actor="test",
                  score=6.0, violations=1, source="extractor", provenance=["state:1"],
                  last_reinforced=ago(1))
    b = rules.add(db, "Always run migrations with --dry-run first, then check the plan",
                  actor="test", score=7.5, violations=2, provenance=["state:2"],
                  last_reinforced=ago(1))
    other_agent = rules.add(db, "Always run migrations with --dry-run first!", actor="test",
                            score=7.0, agent="ops", last_reinforced=ago(1))
    report = run_maintenance(home, db, now=NOW)
    assert report.merged == [(b.id, [a.id])]
    survivor, loser = rules.get(db, b.id), rules.get(db, a.id)
    assert survivor.score == 8.0 and survivor.violations == 3
    assert set(survivor.provenance) == {"state:1", "state:2", f"rule:{a.id}"}
    assert loser.status == "retired" and loser.merged_into == b.id
    assert rules.get(db, other_agent.id).status == "active"
    assert run_maintenance(home, db, now=NOW).merged == []


def test_archive_completed_after_three_days(home: Home, db: Database) -> None:
    ids = st.add_many(db, [
        st.NewState(agent="main", category="task", summary="old done", status="completed",
                    completed_at=ago(4)),
        st.NewState(agent="main", category="task", summary="recent done", status="completed",
                    completed_at=ago(1)),
        st.NewState(agent="main", category="task", summary="open"),
    ], actor="test")
    report = run_maintenance(home, db, now=NOW)
    assert report.archived == [ids[0]]
    assert [st.get(db, i).status for i in ids] == ["archived", "completed", "active"]


def test_rejections_and_learnings_become_rules_once(home: Home, db: Database) -> None:
    st.add_many(db, [
        st.NewState(agent="ops", category="rejected", domain="infra",
                    summary="Rejected: adding Redis as a session cache"),
        st.NewState(agent="ops", category="learning", domain="deploy",
                    summary="Check free disk before pulling new images"),
    ], actor="test")
    report = run_maintenance(home, db, now=NOW)
    [rej] = [rules.get(db, i) for i in report.promoted_rejections]
    [learn] = [rules.get(db, i) for i in report.promoted_learnings]
    assert rej.status == "critical" and rej.score == 9.5 and rej.source == "rejection"
    assert rej.rule.startswith("adding Redis as a session cache") and rej.agent == "ops"
    assert learn.score == 5.0 and learn.status == "active" and learn.provenance
    again = run_maintenance(home, db, now=NOW + timedelta(days=1))
    assert again.promoted_rejections == [] and again.promoted_learnings == []
    st.add(db, st.NewState(agent="ops", category="rejected", domain="infra",
                           summary="Rejected: adding Redis as a session cache"), actor="test")
    third = run_maintenance(home, db, now=NOW + timedelta(days=2))
    assert third.promoted_rejections == [] and third.reinforced_by_promotion == [rej.id]


def test_dry_run_changes_nothing_but_reports_exactly(home: Home, db: Database) -> None:
    rules.add(db, "stale", actor="test", score=5.2, last_reinforced=ago(10))
    rules.add(db, "Always run migrations with --dry-run first on staging", actor="test",
              score=6.0, last_reinforced=ago(1))
    rules.add(db, "Always run migrations with --dry-run first, then check", actor="test",
              score=7.0, last_reinforced=ago(1))
    st.add(db, st.NewState(agent="main", category="task", summary="done", status="completed",
                           completed_at=ago(5)), actor="test")
    st.add(db, st.NewState(agent="main", category="rejected", summary="Rejected: X"),
           actor="test")
    before = snapshot(db)
    dry = run_maintenance(home, db, dry_run=True, now=NOW)
    assert snapshot(db) == before
    real = run_maintenance(home, db, now=NOW)
    assert dry.counts() == real.counts()
    assert dry.counts()["decayed"] == 1 and dry.counts()["archived"] == 1
    assert dry.counts()["merged_rules"] == 1 and dry.counts()["promoted_rejections"] == 1
    runs = jobs.recent(db, "maintenance")
    assert [j.dry_run for j in runs] == [False, True]
    assert runs[0].counts["archived"] == 1


def test_distinct_rejections_stay_distinct_and_guesses_are_not_promoted(
        home: Home, db: Database) -> None:
    st.add_many(db, [
        st.NewState(agent="ops", category="rejected", summary="Rejected: no force-push to main"),
        st.NewState(agent="ops", category="rejected", summary="Rejected: no Redis in the stack"),
        st.NewState(agent="ops", category="rejected", summary="No rollback.", confidence=0.5),
    ], actor="test")
    report = run_maintenance(home, db, now=NOW)
    assert len(report.promoted_rejections) == 2 and report.reinforced_by_promotion == []
    assert len(report.skipped_low_confidence) == 1
    assert {rules.get(db, i).status for i in report.promoted_rejections} == {"critical"}


def test_dry_run_lists_exactly_what_changes(home: Home, db: Database) -> None:
    stale = rules.add(db, "stale", actor="test", score=5.2, last_reinforced=ago(10))
    report = run_maintenance(home, db, dry_run=True, now=NOW)
    [d] = report.decayed
    assert (d.id, d.score, d.was, d.status) == (stale.id, 4.7, "active", "dormant")
    assert rules.get(db, stale.id).score == 5.2


def test_retention_drops_old_episodes_but_keeps_incidents(home: Home, db: Database) -> None:
    with db.write():
        for kind, days in [("tool_call", 200), ("tool_call", 10), ("incident", 400)]:
            db.execute("INSERT INTO episodes(agent, at, kind, summary, detail, session, "
                       "created_at) VALUES ('ops', ?, ?, 'x', '', 's', ?)",
                       (ago(days), kind, ago(days)))
    dry = run_maintenance(home, db, dry_run=True, now=NOW)
    assert dry.retention == {"tool_call": 1}
    assert db.scalar("SELECT count(*) FROM episodes") == 3
    real = run_maintenance(home, db, now=NOW)
    assert real.retention == {"tool_call": 1}
    kinds = sorted(r[0] for r in db.rows("SELECT kind FROM episodes"))
    assert kinds == ["incident", "tool_call"]
