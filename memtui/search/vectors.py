"""In-process vector search: exact cosine with numpy, and binary quantisation with exact rescoring.

Used when sqlite-vec is missing (the ``no-sqlite-vec`` fallback) and by warm,
long-running searchers, where a matrix held in memory answers far faster than a scan
through SQLite. Above ``QUANTISE_ABOVE`` rows a query first ranks every row by the
Hamming distance of sign bits (48 bytes a row for 384 dimensions), keeps the best
``rescore_rows`` candidates, and rescores those exactly.

The sign bits are stored word-major (one contiguous uint64 array per 64 dimensions), so
the Hamming pass is six xor + popcount + add sweeps over contiguous memory into reused
buffers; candidates are picked from a histogram of the distances (0-384) instead of a
partial sort: several times faster at 1M rows than a row-major
``bitwise_count(...).sum(axis=1)`` and ``argpartition`` (docs/search.md).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

QUANTISE_ABOVE = 5_000
"""Rows above which binary prefiltering is used: an exact scan reads the whole float32
matrix, which a search's embedding and SQLite work push out of the cache in between,
while the Hamming pass reads 48 bytes a row (bench/bench_search_speed.py; docs/search.md)."""

RESCORE_MIN = 2_000
"""Fewest rows rescored exactly after the Hamming pass (on indexes of 20,000 rows or more;
below, a tenth of the rows, which keeps recall@10 against exact search at 0.999 on
clustered rows and gathers fewer rows from memory)."""
RESCORE_SMALL_SHARE = 0.1
RESCORE_SHARE = 0.01
"""... and at least this share of the rows: recall@10 against exact search stays above 0.97
at 1M clustered rows in bench/bench_search_speed.py (0.2% gave 0.80)."""
RESCORE_PER_K = 20
"""... and at least this many per requested neighbour."""


_LIMITER: AbstractContextManager[Any] | None = None
_LIMITER_LOCK = threading.Lock()


def single_thread_blas() -> AbstractContextManager[Any]:
    """A reusable, thread-safe context that runs BLAS on one thread (threadpoolctl).

    For one query, BLAS threads only cost: the work is a matrix-vector product or a
    dozen-row matmul, and on a busy box a second thread waiting for its turn costs more
    than it shares. The limit is process-wide (it is OpenBLAS's setting), so nested and
    concurrent users share one limit: the first to enter sets it, the last to leave
    restores it.
    """
    global _LIMITER
    with _LIMITER_LOCK:
        if _LIMITER is None:
            from threadpoolctl import ThreadpoolController  # a dependency, not optional

            _LIMITER = ThreadLimit(ThreadpoolController())
        return _LIMITER


class ThreadLimit(AbstractContextManager[Any]):
    def __init__(self, controller: Any) -> None:
        self.controller = controller
        self.lock = threading.Lock()
        self.users = 0
        self.ctx: Any = None

    def __enter__(self) -> None:
        with self.lock:
            if self.users == 0:
                ctx = self.controller.limit(limits=1, user_api="blas")
                ctx.__enter__()
                self.ctx = ctx
            self.users += 1

    def __exit__(self, *exc: Any) -> None:
        with self.lock:
            self.users -= 1
            if self.users == 0 and self.ctx is not None:
                ctx, self.ctx = self.ctx, None
                ctx.__exit__(None, None, None)


def to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


def from_blob(blob: bytes) -> np.ndarray:
    return np.frombuffer(blob, dtype=np.float32)


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k highest scores, best first (ties: lower index first)."""
    if k <= 0 or scores.size == 0:
        return np.zeros(0, dtype=np.int64)
    if k >= scores.size:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, k - 1)[:k]
    return part[np.lexsort((part, -scores[part]))]


def sign_bits(vectors: np.ndarray) -> np.ndarray:
    """Sign bits, word-major: ``out[w, i]`` holds dimensions 64w..64w+63 of row i."""
    packed = np.packbits(np.asarray(vectors) > 0, axis=-1)
    pad = (-packed.shape[-1]) % 8
    if pad:
        packed = np.pad(packed, [(0, 0)] * (packed.ndim - 1) + [(0, pad)])
    words: np.ndarray = np.ascontiguousarray(packed).view(np.uint64)
    return np.ascontiguousarray(words.T) if words.ndim == 2 else words


def rescore_rows(n: int, k: int) -> int:
    """How many Hamming candidates are rescored exactly for a k-NN query over n rows."""
    floor = min(RESCORE_MIN, int(n * RESCORE_SMALL_SHARE))
    return min(n, max(k * RESCORE_PER_K, floor, int(n * RESCORE_SHARE)))


