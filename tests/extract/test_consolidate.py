"""Consolidation: near-duplicates update, rejections never twice, facts supersede, tombstones."""

from __future__ import annotations

from memtui import text
from memtui.db import Database
from memtui.extract.candidates import (
    EpisodeCandidate,
    Extraction,
    FactCandidate,
    StateCandidate,
)
from memtui.extract.consolidate import DEFAULT_THRESHOLD, Consolidator, SimilarityIndex, _Item
from memtui.stores import facts, state, tombstones


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
    assert entry.source_entry == "m1"  # provenance of the first sighting stays
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
    index.add("b", _Item(1, norm, frozenset(text.keywords(norm))))
    other = text.normalise("deploys the billing services to staging")
    assert index.best("b", other) is not None
    assert index.best("b", text.normalise("write the quarterly newsletter")) is None
    assert index.best("other", norm) is None
