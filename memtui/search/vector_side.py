"""The vector side of a search: nearest chunks by sqlite-vec KNN, or in memory when warm.

A warm searcher (or one without sqlite-vec) holds every vector of the index as one
``VectorMatrix``, with where each row's chunk sits, both reloaded when the index
generation moves on.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from memtui.db import has_table, in_batches
from memtui.search import schema
from memtui.search.cache import PerGeneration
from memtui.search.index import SearchIndex
from memtui.search.schema import SOURCE_CODES, SOURCES
from memtui.search.scoring import Place

if TYPE_CHECKING:
    import numpy as np

    from memtui.search.vectors import VectorMatrix

log = logging.getLogger(__name__)

_Places = tuple["np.ndarray", "np.ndarray", list[tuple[str, str]]]
"""Per matrix row: its (file, session) group number and its position; the groups."""


class VectorSide:
    """Vector search over one index; ``generation`` is the searcher's reading of it."""

    def __init__(self, index: SearchIndex, generation: Callable[[], int], *,
                 warm: bool) -> None:
        self.index = index
        self.warm = warm
        self._matrix = PerGeneration(generation, self._load_matrix)
        self.places: PerGeneration[_Places] = PerGeneration(generation, self._load_places)
        """Where the in-memory rows' chunks sit (filled once a warm search located some)."""

    def in_memory(self) -> bool:
        """True when vectors are scanned in memory: warm, or no sqlite-vec."""
        return self.warm or not schema.vec_available(self.index.db)

    def matrix(self) -> VectorMatrix:
        """All vectors of the index as one matrix, reloaded when the index changed."""
        return self._matrix.get()

    def _load_matrix(self) -> VectorMatrix:
        import numpy as np

        from memtui.search.vectors import VectorMatrix

        db = self.index.db
        emb = self.index.embedder
        dims = emb.dims if emb else 0
        table = schema.vector_table(db)
        key = "rowid" if table == "chunks_vec" else "id"
        rows = db.rows(f"SELECT {key}, source, embedding FROM {table}") if table else []
        if not rows:
            return VectorMatrix.empty(dims)
        ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        codes = np.fromiter((SOURCE_CODES.get(str(r[1]), 255) for r in rows),
                            dtype=np.uint8, count=len(rows))
        blob = b"".join(bytes(r[2]) for r in rows)
        vectors = np.frombuffer(blob, dtype=np.float32).reshape(len(rows), -1)
        return self._exact_matrix(ids, vectors, codes) or VectorMatrix(
            ids, vectors, codes).prepare()

    def _exact_matrix(self, ids: np.ndarray, vectors: np.ndarray,
                      codes: np.ndarray) -> VectorMatrix | None:
        """A warm searcher's matrix of up to ``exactscan.EXACT_ROWS`` rows, scanned exactly
        by ONNX Runtime on two threads; None when that does not apply here."""
        from memtui.search import exactscan
        from memtui.search.vectors import VectorMatrix

        if not self.warm or len(ids) > exactscan.EXACT_ROWS or not exactscan.available():
            return None
        try:
            scanner = exactscan.ExactScanner(vectors)
        except ImportError as exc:  # installed but broken
            log.warning("exact scan in onnxruntime unavailable: %s", exc)
            return None
        return VectorMatrix(ids, vectors, codes, quantise_above=exactscan.EXACT_ROWS
                            ).use_exact_scanner(scanner).prepare()

    def _load_places(self) -> _Places:
        import numpy as np

        matrix = self.matrix()
        keys: dict[tuple[str, str], int] = {}
        group = np.full(len(matrix), -1, dtype=np.int32)
        position = np.zeros(len(matrix), dtype=np.int32)
        for cid, file, session, pos in self.index.db.rows(
                "SELECT id, file, coalesce(session, ''), pos FROM chunks"):
            row = matrix.row_of(int(cid))
            if row is not None:
                group[row] = keys.setdefault((str(file), str(session)), len(keys))
                position[row] = pos
        return group, position, list(keys)

    def locate(self, ids: Sequence[int]) -> dict[int, Place]:
        """Where in-memory vectors' chunks sit, without SQL: per index generation, the
        (file, session) group and the position of every row of the matrix (8 bytes a
        row plus the distinct groups), so locating a search's ~100 vector candidates
        costs no query."""
        matrix = self.matrix()
        group, position, names = self.places.get()
        out: dict[int, Place] = {}
        for cid in ids:
            row = matrix.row_of(cid)
            if row is not None and group[row] >= 0:
                file, session = names[group[row]]
                out[cid] = (file, session, SOURCES[int(matrix.sources[row])], int(position[row]))
        return out

    def search_memory(self, qvec: np.ndarray, k: int, sources: Sequence[str]
                      ) -> dict[int, float]:
        """The k nearest chunks of the in-memory matrix within ``sources``."""
        allowed = (None if set(sources) >= set(SOURCES)
                   else [SOURCE_CODES[s] for s in sources])
        return dict(self.matrix().search(qvec, k, allowed))

    def search_sqlite(self, qvec: np.ndarray, k: int, sources: Sequence[str]
                      ) -> dict[int, float]:
        """The k nearest chunks by sqlite-vec KNN."""
        db = self.index.db
        if not has_table(db, "chunks_vec"):
            return {}
        from memtui.search.vectors import to_blob

        blob = to_blob(qvec)
        if set(sources) >= set(SOURCES):
            rows = db.rows("SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? "
                           "AND k = ?", (blob, k))
        else:
            marks = ",".join("?" * len(sources))
            rows = db.rows(f"SELECT rowid, distance FROM chunks_vec WHERE embedding MATCH ? "
                           f"AND k = ? AND source IN ({marks})", (blob, k, *sources))
        return {int(cid): 1.0 - float(distance) for cid, distance in rows}

    def vectors_for(self, ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored vectors of these chunks."""
        if not ids:
            return {}
        if self.in_memory():
            return self.matrix().vectors_for(ids)
        import numpy as np

        db = self.index.db
        return {int(cid): np.frombuffer(bytes(blob), dtype=np.float32)
                for marks, part in in_batches(ids)
                for cid, blob in db.rows(f"SELECT rowid, embedding FROM chunks_vec "
                                         f"WHERE rowid IN ({marks})", part)}
