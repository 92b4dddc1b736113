"""The real all-MiniLM-L6-v2 (one shared load): no silent truncation, fast path equals torch."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memtui.home import Home
from memtui.search.hybrid import Searcher, SearchOptions
from memtui.search.index import SearchIndex
from tests.search.conftest import add_transcript

pytestmark = pytest.mark.slow


QUERIES = ["When did Melanie paint a sunrise?", "x", "日本語の質問 with émoji 🎉",
           "deploy " * 700]  # the last is longer than one 512-piece window


def test_default_query_encoder_is_int8_onnx_close_to_sentence_transformers(
        real_embedder: Any) -> None:
    reference = real_embedder.embed_documents(QUERIES)
    for query, ref in zip(QUERIES, reference, strict=True):
        real_embedder.clear_query_cache()
        fast = real_embedder.embed_query(query)
        assert fast.dtype == np.float32 and fast.shape == (384,)
        assert abs(float(np.linalg.norm(fast)) - 1) < 1e-5
        # int8 weights and activations: close to, not equal to, the float32 vector
        assert float(np.dot(fast, ref)) > 0.98, query
    assert real_embedder.query_encoder_name == "onnxruntime int8"
    assert real_embedder.describe_query_encoder() == "onnxruntime int8"


def test_fp32_onnx_and_numpy_encoders_equal_sentence_transformers(real_embedder: Any) -> None:
    from memtui.search.encoders.numpy_query import NumpyEncoder
    from memtui.search.encoders.onnx_query import OnnxEncoder

    reference = real_embedder.embed_documents(QUERIES)
    encoders = [OnnxEncoder(real_embedder.path, precision="fp32"),
                NumpyEncoder(real_embedder.path)]
    for query, ref in zip(QUERIES, reference, strict=True):
        for enc in encoders:
            assert float(np.dot(enc.encode(query), ref)) > 0.9999, (query, type(enc))


def test_query_precision_setting_reaches_the_encoder(home: Home) -> None:
    from memtui.search.encoders.embedder import get_embedder

    home.settings.search.query_precision = "fp32"
    emb = SearchIndex(home, "main").embedder
    assert emb is get_embedder("local", "all-MiniLM-L6-v2", query_precision="fp32")
    assert emb.describe_query_encoder() == "onnxruntime fp32"  # type: ignore[union-attr]
    assert SearchIndex(home, "main").status().query_encoder == "onnxruntime fp32"


def test_without_onnxruntime_queries_use_the_numpy_encoder(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from memtui.search.encoders import onnx_query
    from memtui.search.encoders.embedder import LocalEmbedder
    from memtui.search.encoders.numpy_query import NumpyEncoder

    monkeypatch.setattr(onnx_query, "available", lambda: False)
    emb = LocalEmbedder()
    vec = emb.embed_query("When did Melanie paint a sunrise?")
    assert type(emb.query_encoder()) is NumpyEncoder
    assert emb.query_encoder_name == "numpy fp32 (onnxruntime is missing)"
    assert abs(float(np.linalg.norm(vec)) - 1) < 1e-5


def test_query_vectors_are_cached_by_word_pieces(real_embedder: Any) -> None:
    real_embedder.clear_query_cache()
    first = real_embedder.embed_query("When did Melanie paint a sunrise?")
    again = real_embedder.embed_query("when did   melanie paint a SUNRISE ?")  # same pieces
    assert again is first and not first.flags.writeable
    other = real_embedder.embed_query("When did Melanie paint a lake?")
    assert other is not first and float(other @ first) < 0.999


def test_long_text_is_windowed_not_truncated(real_embedder: Any) -> None:
    model = real_embedder.sentence_model()
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


def test_built_query_encoder_is_cached_and_a_damaged_cache_is_rebuilt(
        real_embedder: Any, tmp_path: Path) -> None:
    from memtui.search.encoders.onnx_query import OnnxEncoder

    query = "When did Melanie paint a sunrise?"
    stale, recent = tmp_path / "query-encoder-int8-old.onnx", tmp_path / "query-encoder-x.onnx"
    for f in (stale, recent):
        f.write_bytes(b"built by another version")
    os.utime(stale, (0, time.time() - 40 * 86_400))
    first = OnnxEncoder(real_embedder.path, cache_dir=tmp_path)
    assert not first.from_cache and first.cache_path is not None
    assert not stale.exists() and recent.exists()  # only month-old graphs are pruned
    assert first.cache_path.parent == tmp_path and first.cache_path.stat().st_size > 5_000_000
    again = OnnxEncoder(real_embedder.path, cache_dir=tmp_path)
    assert again.from_cache and not again.blocks  # no layer weights loaded
    assert np.array_equal(again.encode(query), first.encode(query))
    fp32 = OnnxEncoder(real_embedder.path, precision="fp32", cache_dir=tmp_path)
    assert fp32.cache_path != first.cache_path and not fp32.from_cache

    changed = tmp_path / "numpy_query_changed.py"
    changed.write_text("# a different builder\n")
    import memtui.search.encoders.numpy_query as numpy_query

    original = numpy_query.__file__
    numpy_query.__file__ = str(changed)
    try:
        assert OnnxEncoder(real_embedder.path, cache_dir=tmp_path).cache_path != first.cache_path
    finally:
        numpy_query.__file__ = original

    class Other(OnnxEncoder):  # another family (the extraction reader's adapted weights)
        cache_family = "reader-encoder"

        def cache_salt(self) -> bytes:
            return b"adapter 1"

    os.utime(first.cache_path, (0, time.time() - 40 * 86_400))
    other = Other(real_embedder.path, cache_dir=tmp_path)
    assert other.cache_path is not None and other.cache_path.name.startswith("reader-encoder-")
    assert first.cache_path.exists()  # a family never prunes another's graphs
    os.utime(first.cache_path, None)

    first.cache_path.write_bytes(b"not an onnx model")
    repaired = OnnxEncoder(real_embedder.path, cache_dir=tmp_path)
    assert not repaired.from_cache
    assert np.array_equal(repaired.encode(query), first.encode(query))
    assert first.cache_path.stat().st_size > 5_000_000  # rewritten


def test_cached_query_encoder_loads_without_the_onnx_package(tmp_path: Path) -> None:
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from memtui.search.encoders.embedder import LocalEmbedder\n"
        "e = LocalEmbedder()\n"
        "v = e.embed_query('deploy to production')\n"
        "print(e.query_encoder_name, e.query_encoder().from_cache, 'onnx' in sys.modules,"
        " v.shape)\n"
    )
    env = {**__import__("os").environ, "XDG_CACHE_HOME": str(tmp_path)}
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=env, timeout=120, check=True).stdout.split() for _ in range(2)]
    assert runs[0] == ["onnxruntime", "int8", "False", "True", "(384,)"]  # built it
    assert runs[1] == ["onnxruntime", "int8", "True", "False", "(384,)"]  # no onnx import


def test_an_unwritable_cache_folder_only_costs_the_build(real_embedder: Any,
                                                         tmp_path: Path) -> None:
    from memtui.search.encoders.onnx_query import OnnxEncoder

    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the cache folder should be")
    enc = OnnxEncoder(real_embedder.path, cache_dir=blocked)
    assert not enc.from_cache and blocked.is_file()
    assert abs(float(np.linalg.norm(enc.encode("still works"))) - 1) < 1e-5
