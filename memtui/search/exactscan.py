"""Exact top-k cosine over an in-memory vector matrix, in ONNX Runtime on two threads.

A warm searcher scans its matrix right after the query embedding has streamed the
encoder's weights through the cache, so the scan reads the matrix from memory; one
MatMul + TopK over two ONNX Runtime threads then beats numpy's single-threaded product
with the sign-bit prefilter, and is exact. (numpy on two OpenBLAS threads is as fast,
but OpenBLAS leaves its helper spinning long after the call, taking a core from
whatever runs next; ONNX Runtime stops spinning when the run ends.) The figures are in
docs/search.md, "Measured figures behind the code".

The matrix is bound as an input (zero-copy ``OrtValue`` over the numpy array), so one
small graph serves every index generation. Rows of sources a search does not want get a
penalty of -inf before the TopK.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from memtui.search.encoders.onnx_query import available, session_options

__all__ = ["EXACT_ROWS", "ExactScanner", "available"]

THREADS = 2
EXACT_ROWS = 15_000
"""Largest matrix scanned exactly here: the exact scan's cost grows with every row, the
prefilter's mostly with the rows it rescores, and they cross between 20,000 and 30,000
rows right after an embedding (docs/search.md)."""

_SESSION: Any = None
_LOCK = threading.Lock()


def _session() -> Any:
    """The shared session (built on first use), or raise ImportError without onnxruntime."""
    global _SESSION
    with _LOCK:
        if _SESSION is None:
            import onnxruntime as ort
            from onnx import TensorProto, helper

            graph = helper.make_graph(
                [helper.make_node("Unsqueeze", ["q", "axis1"], ["q2"]),
                 helper.make_node("MatMul", ["m", "q2"], ["s2"]),
                 helper.make_node("Squeeze", ["s2", "axis1"], ["s"]),
                 helper.make_node("Add", ["s", "penalty"], ["scores"]),
                 helper.make_node("TopK", ["scores", "k"], ["values", "rows"], axis=0,
                                  largest=1, sorted=1)],
                "memtui-exact-scan",
                [helper.make_tensor_value_info("m", TensorProto.FLOAT, ["n", "d"]),
                 helper.make_tensor_value_info("q", TensorProto.FLOAT, ["d"]),
                 helper.make_tensor_value_info("penalty", TensorProto.FLOAT, ["n"]),
                 helper.make_tensor_value_info("k", TensorProto.INT64, [1])],
                [helper.make_tensor_value_info("values", TensorProto.FLOAT, ["k"]),
                 helper.make_tensor_value_info("rows", TensorProto.INT64, ["k"])],
                initializer=[helper.make_tensor("axis1", TensorProto.INT64, [1], [1])])
            model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
            model.ir_version = 9
            _SESSION = ort.InferenceSession(model.SerializeToString(),
                                            session_options(THREADS),
                                            providers=["CPUExecutionProvider"])
        return _SESSION


class ExactScanner:
    """Exact top-k rows of one matrix (kept alive with it; the graph is shared)."""

    def __init__(self, vectors: np.ndarray) -> None:
        import onnxruntime as ort

        self.session = _session()
        self.vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        self._matrix = ort.OrtValue.ortvalue_from_numpy(self.vectors)
        self._penalties: dict[tuple[int, ...] | None, np.ndarray] = {}

    def penalty(self, blocked: np.ndarray | None) -> np.ndarray:
        """0 per row, -inf for the ``blocked`` rows (cached per blocked set)."""
        key = None if blocked is None else tuple(blocked.tolist())
        if key not in self._penalties:
            pen = np.zeros(self.vectors.shape[0], dtype=np.float32)
            if blocked is not None:
                pen[blocked] = -np.inf
            self._penalties[key] = pen
        return self._penalties[key]

    def top_k(self, query: np.ndarray, k: int,
              blocked: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """(rows, scores) of the k best rows, best first; blocked rows score -inf."""
        k = max(0, min(k, self.vectors.shape[0]))
        if k == 0:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float32)
        io = self.session.io_binding()
        io.bind_ortvalue_input("m", self._matrix)
        io.bind_cpu_input("q", np.ascontiguousarray(query, dtype=np.float32))
        io.bind_cpu_input("penalty", self.penalty(blocked))
        io.bind_cpu_input("k", np.array([k], dtype=np.int64))
        io.bind_output("values")
        io.bind_output("rows")
        self.session.run_with_iobinding(io)
        values, rows = io.copy_outputs_to_cpu()
        return rows, values
