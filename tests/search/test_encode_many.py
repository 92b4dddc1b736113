"""Many short texts in one run (the classifier's path) give the vectors they get one by one."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.slow

TEXTS = ["no", "nope, not that", "fine, 4096 it is", "fine, 4097 it is",  # two of one length
         "xdist yes, that's the plan", "ok go ahead", "ok go ahead",  # a duplicate
         "I'd rather not run another stateful service for this, an in-process LRU is enough",
         "that's a huge change for a tiny win. keep it sync",
         "deploy " * 700]  # longer than one 512-piece window: the windowed path


@pytest.mark.parametrize("precision", ["int8", "fp32"])
def test_encode_many_equals_encode_ids_one_by_one(real_embedder: Any, tmp_path: Path,
                                                  precision: str) -> None:
    from memtui.search.encoders.onnx_query import OnnxEncoder

    enc = OnnxEncoder(real_embedder.path, precision=precision, cache_dir=tmp_path)
    batch = [enc.token_ids(t) for t in TEXTS]
    lengths = [len(ids) for ids in batch]
    assert lengths[2] == lengths[3] and lengths[-1] > enc.max_tokens  # the cases above
    assert enc.batched_cache_path is not None and not enc.batched_cache_path.exists()
    many = enc.encode_many(batch)
    assert enc.batched_cache_path.exists()  # built on first use, kept for the next process
    single = np.vstack([enc.encode_ids(ids) for ids in batch])
    assert many.shape == (len(TEXTS), 384) and many.dtype == np.float32
    assert float(np.abs(many - single).max()) < 1e-4
    assert np.allclose(np.linalg.norm(many, axis=1), 1, atol=1e-5)
    again = OnnxEncoder(real_embedder.path, precision=precision, cache_dir=tmp_path)
    assert again.from_cache and again.cache_path != again.batched_cache_path
    assert np.array_equal(again.encode_many(batch), many)  # the batched graph from cache
    assert enc.encode_many([]).shape == (0, 384)


def test_many_texts_of_one_length_in_several_runs(real_embedder: Any, tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.search.encoders import onnx_query
    from memtui.search.encoders.onnx_query import OnnxEncoder

    enc = OnnxEncoder(real_embedder.path, cache_dir=tmp_path)
    words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "theta", "kappa"]
    texts = [f"{a} then {b}" for a in words for b in words]
    batch = [enc.token_ids(t) for t in texts]
    assert {len(ids) for ids in batch} == {5}
    monkeypatch.setattr(onnx_query, "BATCH_TOKENS", 15)  # runs of 3 texts, one left alone
    single = np.vstack([enc.encode_ids(ids) for ids in batch])
    assert float(np.abs(enc.encode_many(batch) - single).max()) < 1e-4


def test_numpy_encoder_encode_many_is_encode_ids(real_embedder: Any) -> None:
    from memtui.search.encoders.numpy_query import NumpyEncoder

    enc = NumpyEncoder(real_embedder.path)
    batch = [enc.token_ids(t) for t in TEXTS[:4]]
    assert np.array_equal(enc.encode_many(batch), np.vstack([enc.encode_ids(i) for i in batch]))


def test_embed_queries_uses_and_fills_the_query_cache(real_embedder: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    real_embedder.clear_query_cache()
    cached = real_embedder.embed_query("fine, 4096 it is")
    encoder = real_embedder.query_encoder()
    asked: list[list[tuple[int, ...]]] = []
    original = encoder.encode_many

    def spy(batch: list[tuple[int, ...]]) -> np.ndarray:
        asked.append(list(batch))
        return original(batch)

    monkeypatch.setattr(encoder, "encode_many", spy)
    texts = ["fine, 4096 it is", "ok go ahead", "OK  go ahead", "keep it sync"]
    rows = real_embedder.embed_queries(texts)
    assert rows.shape == (4, 384) and np.array_equal(rows[0], cached)
    # only the new texts were computed, and "OK  go ahead" shares the word pieces of "ok go ahead"
    assert asked == [[tuple(encoder.token_ids("ok go ahead")),
                      tuple(encoder.token_ids("keep it sync"))]]
    assert np.array_equal(rows[1], rows[2])

    def refuse(ids: Any) -> np.ndarray:
        raise AssertionError(f"recomputed {ids}")

    monkeypatch.setattr(encoder, "encode_ids", refuse)
    assert np.array_equal(real_embedder.embed_query("keep it sync"), rows[3])  # now cached
    assert real_embedder.embed_queries([]).shape == (0, 384)
    real_embedder.clear_query_cache()
    monkeypatch.undo()
    alone = np.vstack([real_embedder.embed_query(t) for t in texts])
    assert float(np.abs(alone - rows).max()) < 1e-4


def test_classifier_embedding_goes_through_embed_queries(monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.extract.classify.features import model_embed
    from memtui.search.encoders.embedder import LocalEmbedder, get_embedder

    calls: list[list[str]] = []
    original = LocalEmbedder.embed_queries

    def spy(self: LocalEmbedder, texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return original(self, texts)

    monkeypatch.setattr(LocalEmbedder, "embed_queries", spy)
    embed = model_embed()
    vectors = embed(["go ahead", "hold off on that"])
    assert calls == [["go ahead", "hold off on that"]]
    embedder = get_embedder("local", "all-MiniLM-L6-v2")
    embedder.clear_query_cache()  # type: ignore[attr-defined]
    one = np.vstack([embedder.embed_query(t) for t in ["go ahead", "hold off on that"]])
    assert float(np.abs(vectors - one).max()) < 1e-4
    assert embed([]).shape == (0, 384)
