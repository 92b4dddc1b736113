"""A word that is in the memory is found at the default min_score (issue 9)."""

from __future__ import annotations

from typing import Any

import pytest

from memtui.home import Home
from memtui.search import engine

NOTES = ["Rotated the TLS certificates on the load balancer",
         "The deploy key lives in vault under ops/deploy",
         "Ana prefers short standups on Mondays",
         "We decided to keep Postgres 15 for the api database",
         "Kubernetes upgrade planned for the second week of June",
         "Backups run nightly at 02:00 UTC to the cold bucket"]


@pytest.fixture
def notes(home: Home) -> Home:
    workspace = home.workspace("main")
    (workspace / "MEMORY.md").write_text(
        "# Memory\n\n" + "".join(f"- {n}\n" for n in NOTES), encoding="utf-8")
    daily = workspace / "memory"
    daily.mkdir(exist_ok=True)
    for day in range(1, 21):  # a word in most chunks ("ticket") has a bm25 near 0
        (daily / f"2024-05-{day:02d}.md").write_text(
            f"# 2024-05-{day:02d}\n\n- 10:00 worked on ticket {day} about the "
            f"{('frontend', 'login page', 'cache', 'queue')[day % 4]}\n", encoding="utf-8")
    return home


@pytest.mark.parametrize("word", ["Postgres", "standups", "vault", "Kubernetes", "backups"])
def test_one_word_that_is_there_is_found_at_the_default_min_score(
        notes: Home, real_embedder: Any, word: str) -> None:
    opts = engine.options(notes)
    assert opts.min_score == pytest.approx(0.35)  # the default
    res = engine.search(notes, "main", word, opts, embedder=real_embedder)
    assert res.results and res.results[0].path == "MEMORY.md", word


def test_a_common_word_is_found_and_an_absent_one_is_not(notes: Home,
                                                         real_embedder: Any) -> None:
    opts = engine.options(notes)
    common = engine.search(notes, "main", "ticket", opts, embedder=real_embedder)
    assert len(common.results) == opts.max_results
    assert all("ticket" in h.snippet for h in common.results)
    assert engine.search(notes, "main", "zebra", opts, embedder=real_embedder).results == []
    both = engine.search(notes, "main", "Postgres zebra", opts, embedder=real_embedder)
    assert all(h.score >= opts.min_score for h in both.results)  # not every word is there


def test_ranking_without_a_threshold_is_unchanged(notes: Home, real_embedder: Any) -> None:
    """Hits held back only by min_score keep their own score and order."""
    everything = engine.search(notes, "main", "standups", engine.options(notes, min_score=0),
                               embedder=real_embedder)
    kept = engine.search(notes, "main", "standups", engine.options(notes),
                         embedder=real_embedder)
    by_id = {h.chunk_id: h.score for h in everything.results}
    assert [h.chunk_id for h in kept.results] == [
        c for c in by_id if c in {h.chunk_id for h in kept.results}]
    assert all(h.score == pytest.approx(by_id[h.chunk_id]) for h in kept.results)


def test_a_high_min_score_still_asks_for_more_than_the_words(notes: Home,
                                                             real_embedder: Any) -> None:
    strict = engine.options(notes, min_score=0.6)  # above what the words alone count for
    res = engine.search(notes, "main", "standups", strict, embedder=real_embedder)
    assert all(h.score >= 0.6 for h in res.results)
