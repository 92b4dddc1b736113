"""A changed entry supersedes an older one only when both are about the same subject."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui import text
from memtui.db import Database
from memtui.extract.candidates import Extraction, FactCandidate, StateCandidate
from memtui.extract.consolidate import DEFAULT_THRESHOLD, Consolidator, Outcome
from memtui.extract.similarity import Item, SimilarityIndex, keys_of, marks, words_of
from memtui.extract.subject import restates, same_subject
from memtui.stores import facts, state

# (earlier, later): the later is the same decision changed, and replaces the earlier.
SAME_SUBJECT = [
    ("For the analytics work, pin the events database to Postgres 15",
     "For the analytics work, pin the events database to Postgres 16"),
    ("We'll keep the api database on Postgres 15",
     "We decided to keep the api database on Postgres 16"),
    ("The deploy window is Tuesday 10:00 CET", "The deploy window is Thursday 14:00 CET"),
    ("Let's run the nightly backup at 02:00 UTC", "Let's run the nightly backup at 03:30 UTC"),
    ("The staging cluster runs Kubernetes 1.28", "The staging cluster runs Kubernetes 1.30"),
    ("Pin numpy to 1.26 in the worker image", "Pin numpy to 2.0 in the worker image"),
    ("We decided to use tool 5 for the batch importer",
     "We decided to use tool 6 for the batch importer"),
]

# (earlier, later): two decisions about different things; both stay active.
OTHER_SUBJECT = [
    ("We decided to keep Postgres 15 for the api database.",
     "We decided to keep Postgres 16 for the billing database."),
    ("We decided to keep Postgres 15 for the api database.",
     "We decided to keep Postgres 15 for the billing database."),
    ("We decided item 3 uses port 8003.", "We decided item 4 uses port 8004."),
    ("We decided item 3 uses port 8080.", "We decided item 4 uses port 8080."),
    ("Ticket #41: pin numpy to 1.26 in the worker image",
     "Ticket #42: pin numpy to 1.26 in the worker image"),
    ("The api service listens on port 8001", "The auth service listens on port 8002"),
    ("Use pnpm for the frontend", "Use npm for the frontend"),
]


def consolidate(db: Database, summary: str, entry: str) -> Outcome:
    cand = StateCandidate(category="decision", summary=summary, source_entry=entry,
                          domain="general")
    return Consolidator(db, "main").apply(Extraction(state=[cand]), source_file="t.jsonl")


@pytest.mark.parametrize(("earlier", "later"), SAME_SUBJECT)
def test_a_changed_decision_about_the_same_subject_supersedes(
    db: Database, earlier: str, later: str
) -> None:
    assert text.similarity(earlier, later) >= DEFAULT_THRESHOLD
    consolidate(db, earlier, "m1")
    out = consolidate(db, later, "m2")
    assert out.superseded == {"decision": 1}
    [current] = state.list_entries(db)
    assert current.summary == later


@pytest.mark.parametrize(("earlier", "later"), OTHER_SUBJECT)
def test_a_decision_about_another_subject_leaves_the_first_active(
    db: Database, earlier: str, later: str
) -> None:
    assert text.similarity(earlier, later) >= DEFAULT_THRESHOLD
    consolidate(db, earlier, "m1")
    out = consolidate(db, later, "m2")
    assert not out.superseded and not out.updated and out.added == {"decision": 1}
    assert sorted(e.summary for e in state.list_entries(db)) == sorted([earlier, later])


def test_thousands_of_numbered_decisions_all_stay_active(db: Database) -> None:
    n = 2000
    cons = Consolidator(db, "main")
    for start in range(0, n, 250):
        cons.apply(Extraction(state=[
            StateCandidate(category="decision", summary=f"We decided item {i} uses port "
                           f"{9000 + i}.", source_entry=f"d{i}", domain="general")
            for i in range(start, start + 250)]), source_file="t.jsonl")
    rows = dict(db.rows("SELECT status, count(*) FROM state GROUP BY 1"))
    assert rows == {"active": n}


def test_facts_supersede_only_their_own_key(db: Database) -> None:
    def put(key: str, value: str, entry: str) -> None:
        Consolidator(db, "main").apply(Extraction(facts=[FactCandidate(
            key=key, value=value, source_entry=entry)]), source_file="t.jsonl")

    put("api database", "Postgres 15", "m1")
    put("billing database", "Postgres 16", "m2")
    assert facts.current(db, "main", "api database").value == "Postgres 15"  # type: ignore[union-attr]
    put("api database", "Postgres 16", "m3")
    assert facts.current(db, "main", "api database").value == "Postgres 16"  # type: ignore[union-attr]
    assert facts.current(db, "main", "billing database").value == "Postgres 16"  # type: ignore[union-attr]


# -- the rule itself, over generated wordings ---------------------------------------------

TEMPLATES = [
    "We decided to keep {thing} {v} for the {subject} service.",
    "Let's pin the {subject} cluster to {thing} {v}",
    "For the {subject} database we will stay on {thing} {v}",
    "The {subject} team settled on {thing} {v} going forward",
    "Going forward, {subject} jobs run on {thing} {v}",
]
THINGS = ["Postgres", "Redis", "Node", "Python", "Kafka", "Kubernetes", "Terraform"]
SUBJECTS = ["api", "billing", "search", "auth", "events", "reports", "ledger", "mobile",
            "checkout", "invoices", "analytics", "gateway"]
versions = st.one_of(st.integers(1, 99).map(str),
                     st.tuples(st.integers(1, 30), st.integers(0, 40)).map(
                         lambda t: f"{t[0]}.{t[1]}"))


def verdict(earlier: str, later: str) -> str:
    """What consolidation does with ``later`` when ``earlier`` is known: "restates",
    "supersedes" or "another" (a new entry beside it)."""
    index = SimilarityIndex(DEFAULT_THRESHOLD)
    norm = text.normalise(earlier)
    index.add("b", Item(1, norm, keys_of(norm), marks=marks(earlier),
                         words=words_of(earlier, norm), summary=earlier))
    later_norm = text.normalise(later)
    found = index.find("b", later_norm, marks(later), words_of(later, later_norm),
                       changed=True, summary=later)
    if found is None:
        return "another"
    return "restates" if found.same else "supersedes"


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(TEMPLATES), st.sampled_from(THINGS), st.sampled_from(SUBJECTS),
       versions, versions)
def test_a_new_version_of_the_same_subject_supersedes(
    template: str, thing: str, subject: str, v1: str, v2: str
) -> None:
    earlier = template.format(thing=thing, subject=subject, v=v1)
    later = template.format(thing=thing, subject=subject, v=v2)
    assert verdict(earlier, later) == ("restates" if v1 == v2 else "supersedes")


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(TEMPLATES), st.sampled_from(THINGS),
       st.lists(st.sampled_from(SUBJECTS), min_size=2, max_size=2, unique=True),
       versions, versions)
def test_another_subject_never_supersedes_or_restates(
    template: str, thing: str, subjects: list[str], v1: str, v2: str
) -> None:
    earlier = template.format(thing=thing, subject=subjects[0], v=v1)
    later = template.format(thing=thing, subject=subjects[1], v=v2)
    assert verdict(earlier, later) == "another"
    assert not restates(earlier, later)
    assert not same_subject(earlier, later) or v1 == v2
