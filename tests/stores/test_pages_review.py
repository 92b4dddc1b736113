"""Keyset pages over state, rules and the audit log; the review queue, its mark and proposals."""

from __future__ import annotations

import pytest

from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.stores import audit, jobs, pages, review, rules, state, tombstones
from memtui.stores.state import NewState


def _fill(db: Database, n: int, agent: str = "main") -> list[int]:
    news = [NewState(agent=agent, category="decision", summary=f"entry {i:04d}",
                     created_at=f"2026-11-{1 + i % 20:02d}T10:00:00Z") for i in range(n)]
    return state.add_many(db, news, actor="test")


def test_state_pages_walk_forward_and_back_without_gaps_or_repeats(db: Database) -> None:
    _fill(db, 57)
    seen: list[int] = []
    page = pages.state_page(db, limit=10)
    assert not page.more_before
    while True:
        seen += [e.id for e in page.rows]
        if not page.more_after:
            break
        page = pages.state_page(db, anchor=page.keys[-1], limit=10)
    everything = [e.id for e in state.list_entries(db, state.StateFilter(limit=1000))]
    assert seen == everything  # newest first, ties by id, every row once
    back = pages.state_page(db, anchor=page.keys[0], forward=False, limit=10)
    assert [e.id for e in back.rows] == seen[-7 - 10:-7]
    assert back.more_before and back.more_after


def test_state_page_filters_by_text_literally(db: Database) -> None:
    _fill(db, 5)
    state.add(db, NewState(agent="main", category="task", summary="100% of 5_x"), actor="test")
    page = pages.state_page(db, text="0% of 5_")
    assert [e.summary for e in page.rows] == ["100% of 5_x"]
    assert pages.state_count(db, text="%") == 1


def test_rule_pages_by_score_and_agent_scope(db: Database) -> None:
    for i in range(25):
        rules.add(db, f"rule number {i}", actor="test", score=1 + (i % 9),
                  agent=None if i % 2 else "ops")
    first = pages.rule_page(db, limit=5, statuses=rules.STATUSES)
    assert [r.score for r in first.rows] == sorted((r.score for r in first.rows), reverse=True)
    rest = pages.rule_page(db, anchor=first.keys[-1], limit=100, statuses=rules.STATUSES)
    assert len(first.rows) + len(rest.rows) == 25
    assert pages.rule_count(db, agent="main", statuses=rules.STATUSES) == 12
    with pytest.raises(MemtuiError):
        pages.rule_page(db, sort="colour")


def test_audit_page_newest_first(db: Database) -> None:
    _fill(db, 3)
    page = pages.audit_page(db, limit=2)
    assert [a.id for a in page.rows] == sorted((a.id for a in page.rows), reverse=True)
    assert page.more_after


def _extracted(db: Database, summary: str, agent: str = "main", status: str = "active"
               ) -> int:
    return state.add(db, NewState(agent=agent, category="learning", summary=summary,
                                  source_entry=f"msg-{summary}", status=status),
                     actor="extractor").id


def test_review_queue_accept_edit_reject_and_mark(db: Database) -> None:
    a, b, c = (_extracted(db, s) for s in ("alpha", "beta", "gamma"))
    p = _extracted(db, "proposal", status="proposed")
    other = _extracted(db, "ops thing", agent="ops")
    assert [e.id for e in review.pending(db, "main").entries] == [a, b, c, p]
    assert review.pending(db).total == 5

    review.accept(db, a, actor="tui")
    review.edit(db, b, "beta, corrected", actor="tui")
    stone = review.reject(db, c, actor="tui")
    accepted = review.accept(db, p, actor="tui")
    assert accepted.status == "active"
    assert state.get(db, b).summary == "beta, corrected"
    assert state.get(db, c).status == "archived" and stone.text == "gamma"
    assert tombstones.Graveyard.load(db, "main").buried("state", "learning", "gamma", None)
    assert review.pending(db, "main").total == 0
    actions = [(r.actor, r.action) for r in audit.recent(db, limit=20)]
    for action in ("review.accept", "review.edit", "review.reject", "state.accept"):
        assert ("tui", action) in actions

    later = _extracted(db, "delta")
    assert [e.id for e in review.pending(db, "main").entries] == [later]
    assert review.mark_reviewed(db, "main", actor="tui") == later
    assert review.pending(db, "main").total == 0 and review.decisions(db, "main") == {}
    assert [e.id for e in review.pending(db).entries] == [other]


