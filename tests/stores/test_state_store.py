"""State: adding, superseding, completing, archiving and listing state; the audit trail."""

from __future__ import annotations

import pytest

from memtui.db import Database
from memtui.errors import MemtuiError, NotFound
from memtui.stores import audit
from memtui.stores import state as store
from memtui.stores.state import NewState, StateFilter


def new(summary: str, category: str = "decision", **kw: object) -> NewState:
    return NewState(agent=str(kw.pop("agent", "main")), category=category, summary=summary,
                    **kw)  # type: ignore[arg-type]


def test_add_fills_times_and_provenance_and_audits(db: Database) -> None:
    entry = store.add(db, new("Stay on nginx", domain="infra", source_file="t.jsonl",
                              source_entry="msg_1", confidence=0.8), actor="cli")
    assert entry.status == "active" and entry.session_date == entry.created_at[:10]
    assert (entry.source_file, entry.source_entry, entry.confidence) == ("t.jsonl", "msg_1", 0.8)
    [row] = audit.recent(db, target=f"state:{entry.id}")
    assert (row.actor, row.action, row.before) == ("cli", "state.add", None)
    assert row.after["summary"] == "Stay on nginx"


@pytest.mark.parametrize("bad", [
    NewState(agent="main", category="opinion", summary="x"),
    NewState(agent="main", category="task", summary="   "),
    NewState(agent="main", category="task", summary="x", confidence=1.5),
    NewState(agent="main", category="task", summary="x", status="superseded"),
])
def test_invalid_entries_are_refused_and_nothing_is_written(db: Database, bad: NewState) -> None:
    with pytest.raises(MemtuiError):
        store.add(db, bad, actor="cli")
    assert db.scalar("SELECT count(*) FROM state") == 0


def test_supersede_chain_is_kept_and_walkable(db: Database) -> None:
    a = store.add(db, new("Newsletter goes out Tuesday"), actor="cli")
    b = store.supersede(db, a.id, new("Newsletter goes out Thursday"), actor="cli")
    c = store.supersede(db, b.id, new("Newsletter goes out Wednesday"), actor="cli")
    assert [e.id for e in store.chain(db, a.id)] == [a.id, b.id, c.id]
    assert [e.id for e in store.chain(db, c.id)] == [a.id, b.id, c.id]
    old = store.get(db, a.id)
    assert (old.status, old.superseded_by) == ("superseded", b.id)
    assert store.get(db, c.id).status == "active"
    with pytest.raises(MemtuiError, match="already superseded"):
        store.supersede(db, a.id, new("Monday"), actor="cli")
    assert db.scalar("SELECT count(*) FROM state") == 3


def test_complete_archive_reopen_follow_allowed_transitions(db: Database) -> None:
    e = store.add(db, new("Rotate the restic key", "task"), actor="cli")
    done = store.complete(db, e.id, actor="cli")
    assert done.status == "completed" and done.completed_at
    with pytest.raises(MemtuiError, match="cannot complete"):
        store.complete(db, e.id, actor="cli")
    assert store.archive(db, e.id, actor="cli").status == "archived"
    again = store.reopen(db, e.id, actor="cli")
    assert again.status == "active" and again.completed_at is None
    with pytest.raises(NotFound):
        store.complete(db, 999, actor="cli")


def test_list_filters_and_views(db: Database) -> None:
    store.add_many(db, [
        new("Deploy v2.14.0", "task", agent="ops", domain="deploy",
            created_at="2026-11-12T10:00:00Z"),
        new("Rejected: adding Redis", "rejected", agent="ops", domain="infra",
            created_at="2026-11-13T10:00:00Z"),
        new("Blog cadence weekly", "decision", agent="main", domain="blog",
            created_at="2026-11-14T10:00:00Z"),
    ], actor="cli")
    ops = store.list_entries(db, StateFilter(agent="ops"))
    assert [e.summary for e in ops] == ["Rejected: adding Redis", "Deploy v2.14.0"]
    assert [e.summary for e in store.list_entries(db, StateFilter(since="2026-11-13"))] == [
        "Blog cadence weekly", "Rejected: adding Redis"]
    assert [e.summary for e in store.list_entries(db, StateFilter(text="redis"))] == [
        "Rejected: adding Redis"]
    assert [e.summary for e in store.list_entries(db, StateFilter(text="%"))] == []
    assert db.scalar("SELECT count(*) FROM v_rejected") == 1
    assert db.scalar("SELECT count(*) FROM v_active_state") == 3


def test_active_state_view_holds_the_latest_fifty(db: Database) -> None:
    stamps = [f"2026-11-{1 + i // 10:02d}T00:00:{i % 10:02d}Z" for i in range(80)]
    store.add_many(db, [new(f"entry {i}", created_at=s) for i, s in enumerate(stamps)],
                   actor="cli")
    rows = db.query("SELECT summary FROM v_active_state")
    assert len(rows) == 50 and rows[0]["summary"] == "entry 79"


def test_find_similar_updates_instead_of_duplicating(db: Database) -> None:
    store.add(db, new("[pass] deploy to production", "task"), actor="cli")
    hit = store.find_similar(db, agent="main", category="task",
                             summary="[pass] deploy to production!")
    assert hit is not None
    assert store.find_similar(db, agent="main", category="task",
                              summary="renew the TLS certificate") is None
    assert store.find_similar(db, agent="ops", category="task",
                              summary="[pass] deploy to production") is None


def test_restate_rewords_cites_the_latest_message_and_audits_what_it_replaced(
    db: Database,
) -> None:
    entry = store.add(db, new("Stay on nginx", source_file="a.jsonl", source_entry="msg_1",
                              confidence=0.6), actor="extractor")
    # The same words again: not an update, but the newer source and confidence are kept.
    assert not store.restate(db, entry.id, actor="extractor", summary="stay on NGINX!",
                             detail="", confidence=0.9, source_entry="msg_2")
    same = store.get(db, entry.id)
    assert (same.summary, same.source_file, same.source_entry, same.confidence) == (
        "Stay on nginx", "a.jsonl", "msg_2", 0.9)
    # Other words: the entry takes them, scrubbed like every write, and the new file.
    secret = "sk-ant-api03-" + "Q7x2Lm9Pz4Rt8Vb1Nc6Kd3Hf5Jg0Ws"
    assert store.restate(db, entry.id, actor="extractor", summary=f"Keep nginx, key {secret} ",
                         detail="because of the \x1b[31mTLS\x1b[0m setup", confidence=0.5,
                         source_entry="msg_3", source_file="b.jsonl")
    after = store.get(db, entry.id)
    assert after.summary == "Keep nginx, key [REDACTED:anthropic_key]"
    assert after.detail == "because of the TLS setup"
    assert (after.source_file, after.source_entry, after.confidence) == (
        "b.jsonl", "msg_3", 0.9)
    last = audit.recent(db, target=f"state:{entry.id}")[0]
    assert (last.actor, last.action) == ("extractor", "state.update")
    assert last.before["source_entry"] == "msg_2" and last.before["summary"] == "Stay on nginx"
    assert secret not in str(last.after)
    # Gone: nothing to restate, nothing written.
    assert not store.restate(db, 999, actor="extractor", summary="x", detail="",
                             confidence=1.0, source_entry="msg_4")