class VectorMatrix:
    """Normalised float32 rows with their chunk ids and source codes."""

    def __init__(self, ids: np.ndarray, vectors: np.ndarray, sources: np.ndarray, *,
                 quantise_above: int | None = None) -> None:
        self.ids = np.asarray(ids, dtype=np.int64)
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self.sources = np.asarray(sources, dtype=np.uint8)
        """uint8 code per row (see ``index.SOURCE_CODES``)."""
        self.quantise_above = QUANTISE_ABOVE if quantise_above is None else quantise_above
        self._bits: np.ndarray | None = None
        self._pos: dict[int, int] | None = None
        self._blocked: dict[tuple[int, ...], np.ndarray | None] = {}
        self._buffers: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._lock = threading.Lock()
        self.scanner: Any = None

    @classmethod
    def empty(cls, dims: int) -> VectorMatrix:
        return cls(np.zeros(0, dtype=np.int64), np.zeros((0, dims), dtype=np.float32),
                   np.zeros(0, dtype=np.uint8))

    def __len__(self) -> int:
        return int(self.ids.size)

    @property
    def quantised(self) -> bool:
        return len(self) > self.quantise_above

    @property
    def bits(self) -> np.ndarray:
        """Sign bits packed into uint64 words, word-major (see ``sign_bits``)."""
        if self._bits is None:
            self._bits = sign_bits(self.vectors)
        return self._bits

    def prepare(self) -> VectorMatrix:
        """Build what queries need up front (sign bits, row positions), not on the first one."""
        if self.quantised:
            self._bits = self.bits
        if len(self):
            self.row_of(int(self.ids[0]))
        return self

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

    def _blocked_rows(self, allowed: Sequence[int] | None) -> np.ndarray | None:
        """Rows whose source is not allowed (None when every row is allowed); cached."""
        if allowed is None:
            return None
        key = tuple(sorted({int(a) for a in allowed}))
        if key not in self._blocked:
            rows = np.flatnonzero(~np.isin(self.sources, np.asarray(key, dtype=np.uint8)))
            self._blocked[key] = rows if rows.size else None
        return self._blocked[key]

    def search(self, query: np.ndarray, k: int,
               allowed: Sequence[int] | None = None) -> list[tuple[int, float]]:
        """(chunk id, cosine similarity) of the k nearest rows, best first.

        ``allowed``: source codes to keep (None keeps all).
        """
        if len(self) == 0 or k <= 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        if self.scanner is not None and not self.quantised:
            return self._scan_exact(q, k, allowed)
        with single_thread_blas():
            return self._search(q, k, allowed)

    def use_exact_scanner(self, scanner: Any) -> VectorMatrix:
        """Answer exact searches with ``scanner`` (``exactscan.ExactScanner`` of this matrix's
        vectors) instead of numpy on one BLAS thread."""
        self.scanner = scanner
        return self

    def _scan_exact(self, q: np.ndarray, k: int,
                    allowed: Sequence[int] | None) -> list[tuple[int, float]]:
        blocked = self._blocked_rows(allowed)
        if blocked is not None and blocked.size == len(self):
            return []
        rows, scores = self.scanner.top_k(q, k, blocked)
        keep = np.isfinite(scores)
        return list(zip(self.ids[rows[keep]].tolist(), scores[keep].tolist(), strict=True))

    def _search(self, q: np.ndarray, k: int,
                allowed: Sequence[int] | None) -> list[tuple[int, float]]:
        n = len(self)
        blocked = self._blocked_rows(allowed)
        if blocked is not None and blocked.size == n:
            return []
        if not self.quantised:
            scores = self.vectors @ q
            if blocked is not None:
                scores[blocked] = -np.inf
            best = top_k(scores, k)
            best = best[np.isfinite(scores[best])]
            return list(zip(self.ids[best].tolist(), scores[best].tolist(), strict=True))
        keep = rescore_rows(n - (0 if blocked is None else blocked.size), k)
        with self._lock:
            ham = self._hamming(q)
            if blocked is not None:
                ham[blocked] = np.iinfo(ham.dtype).max
            cand = _smallest(ham, keep)
        cand.sort()  # rows in memory order: the gather below reads ahead
        scores = self.vectors[cand] @ q
        if blocked is not None and allowed is not None:
            scores[~np.isin(self.sources[cand], np.asarray(allowed, dtype=np.uint8))] = -np.inf
        best = top_k(scores, k)
        best = best[np.isfinite(scores[best])]
        return list(zip(self.ids[cand[best]].tolist(), scores[best].tolist(), strict=True))

    def _hamming(self, q: np.ndarray) -> np.ndarray:
        """Hamming distance of every row's sign bits to the query's (uint16, reused buffer)."""
        bits = self.bits
        n = bits.shape[1]
        if self._buffers is None or self._buffers[0].size != n:
            self._buffers = (np.empty(n, np.uint64), np.empty(n, np.uint8),
                             np.empty(n, np.uint16))
        xor, count, acc = self._buffers
        qwords = sign_bits(q[None, :])[:, 0]
        for w in range(bits.shape[0]):
            np.bitwise_xor(bits[w], qwords[w], out=xor)
            np.bitwise_count(xor, out=count)
            if w == 0:
                acc[:] = count
            else:
                np.add(acc, count, out=acc)
        return acc


def _smallest(values: np.ndarray, keep: int) -> np.ndarray:
    """Indices of the ``keep`` smallest small non-negative integers (ties: lowest index)."""
    if keep >= values.size:
        return np.arange(values.size)
    counts = np.cumsum(np.bincount(values))
    cut = int(np.searchsorted(counts, keep))  # values <= cut number at least keep
    below = np.flatnonzero(values < cut)
    at = np.flatnonzero(values == cut)[:keep - below.size]
    return np.concatenate([below, at])
