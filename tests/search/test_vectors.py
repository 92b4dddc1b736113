"""In-memory vector search: binary prefilter + exact rescoring, filters, the BLAS limiter,
and the numpy encoder's GELU."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from memtui.search import vectors
from memtui.search.encoders import numpy_query
from memtui.search.vectors import VectorMatrix, _smallest, rescore_rows, sign_bits


def _clustered(n: int, dims: int = 64, centres: int = 300, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.normal(size=(centres, dims)).astype(np.float32)
    rows = base[rng.integers(0, centres, n)] + rng.normal(0, 0.6, (n, dims)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


def _exact(rows: np.ndarray, q: np.ndarray, k: int, keep: np.ndarray | None = None) -> set[int]:
    scores = rows @ q
    if keep is not None:
        scores = np.where(keep, scores, -np.inf)
    return {int(i) + 1 for i in np.argsort(-scores, kind="stable")[:k]}


def test_sign_bits_are_word_major_packbits() -> None:
    rows = _clustered(7, dims=130)  # not a multiple of 64: padded
    bits = sign_bits(rows)
    assert bits.shape == (3, 7) and bits.dtype == np.uint64 and bits.flags.c_contiguous
    for i in range(7):
        packed = np.packbits(rows[i] > 0)
        want = np.pad(packed, (0, 24 - packed.size)).view(np.uint64)
        assert (bits[:, i] == want).all()
    assert (sign_bits(rows[3]) == bits[:, 3]).all()  # one vector: one word per 64 dims


def test_smallest_picks_exactly_keep_lowest_values_ties_by_index() -> None:
    values = np.array([5, 1, 3, 1, 3, 3, 0, 7], dtype=np.uint16)
    got = _smallest(values, 4)
    assert sorted(got.tolist()) == [1, 2, 3, 6]  # 0, 1, 1, then the first 3
    assert sorted(_smallest(values, 20).tolist()) == list(range(8))


def test_quantised_search_keeps_recall_against_exact() -> None:
    rows = _clustered(6000)
    ids = np.arange(1, 6001)
    exact = VectorMatrix(ids, rows, np.zeros(6000, np.uint8), quantise_above=10**9)
    quant = VectorMatrix(ids, rows, np.zeros(6000, np.uint8), quantise_above=0).prepare()
    assert not exact.quantised and quant.quantised
    rng = np.random.default_rng(1)
    recall = []
    for i in rng.integers(0, 6000, 30):
        q = rows[i] + rng.normal(0, 0.05, rows.shape[1]).astype(np.float32)
        q /= np.linalg.norm(q)
        want = _exact(rows, q, 10)
        assert {c for c, _ in exact.search(q, 10)} == want
        got = quant.search(q, 10)
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
        scores = dict(got)
        assert all(abs(scores[c] - float(rows[c - 1] @ q)) < 1e-5 for c in scores)  # exact
        recall.append(len(want & set(scores)) / 10)
    assert float(np.mean(recall)) >= 0.95


@pytest.mark.parametrize("quantise_above", [0, 10**9])
def test_source_filter_and_nothing_allowed(quantise_above: int) -> None:
    rows = _clustered(3000)
    sources = (np.arange(3000) % 3).astype(np.uint8)
    m = VectorMatrix(np.arange(1, 3001), rows, sources, quantise_above=quantise_above)
    q = rows[42]
    got = m.search(q, 20, [1, 2])
    assert len(got) == 20 and all(sources[c - 1] in (1, 2) for c, _ in got)
    assert got[0][0] in _exact(rows, q, 20, keep=sources != 0)
    assert m.search(q, 5, [3]) == []  # no row has source 3
    assert len(m.search(q, 5)) == 5


def test_blas_limiter_nests_and_restores(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    class Ctx:
        def __enter__(self) -> None:
            calls.append("limit")

        def __exit__(self, *exc: object) -> None:
            calls.append("restore")

    class Controller:
        def limit(self, **kw: object) -> Ctx:
            return Ctx()

    lim = vectors.ThreadLimit(Controller())
    with lim:
        with lim:
            pass
        worker = threading.Thread(target=lambda: lim.__enter__() or lim.__exit__())
        worker.start()
        worker.join()
        assert calls == ["limit"]  # still limited while an outer user holds it
    assert calls == ["limit", "restore"]


def test_gelu_matches_erf() -> None:
    x = np.linspace(-8, 8, 4001, dtype=np.float32)
    want = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.tolist()])
    got = numpy_query.gelu(x.copy())
    assert got.dtype == np.float32
    assert float(np.max(np.abs(got - want))) < 2e-6


def test_rescore_depth() -> None:
    assert rescore_rows(150, 10) == 150  # never more than there are
    assert rescore_rows(1_000, 10) == 10 * vectors.RESCORE_PER_K
    assert rescore_rows(10_000, 10) == 1_000  # a tenth of a small index
    assert rescore_rows(100_000, 10) == vectors.RESCORE_MIN
    assert rescore_rows(1_000_000, 10) == 10_000
    assert rescore_rows(100_000, 500) == 500 * vectors.RESCORE_PER_K


def test_int8_column_quantisation_is_within_half_a_step() -> None:
    from memtui.search.encoders.onnx_query import quantise_columns

    rng = np.random.default_rng(3)
    w = rng.standard_normal((64, 16)).astype(np.float32) * rng.uniform(0.01, 5, 16)
    w[:, 3] = 0.0  # an all-zero column must not divide by zero
    q, scale = quantise_columns(w)
    assert q.dtype == np.int8 and scale.shape == (16,) and np.all(scale > 0)
    assert np.all(np.abs(q.astype(np.float32) * scale - w) <= scale / 2 + 1e-7)
    assert np.all(np.abs(q).max(axis=0)[np.arange(16) != 3] == 127)  # the range is used
    assert not q[:, 3].any()


def test_unknown_query_precision_is_refused() -> None:
    from memtui.search.encoders.onnx_query import build_graph

    with pytest.raises(ValueError, match="int4"):
        build_graph(None, "int4")  # type: ignore[arg-type]


@pytest.mark.parametrize("allowed", [None, [1], [0, 1], [3]])
def test_exact_scanner_in_onnxruntime_equals_numpy(allowed: list[int] | None) -> None:
    from memtui.search.exactscan import ExactScanner

    rows = _clustered(3000)
    ids = np.arange(1, 3001)
    sources = (np.arange(3000) % 3).astype(np.uint8)  # no row has source 3
    numpy_side = VectorMatrix(ids, rows, sources, quantise_above=10**9)
    onnx_side = VectorMatrix(ids, rows, sources, quantise_above=10**9).use_exact_scanner(
        ExactScanner(rows))
    rng = np.random.default_rng(5)
    for i in rng.integers(0, 3000, 10):
        q = rows[i] + rng.normal(0, 0.05, rows.shape[1]).astype(np.float32)
        q /= np.linalg.norm(q)
        for k in (1, 24, 5000):  # more than there are rows, too
            want = numpy_side.search(q, k, allowed)
            got = onnx_side.search(q, k, allowed)
            # the two products round differently in the last bits: near-ties may swap
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
            assert len(got) == len(want)
            if k >= 3000:  # every allowed row
                assert {c for c, _ in got} == {c for c, _ in want}
            else:
                assert [c for c, _ in got[:1]] == [c for c, _ in want[:1]]
    assert onnx_side.search(rows[0], 10, [3]) == []
    assert onnx_side.search(rows[0], 0) == []
