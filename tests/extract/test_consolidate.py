"""Consolidation: near-duplicates update, rejections never twice, facts supersede, tombstones."""

from __future__ import annotations

import time

from memtui import text
from memtui.db import Database
from memtui.extract.candidates import (
    EpisodeCandidate,
    Extraction,
    FactCandidate,
    StateCandidate,
)
from memtui.extract.consolidate import DEFAULT_THRESHOLD, Consolidator
from memtui.extract.similarity import Item, SimilarityIndex, marks, same_marks, words_of
from memtui.stores import audit, facts, state, tombstones


def cand(summary: str, category: str = "decision", entry: str = "m1",
         domain: str = "general", **kw: object) -> StateCandidate:
    return StateCandidate(category=category, summary=summary, source_entry=entry,
                          domain=domain, **kw)  # type: ignore[arg-type]


def apply(db: Database, *items: object) -> object:
    ex = Extraction()
    for item in items:
        if isinstance(item, StateCandidate):
            ex.state.append(item)
        elif isinstance(item, FactCandidate):
            ex.facts.append(item)
        elif isinstance(item, EpisodeCandidate):
            ex.episodes.append(item)
    return Consolidator(db, "main").apply(ex, source_file="t.jsonl")


def test_threshold_joins_rewordings_and_keeps_different_things_apart() -> None:
    assert DEFAULT_THRESHOLD == 0.82
    assert text.similarity("Don't restart postgres during business hours",
                           "don't restart Postgres in business hours!") >= DEFAULT_THRESHOLD
    assert text.similarity("use pnpm for the frontend", "use npm for the frontend") < 0.99
    assert text.similarity("Deploy 2.3 on Tuesday", "Write the launch post") < 0.5


def test_a_near_duplicate_updates_the_active_entry(db: Database) -> None:
    apply(db, cand("Stay on nginx for the proxy", domain="infra", confidence=0.6))
    out = apply(db, cand("Stay on nginx for the proxy!!", entry="m2", domain="infra"))
    assert out.duplicates == 1  # type: ignore[attr-defined]
    out = apply(db, cand("We stay on nginx for the proxy", entry="m3", domain="infra",
                         confidence=0.9))
    assert out.updated["decision"] == 1  # type: ignore[attr-defined]
    [entry] = state.list_entries(db)
    assert entry.summary == "We stay on nginx for the proxy" and entry.confidence == 0.9
    assert entry.source_entry == "m3"  # the entry cites the latest message that said it
    # Another domain or category is another entry.
    apply(db, cand("Stay on nginx for the proxy", domain="general"),
          cand("Stay on nginx for the proxy", category="task", domain="infra"))
    assert len(state.list_entries(db)) == 3


def test_a_rejection_is_never_stored_twice(db: Database) -> None:
    apply(db, cand("Don't restart postgres during business hours", "rejected",
                   domain="database"))
    [entry] = state.list_entries(db)
    state.archive(db, entry.id, actor="cli")
    out = apply(db, cand("don't restart Postgres in business hours!", "rejected", entry="m9",
                         domain="infra"))
    assert out.rejections_seen == 1  # type: ignore[attr-defined]
    assert db.scalar("SELECT count(*) FROM state") == 1
    # Twice in one batch: once.
    apply(db, cand("Never push to main", "rejected", entry="a"),
          cand("never push to main.", "rejected", entry="b"))
    assert db.scalar("SELECT count(*) FROM state WHERE category = 'rejected'") == 2


def test_facts_supersede_and_keep_their_history(db: Database) -> None:
    apply(db, FactCandidate("editor", "vim", "m1", at="2026-03-01T10:00:00Z"))
    out = apply(db, FactCandidate("Editor", "Vim.", "m2", at="2026-03-02T10:00:00Z"))
    assert out.facts == {"unchanged": 1}  # type: ignore[attr-defined]
    out = apply(db, FactCandidate("editor", "helix", "m3", at="2026-03-03T10:00:00Z"))
    assert out.facts == {"superseded": 1}  # type: ignore[attr-defined]
    current = facts.current(db, "main", "editor")
    assert current is not None and current.value == "helix" and current.source_entry == "m3"
    before = facts.previous(db, "main", "editor")
    assert before is not None and before.value == "vim"
    assert before.superseded_by == current.id and before.superseded_at == "2026-03-03T10:00:00Z"


def test_tombstones_stop_candidates(db: Database) -> None:
    apply(db, cand("Use Caddy for TLS", entry="m1"), FactCandidate("proxy", "caddy", "m1"),
          EpisodeCandidate("decision", "Chose Caddy", "m1"))
    [entry] = state.list_entries(db)
    tombstones.bury_state(db, entry.id, actor="tui", reason="wrong")
    fact = facts.current(db, "main", "proxy")
    assert fact is not None
    tombstones.bury_fact(db, fact.id, actor="tui")
    ep_id = db.scalar("SELECT id FROM episodes")
    tombstones.bury_episode(db, ep_id, actor="tui")
    out = apply(db, cand("use caddy for TLS!", entry="m7"), FactCandidate("proxy", "Caddy", "m7"),
                EpisodeCandidate("decision", "Chose Caddy", "m1"),
                cand("Something else entirely", entry="m1"))
    assert out.tombstoned == 3  # type: ignore[attr-defined]
    assert [e.summary for e in state.list_entries(db)] == ["Something else entirely"]
    assert facts.current(db, "main", "proxy") is None
    assert db.scalar("SELECT count(*) FROM episodes") == 0