def test_unsure_rejections_head_the_queue_newest_said_first(db: Database) -> None:
    def add(summary: str, agent: str = "main", category: str = "learning",
            status: str = "active", at: str = "2026-11-10T10:00:00Z") -> int:
        return state.add(db, NewState(agent=agent, category=category, summary=summary,
                                      source_entry=f"msg-{summary}", status=status,
                                      created_at=at), actor="extractor").id

    lesson = add("a lesson")
    backtest = add("a backtest proposal", status="proposed")
    older = add("no redis", category="rejected", status="proposed", at="2026-11-02T09:00:00Z")
    sure = add("never deploy on fridays", category="rejected")
    newer = add("not this week", category="rejected", status="proposed",
                at="2026-11-05T09:00:00Z")
    ops = add("no rollback", agent="ops", category="rejected", status="proposed",
              at="2026-11-03T09:00:00Z")
    assert [e.id for e in review.pending(db, "main").entries] == [
        newer, older, lesson, backtest, sure]
    assert [e.id for e in review.pending(db).entries] == [
        newer, ops, older, lesson, backtest, sure]
    assert [e.id for e in review.pending(db, limit=2).entries] == [newer, ops]
    assert review.pending(db, limit=2).total == 6
    review.reject(db, newer, actor="tui")  # decided: it leaves the queue, its place too
    assert [e.id for e in review.pending(db, "main", limit=1).entries] == [older]
    review.mark_reviewed(db, "main", actor="tui")
    assert review.pending(db, "main").entries == ()


def test_a_rejected_proposal_is_archived_and_buried(db: Database) -> None:
    p = _extracted(db, "try rebooting the NAS", status="proposed")
    review.reject(db, p, actor="tui")
    assert state.get(db, p).status == "archived"
    assert db.scalar("SELECT count(*) FROM tombstones") == 1


def test_propose_only_from_active(db: Database) -> None:
    e = _extracted(db, "x")
    assert review.propose(db, e, actor="extractor").status == "proposed"
    with pytest.raises(MemtuiError):
        review.propose(db, e, actor="extractor")
    # Proposals are not served: the active listing leaves them out.
    assert state.list_entries(db) == []


def test_migration_keeps_rows_ids_and_chains(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from memtui.schema import MIGRATIONS

    path = tmp_path / "old.db"
    old = Database(path)
    old.migrate([m for m in MIGRATIONS if m[0] <= 4])
    # Rows as a version-4 memtui wrote them (today's store writes columns added since).
    row = ("INSERT INTO state(created_at, updated_at, agent, category, summary, status, "
           "superseded_by) VALUES ('2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z', 'main', "
           "'decision', ?, ?, ?)")
    b = old.execute(row, ("two", "active", None))
    a = old.execute(row, ("one", "superseded", b))
    old.migrate(MIGRATIONS)
    assert [e.id for e in state.chain(old, b)] == [a, b]
    assert old.scalar("PRAGMA foreign_key_check") is None
    assert old.integrity_check() == []
    old.close()


def test_adjust_edit_and_merge_rules_by_hand(db: Database) -> None:
    a = rules.add(db, "Ask before spending money", actor="test", score=6.0)
    b = rules.add(db, "Ask Dana before any spend", actor="test", score=7.5, violations=2)
    assert rules.adjust(db, a.id, 1, actor="tui").score == 7.0
    assert rules.adjust(db, a.id, -1, actor="tui").score == 6.0
    crit = rules.make_critical(db, b.id, actor="tui")
    with pytest.raises(MemtuiError):
        rules.adjust(db, crit.id, -1, actor="tui")
    assert rules.adjust(db, crit.id, -1, actor="tui", human=True).status == "active"
    edited = rules.edit(db, a.id, "Ask Dana before spending money", actor="tui")
    assert edited.norm_key.startswith("ask dana before spending")
    survivor = rules.merge_into(db, a.id, b.id, actor="tui")
    assert survivor.violations == 2 and f"rule:{a.id}" in survivor.provenance
    loser = rules.get(db, a.id)
    assert (loser.status, loser.merged_into) == ("retired", b.id)
    actions = [r.action for r in audit.recent(db, limit=10) if r.actor == "tui"]
    assert {"rule.adjust", "rule.edit", "rule.merge"} <= set(actions)


def test_audit_and_job_counts(db: Database) -> None:
    for i in range(3):
        audit.record(db, "cli", "rule.add" if i else "flow.add", f"x:{i}")
    for kind in ("extraction", "extraction", "heartbeat"):
        jobs.finish(db, jobs.start(db, kind), "ok")
    assert pages.audit_count(db) == 3
    assert pages.audit_count(db, text="rule") == 2
    assert pages.audit_count(db, text="x:0") == 1
    assert pages.audit_count(db, text="rule_add") == 0  # the underscore is literal
    assert pages.audit_count(db, actor="mcp", text="rule") == 0
    assert (pages.job_count(db), pages.job_count(db, kind="extraction")) == (3, 2)
