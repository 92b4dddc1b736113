"""In-process vector search: exact cosine with numpy, and binary quantisation with exact rescoring.

Used when sqlite-vec is missing (the ``no-sqlite-vec`` fallback) and by warm,
long-running searchers, where a matrix held in memory answers far faster than a scan
through SQLite. Above ``QUANTISE_ABOVE`` rows a query first ranks every row by the
Hamming distance of sign bits (48 bytes a row for 384 dimensions, popcount on 64-bit
words), keeps the best ``oversample`` candidates, and rescores those exactly.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np

QUANTISE_ABOVE = 50_000
"""Rows above which binary prefiltering is used (below it exact search is as fast)."""


_LIMITER: AbstractContextManager[Any] | None = None
_LIMITER_LOCK = threading.Lock()


def single_thread_blas() -> AbstractContextManager[Any]:
    """A reusable context that runs BLAS on one thread (threadpoolctl, when installed).

    For one query, BLAS threads only cost: the work is a matrix-vector product or a
    dozen-row matmul, and on a busy 2-core box a second thread waiting for its turn adds
    milliseconds.
    """
    global _LIMITER
    with _LIMITER_LOCK:
        if _LIMITER is None:
            try:
                from threadpoolctl import ThreadpoolController
            except ImportError:
                _LIMITER = nullcontext()
            else:
                _LIMITER = _Limit(ThreadpoolController())
        return _LIMITER


class _Limit(AbstractContextManager[Any]):
    def __init__(self, controller: Any) -> None:
        self.controller = controller
        self.local = threading.local()

    def __enter__(self) -> Any:
        ctx = self.controller.limit(limits=1, user_api="blas")
        self.local.ctx = ctx
        return ctx.__enter__()

    def __exit__(self, *exc: Any) -> None:
        self.local.ctx.__exit__(*exc)


def to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest scores, best first."""
    if k <= 0 or scores.size == 0:
        return np.zeros(0, dtype=np.int64)
    if k >= scores.size:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, k - 1)[:k]
    return part[np.argsort(-scores[part], kind="stable")]


@dataclass
class VectorMatrix:
    """Normalised float32 rows with their chunk ids and source codes."""

    ids: np.ndarray
    vectors: np.ndarray
    sources: np.ndarray
    """uint8 code per row (see ``SOURCE_CODES``)."""
    quantise_above: int = QUANTISE_ABOVE
    oversample: int = 40
    _bits: np.ndarray | None = field(default=None, repr=False)
    _pos: dict[int, int] | None = field(default=None, repr=False)

    @classmethod
    def empty(cls, dims: int) -> VectorMatrix:
        return cls(np.zeros(0, dtype=np.int64), np.zeros((0, dims), dtype=np.float32),
                   np.zeros(0, dtype=np.uint8))

    def __len__(self) -> int:
        return int(self.ids.size)

    @property
    def bits(self) -> np.ndarray:
        """Sign bits packed into uint64 words, one row per vector."""
        if self._bits is None:
            packed = np.packbits(self.vectors > 0, axis=1)
            pad = (-packed.shape[1]) % 8
            if pad:
                packed = np.pad(packed, ((0, 0), (0, pad)))
            self._bits = np.ascontiguousarray(packed).view(np.uint64)
        return self._bits

    def row_of(self, chunk_id: int) -> int | None:
        if self._pos is None:
            self._pos = {int(c): i for i, c in enumerate(self.ids.tolist())}
        return self._pos.get(int(chunk_id))

    def vectors_for(self, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        out = {}
        for cid in chunk_ids:
            row = self.row_of(cid)
            if row is not None:
                out[int(cid)] = self.vectors[row]
        return out

    def search(self, query: np.ndarray, k: int,
               allowed: Sequence[int] | None = None) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) of the k nearest rows, best first.

        ``allowed``: source codes to keep (None keeps all).
        """
        n = len(self)
        if n == 0 or k <= 0:
            return []
        with single_thread_blas():
            return self._search(query, k, allowed)

    def _search(self, query: np.ndarray, k: int,
                allowed: Sequence[int] | None) -> list[tuple[int, float]]:
        n = len(self)
        q = np.asarray(query, dtype=np.float32)
        mask = None if allowed is None else np.isin(self.sources, np.asarray(allowed, np.uint8))
        if n > self.quantise_above:
            qbits = np.packbits(q > 0)
            pad = (-qbits.size) % 8
            qwords = np.pad(qbits, (0, pad)).view(np.uint64)
            ham = np.bitwise_count(self.bits ^ qwords).sum(axis=1, dtype=np.int32)
            if mask is not None:
                ham = np.where(mask, ham, np.int32(1 << 20))
            # Rescoring depth: 1% of the rows (at least 2,000) gave recall@10 of 0.97 at 1M
            # clustered rows in bench/bench_search_speed.py; 0.2% gave 0.80.
            keep = min(n, max(k * self.oversample, 2000, n // 100))
            cand = np.argpartition(ham, keep - 1)[:keep]
            if mask is not None:
                cand = cand[mask[cand]]
            scores = self.vectors[cand] @ q
            best = top_k(scores, k)
            return list(zip(self.ids[cand[best]].tolist(), scores[best].tolist(), strict=True))
        scores = self.vectors @ q
        if mask is not None:
            scores = np.where(mask, scores, -np.inf)
        best = top_k(scores, k)
        best = best[np.isfinite(scores[best])]
        return list(zip(self.ids[best].tolist(), scores[best].tolist(), strict=True))