def test_index_compares_only_likely_candidates() -> None:
    index = SimilarityIndex(0.82)
    norm = text.normalise("deploy the billing service to staging")
    index.add("b", Item(1, norm, frozenset(text.keywords(norm))))
    other = text.normalise("deploys the billing services to staging")
    assert index.best("b", other) is not None
    assert index.best("b", text.normalise("write the quarterly newsletter")) is None
    assert index.best("other", norm) is None


# -- restatements update, changed decisions supersede -------------------------------------

PG15 = "For the analytics work, pin the events database to Postgres 15"
PG16 = "For the analytics work, pin the events database to Postgres 16"


def test_marks_tell_numbers_and_names_apart() -> None:
    assert {"15", "postgres"} <= marks(PG15)
    a, b = "Don't restart postgres during business hours", "don't restart Postgres in hours"
    assert same_marks(marks(a), words_of(a), marks(b), words_of(b))
    assert not same_marks(marks(PG15), words_of(PG15), marks(PG16), words_of(PG16))
    assert marks("run mix phx.server with user_id 7") >= {"phx.server", "user_id", "7"}


def test_a_changed_decision_supersedes_and_cites_its_own_message(db: Database) -> None:
    apply(db, cand(PG15, entry="m15", domain="database"))
    out = apply(db, cand(PG16, entry="m16", domain="database"))
    assert out.superseded == {"decision": 1} and not out.updated  # type: ignore[attr-defined]
    [current] = state.list_entries(db)
    assert current.summary == PG16 and current.source_entry == "m16"
    old, new = state.chain(db, current.id)
    assert old.summary == PG15 and old.source_entry == "m15"
    assert old.status == "superseded" and old.superseded_by == new.id == current.id
    # Within one batch too, and back again: the chain grows, nothing is overwritten.
    apply(db, cand(PG15.replace("15", "17"), entry="m17", domain="database"),
          cand(PG15, entry="m15b", domain="database"))
    chain = state.chain(db, current.id)
    assert [(e.summary[-2:], e.source_entry) for e in chain] == [
        ("15", "m15"), ("16", "m16"), ("17", "m17"), ("15", "m15b")]
    assert [e.status for e in chain] == ["superseded"] * 3 + ["active"]


def test_a_restatement_updates_in_place_and_records_the_new_source(db: Database) -> None:
    apply(db, cand(PG15, entry="m1", domain="database", confidence=0.6))
    out = apply(db, cand(PG15.replace("pin", "we pin") + "!", entry="m2", domain="database",
                         confidence=0.9))
    assert out.updated == {"decision": 1} and not out.superseded  # type: ignore[attr-defined]
    [entry] = state.list_entries(db)
    assert entry.source_entry == "m2" and entry.confidence == 0.9
    # The same words again from a later message: a duplicate, still citing the latest.
    out = apply(db, cand(PG15.replace("pin", "we pin"), entry="m3", domain="database"))
    assert out.duplicates == 1  # type: ignore[attr-defined]
    assert state.get(db, entry.id).source_entry == "m3"
    # The audit keeps every earlier source.
    before = [r.before for r in audit.recent(db, target=f"state:{entry.id}")
              if r.action == "state.update"]
    assert [b["source_entry"] for b in before] == ["m2", "m1"]


def test_numbered_entries_are_not_collapsed(db: Database) -> None:
    n = 1500
    items: list[object] = []
    for i in range(n):
        items.append(cand(f"We decided to use tool {i} for the batch importer", entry=f"d{i}"))
        items.append(cand(f"Please add health check endpoint number {i} to the API",
                          category="task", entry=f"t{i}"))
    started = time.perf_counter()
    for start in range(0, len(items), 200):
        apply(db, *items[start:start + 200])
    seconds = time.perf_counter() - started
    rows = dict(db.rows("SELECT category || '/' || status, count(*) FROM state GROUP BY 1"))
    # Each decision replaced the one before (a chain); each task is its own entry.
    assert rows == {"decision/active": 1, "decision/superseded": n - 1, "task/active": n}
    assert seconds < 30, seconds


def test_tombstones_match_small_rewordings_of_the_same_kind(db: Database) -> None:
    apply(db, cand(PG15, entry="m1", domain="database"))
    [entry] = state.list_entries(db)
    tombstones.bury_state(db, entry.id, actor="cli")
    out = apply(db, cand(PG15.replace("database", "DB") + "!", entry="m2", domain="database"),
                cand(PG16, entry="m3", domain="database"),
                cand(PG15.replace("database", "DB"), category="task", entry="m4"))
    assert out.tombstoned == 1  # type: ignore[attr-defined]
    # Another number is another decision; another kind is another memory.
    assert sorted((e.category, e.source_entry) for e in state.list_entries(db)) == [
        ("decision", "m3"), ("task", "m4")]
    assert tombstones.SIMILARITY == 0.85
