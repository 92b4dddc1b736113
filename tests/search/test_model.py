"""The real all-MiniLM-L6-v2 (one shared load): no silent truncation, fast path equals torch."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memtui.home import Home
from memtui.search.hybrid import Searcher, SearchOptions
from memtui.search.index import SearchIndex
from tests.search.conftest import add_transcript

pytestmark = pytest.mark.slow


def test_numpy_query_encoder_matches_sentence_transformers(real_embedder: Any) -> None:
    queries = ["When did Melanie paint a sunrise?", "x", "日本語の質問 with émoji 🎉",
               "deploy " * 700]
    reference = real_embedder.embed_documents(queries)
    for query, ref in zip(queries, reference, strict=True):
        real_embedder._query_cache.clear()
        fast = real_embedder.embed_query(query)
        assert fast.shape == (384,) and abs(float(np.linalg.norm(fast)) - 1) < 1e-5
        assert float(np.dot(fast, ref)) > 0.999, query


def test_query_vectors_are_cached_by_word_pieces(real_embedder: Any) -> None:
    real_embedder._query_cache.clear()
    first = real_embedder.embed_query("When did Melanie paint a sunrise?")
    again = real_embedder.embed_query("when did   melanie paint a SUNRISE ?")  # same pieces
    assert again is first and not first.flags.writeable
    other = real_embedder.embed_query("When did Melanie paint a lake?")
    assert other is not first and float(other @ first) < 0.999


def test_long_text_is_windowed_not_truncated(real_embedder: Any) -> None:
    model = real_embedder._model()
    assert model.max_seq_length == 512  # raised from the default 256
    head = "The quarterly budget review covered travel costs and hiring plans. " * 60
    tail = "Our cat Pixel loves chasing the red laser pointer around the kitchen. " * 25
    windows = real_embedder.windows(head + tail)
    assert len(windows) >= 2 and all(n <= 510 for _, n in windows)
    assert "".join(w for w, _ in windows) == head + tail  # every character is embedded
    tokens = len(model.tokenizer(head + tail, add_special_tokens=False)["input_ids"])
    assert sum(n for _, n in windows) == tokens
    whole, first_only = real_embedder.embed_documents([head + tail, windows[0][0]])
    query = real_embedder.embed_query("cat chasing a laser pointer")
    assert float(whole @ query) > float(first_only @ query) + 0.05  # the tail counts


def test_real_model_end_to_end(home: Home, transcript: Path, real_embedder: Any) -> None:
    home.settings.search.session_chunking = "message"
    add_transcript(home, transcript)
    idx = SearchIndex(home, "main", embedder=real_embedder)
    report = idx.sync()
    assert report.fallback == [] and report.pending_vectors == 0
    assert idx.status().chunks["sessions"] == 5  # one chunk per message
    assert report.embedded == idx.db.scalar("SELECT count(*) FROM chunks_vec")
    res = Searcher(idx).search("What pet did Ana adopt?", SearchOptions(min_score=0.0))
    assert res.results[0].message_ids == ["m1"]
    assert res.provider == "local" and res.model == "all-MiniLM-L6-v2"
