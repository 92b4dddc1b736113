"""The query encoder's six transformer layers as an ONNX Runtime graph, int8 by default.

A fresh query embedding is most of a warm search's time: with numpy (``numpy_query``) the
24 float32 matrix products of all-MiniLM-L6-v2 dominate, and its 42 MB of layer weights
do not stay in a typical L3 between searches. ONNX Runtime's ``DynamicQuantizeMatMul``
multiplies the activations, quantised per call to uint8, by int8 weights quantised per
output column: a quarter of the weight memory and integer kernels. The query vector
differs slightly from the float32 one (cosine ≈ 0.99) while documents keep their float32
sentence-transformers vectors, at a small cost in recall. ``precision="fp32"`` builds
the same graph with float matrix products (cosine 1.0 to sentence-transformers, slower).
8-bit ``MatMulNBits``, 4-bit weights and SmoothQuant-style activation scaling were
measured and rejected. docs/search.md has every figure.

The graph is built from the model's own weights (no exporter, no torch) and kept in the
user's cache folder (``~/.cache/memtui/query-encoders/``, keyed by the weights file, the
precision and the builder's source; safe to delete): a later process loads it without
importing ``onnx`` or the layer weights, so a one-shot ``memtui search`` starts as fast
as with the numpy encoder. A damaged file is rebuilt.

The word-piece lookup stays in numpy (it touches a dozen rows of a 47 MB table); the
graph takes the summed embeddings ``x`` [n, hidden], normalises them, runs the layers
(attention is ONNX Runtime's ``MultiHeadAttention``: one node instead of twelve) and
returns the mean of the last hidden states. It runs on two threads (``THREADS``).

Many short texts (the extraction classifier's) go through a second graph, built and
cached on first use (``encode_many``): texts of one length in one run [texts, n, hidden],
which makes the integer products about twice as fast per token. Each text's vector is
the one it gets alone, bit for bit before pooling: the int8 vectors are that sensitive
(one rounding step flipped by a 1e-7 change moves a vector by up to 1e-2), so texts are
not packed into one sequence (attention over a longer, masked row sums in another
order) and each text's activations are quantised on their own.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from memtui.search.encoders import QUERY_PRECISIONS, numpy_query
from memtui.search.encoders.numpy_query import NumpyEncoder

PRECISIONS = QUERY_PRECISIONS
THREADS = 2
"""Intra-op threads of a query's run: two spinning threads shorten an int8 query embedding
even inside a search, where the keyword side holds the other core for part of it
(docs/search.md)."""
OPSET = 20  # Gelu is an ONNX op from opset 20
MS_DOMAIN = "com.microsoft"

log = logging.getLogger(__name__)


def available() -> bool:
    """Whether onnxruntime and onnx are installed (found, not imported: onnx is only
    imported when a graph has to be built)."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


def session_options(threads: int) -> Any:
    """ONNX Runtime session options for one short run at a time on ``threads`` threads."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    threads = max(1, min(threads, os.cpu_count() or 1))
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    # With one thread the run happens on the caller's thread; with more, helper threads
    # spin between the graph's nodes (without spinning, waking them costs more than a
    # second core gains)...
    options.add_session_config_entry("session.intra_op.allow_spinning",
                                     "1" if threads > 1 else "0")
    # ...but not after the run: a helper still spinning would take a core from the rest
    # of the search (the keyword side's worker thread started late)
    options.add_session_config_entry("session.force_spinning_stop", "1")
    options.log_severity_level = 3
    return options


def quantise_columns(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric int8 quantisation of ``w`` [in, out] per output column: (q, scale)."""
    peak = np.abs(w).max(axis=0)
    scale = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    q = np.clip(np.rint(w / scale), -127, 127).astype(np.int8)
    return q, scale


def build_graph(enc: NumpyEncoder, precision: str = "int8", *, batched: bool = False) -> bytes:
    """The serialised ONNX model of ``enc``'s layers and mean pooling.

    ``batched``: the variant for many texts in one run (``OnnxEncoder.encode_many``): it
    takes ``x`` [texts, n, hidden], texts of the same length, and returns ``pooled``
    [texts, hidden]. Each text goes through the same arithmetic as alone, bit for bit
    (int8: its activations quantised on their own, ``_per_text_quantised_matmul``).
    """
    if precision not in PRECISIONS:
        raise ValueError(f"unknown query precision {precision!r}: expected one of "
                         f"{', '.join(PRECISIONS)}")
    from onnx import TensorProto, helper, numpy_helper

    hidden, heads = enc.hidden, enc.heads
    nodes: list[Any] = []
    inits: list[Any] = []

    def const(name: str, value: np.ndarray) -> str:
        inits.append(numpy_helper.from_array(value, name))
        return name

    def node(op: str, inputs: list[str], output: str, domain: str = "", **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [output], name=output, domain=domain,
                                      **attrs))
        return output

    def dense(x: str, w: np.ndarray, b: np.ndarray, name: str) -> str:
        if batched and precision == "int8":
            return _per_text_quantised_matmul(node, const, x, w, b, name)
        bias = const(f"{name}.b", b.astype(np.float32))
        if precision == "fp32":
            y = node("MatMul", [x, const(f"{name}.w", w)], f"{name}.mm")
            return node("Add", [y, bias], name)
        q, scale = quantise_columns(w)
        return node("DynamicQuantizeMatMul",
                    [x, const(f"{name}.q", q), const(f"{name}.scale", scale), "", bias],
                    name, domain=MS_DOMAIN)

    def add_norm(y: str, residual: str, w: np.ndarray, b: np.ndarray, name: str) -> str:
        """LayerNorm(y + residual)."""
        total = node("Add", [y, residual], f"{name}.sum")
        return node("LayerNormalization", [total, const(f"{name}.w", w), const(f"{name}.b", b)],
                    name, axis=-1, epsilon=enc.eps)

    split3 = const("split3", np.array([hidden] * 3, dtype=np.int64))
    x = node("LayerNormalization", ["x", const("ln0.w", enc.ln0[0]), const("ln0.b", enc.ln0[1])],
             "ln0", axis=-1, epsilon=enc.eps)
    if not batched:
        x = node("Unsqueeze", [x, const("axis0", np.array([0], dtype=np.int64))], "x3")
    for i, b in enumerate(enc.blocks):
        p = f"l{i}"
        qkv = dense(x, b["qkv"], b["qkv_b"], f"{p}.qkv")
        nodes.append(helper.make_node("Split", [qkv, split3], [f"{p}.q", f"{p}.k", f"{p}.v"],
                                      name=f"{p}.split", axis=2))
        # the 1/sqrt(dim) scale is folded into the query weights by NumpyEncoder
        ctx = node("MultiHeadAttention", [f"{p}.q", f"{p}.k", f"{p}.v"], f"{p}.attn",
                   domain=MS_DOMAIN, num_heads=heads, scale=1.0)
        x = add_norm(dense(ctx, b["o"], b["o_b"], f"{p}.o"), x, b["ln1_w"], b["ln1_b"],
                     f"{p}.ln1")
        h = node("Gelu", [dense(x, b["i"], b["i_b"], f"{p}.i")], f"{p}.gelu")
        x = add_norm(dense(h, b["out"], b["out_b"], f"{p}.out"), x, b["ln2_w"], b["ln2_b"],
                     f"{p}.ln2")
    if batched:
        node("ReduceMean", [x, const("axis1", np.array([1], dtype=np.int64))], "pooled",
             keepdims=0)
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["b", "n", hidden])]
        outputs = [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["b", hidden])]
    else:
        node("ReduceMean", [x, const("axes01", np.array([0, 1], dtype=np.int64))], "pooled",
             keepdims=0)
        inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", hidden])]
        outputs = [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, [hidden])]
    graph = helper.make_graph(nodes, "memtui-query-encoder", inputs, outputs,
                              initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET),
                                                    helper.make_opsetid(MS_DOMAIN, 1)])
    model.ir_version = 9
    data: bytes = model.SerializeToString()
    return data


def _per_text_quantised_matmul(node: Any, const: Any, x: str, w: np.ndarray, b: np.ndarray,
                               name: str) -> str:
    """``DynamicQuantizeMatMul`` of each text of ``x`` [texts, n, in] on its own.

    ``DynamicQuantizeMatMul`` quantises its whole input to uint8 with one scale and zero
    point, from the input's range (zero included): texts sharing a run would share them
    and each get a vector other than its own. Here each text gets its own range, and
    the operator's scale, zero point and rounding (``QuantizeLinear`` per text), then an
    exact integer product (``MatMulInteger``, the zero point applied through the weights'
    column sums) scaled and biased like the operator's output. The bias is [1, 1, out],
    not [out]: ONNX Runtime would fuse a vector bias into the next ``Gelu`` or
    ``SkipLayerNormalization``, adding it in another order than the single-text graph.
    """
    from onnx import TensorProto

    p = name
    q, scale = quantise_columns(w)
    axes = const(f"{p}.axes12", np.array([1, 2], dtype=np.int64))
    zero = const(f"{p}.zero", np.array(0, np.float32))
    levels = const(f"{p}.levels", np.array(255, np.float32))
    hi = node("Max", [node("ReduceMax", [x, axes], f"{p}.max", keepdims=1), zero], f"{p}.hi")
    lo = node("Min", [node("ReduceMin", [x, axes], f"{p}.min", keepdims=1), zero], f"{p}.lo")
    # (hi - lo) / 255; an empty range (every value 0) quantises to 0 at any positive scale
    a_scale = node("Max", [node("Div", [node("Sub", [hi, lo], f"{p}.range"), levels],
                                f"{p}.rawscale"),
                           const(f"{p}.tiny", np.array(1e-30, np.float32))], f"{p}.ascale")
    zp = node("Round", [node("Clip", [node("Neg", [node("Div", [lo, a_scale], f"{p}.lo_s")],
                                           f"{p}.zp0"), zero, levels], f"{p}.zp1")], f"{p}.zp")
    flat = const(f"{p}.flat", np.array([-1], dtype=np.int64))
    qx = node("QuantizeLinear",
              [x, node("Reshape", [a_scale, flat], f"{p}.scale_b"),
               node("Cast", [node("Reshape", [zp, flat], f"{p}.zp_b")], f"{p}.zp_u8",
                    to=TensorProto.UINT8)],
              f"{p}.qx", axis=0)
    acc = node("MatMulInteger", [qx, const(f"{p}.q", q)], f"{p}.acc")
    colsum = const(f"{p}.colsum", q.astype(np.int32).sum(axis=0, dtype=np.int32))
    offset = node("Mul", [node("Cast", [zp], f"{p}.zp_i32", to=TensorProto.INT32), colsum],
                  f"{p}.offset")
    exact = node("Cast", [node("Sub", [acc, offset], f"{p}.acc_zp")], f"{p}.accf",
                 to=TensorProto.FLOAT)
    multiplier = node("Mul", [a_scale, const(f"{p}.scale", scale)], f"{p}.mult")
    bias = const(f"{p}.b", b.astype(np.float32).reshape(1, 1, -1))
    return node("Add", [node("Mul", [exact, multiplier], f"{p}.mm"), bias], name)


class OnnxEncoder(NumpyEncoder):
    """``NumpyEncoder`` whose transformer layers run in ONNX Runtime."""

    cache_family = "query-encoder"
    """The cached graphs' file names start with this; a new graph prunes only its own
    family's stale files (an encoder with changed weights names its own family)."""

    def cache_salt(self) -> bytes:
        """More of the cache key, for a subclass whose weights differ from the file's."""
        return b""

    one_text_graph = True
    """Open the one-text graph at once (a search's query is one text); an encoder that
    reads only through ``encode_many`` opens it if ever a text needs windowing."""

    def __init__(self, path: Path, max_tokens: int = 512, *, precision: str = "int8",
                 threads: int = THREADS, cache_dir: Path | None = None) -> None:
        super().__init__(path, max_tokens, layers=False)
        if precision not in PRECISIONS:
            raise ValueError(f"unknown query precision {precision!r}: expected one of "
                             f"{', '.join(PRECISIONS)}")
        self.precision = precision
        self._threads = max(1, min(threads, os.cpu_count() or 1))
        self._options = session_options(threads)
        self.cache_path = self._cache_path(cache_dir)
        self.batched_cache_path = self._cache_path(cache_dir, batched=True)
        self._session: Any = None
        self.from_cache = False
        if self.one_text_graph:
            self._session, self.from_cache = self._open(batched=False)
        self._batched: Any = None  # the batched graph's session, opened on first use
        # numpy does no matrix product here: no BLAS thread limit to set and restore
        self._limiter = contextlib.nullcontext()

    def _open(self, batched: bool) -> tuple[Any, bool]:
        """A session of the graph, the cached one when it loads: (session, from cache).

        The batched graph's session runs on one thread: ``encode_many`` runs it from
        ``threads`` threads at once (its hundreds of small nodes would otherwise each
        wait for the helper threads)."""
        import onnxruntime as ort

        path = self.batched_cache_path if batched else self.cache_path
        options = session_options(1) if batched else self._options
        graph = _read(path)
        try:
            session = ort.InferenceSession(graph or self._build(batched), options,
                                           providers=["CPUExecutionProvider"])
            return session, graph is not None
        except Exception as exc:  # noqa: BLE001 - a damaged cache file: build afresh
            if graph is None:
                raise
            log.warning("query encoder cache %s unusable (%s): rebuilding", path, exc)
            return ort.InferenceSession(self._build(batched), options,
                                        providers=["CPUExecutionProvider"]), False

    def _cache_path(self, cache_dir: Path | None, *, batched: bool = False) -> Path | None:
        """Where the built graph is kept: keyed by the weights file (path, size, mtime),
        the precision and the source of the code that builds it (this module and
        ``numpy_query``), so a changed model or builder never reuses a stale graph."""
        if cache_dir is None:
            try:
                from platformdirs import user_cache_dir

                cache_dir = Path(user_cache_dir("memtui")) / "query-encoders"
            except Exception:  # noqa: BLE001 - no cache is only slower
                return None
        weights = self.path / "model.safetensors"
        try:
            st = weights.stat()
        except OSError:
            return None
        digest = hashlib.sha256(f"{self.precision}|{weights.resolve()}|{st.st_size}|"
                                f"{st.st_mtime_ns}".encode())
        for module in (__file__, numpy_query.__file__):
            digest.update(Path(module).read_bytes())
        digest.update(self.cache_salt())
        key = digest.hexdigest()[:20]
        variant = "batched-" if batched else ""
        return cache_dir / f"{self.cache_family}-{variant}{self.precision}-{key}.onnx"

    def _build(self, batched: bool = False) -> bytes:
        """Build the graph from the layer weights, and keep it for the next process."""
        self.load_layers()
        graph = build_graph(self, self.precision, batched=batched)
        self.blocks = []  # the session holds the (quantised) weights now
        path = self.batched_cache_path if batched else self.cache_path
        if path is not None:
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
                tmp.write_bytes(graph)
                os.replace(tmp, path)
            except OSError as exc:
                log.info("query encoder not cached at %s: %s", path, exc)
            else:
                _prune(path, self.cache_family)
        return graph

    def _embed(self, ids: list[int]) -> np.ndarray:
        # the graph normalises (one node instead of ~10 numpy calls on a dozen rows)
        return self._embedding_sum(ids)

    def _layers(self, x: np.ndarray) -> np.ndarray:
        if self._session is None:  # only under ``encode_ids``'s lock
            self._session, self.from_cache = self._open(batched=False)
        pooled: np.ndarray = self._session.run(["pooled"], {"x": x})[0]
        return pooled

    def encode_many(self, batch: Sequence[Sequence[int]]) -> np.ndarray:
        """``encode_ids`` of many tokenised texts [texts, hidden]: texts of one length
        share a run of the batched graph (built or loaded on first use), ``threads`` runs
        at a time. A text longer than ``max_tokens`` is windowed by ``encode_ids``. The
        rows equal ``encode_ids``'s up to the float rounding of the mean.
        """
        out = np.zeros((len(batch), self.hidden), dtype=np.float32)
        by_length: dict[int, list[int]] = {}
        for row, ids in enumerate(batch):
            by_length.setdefault(len(ids), []).append(row)
        runs: list[list[int]] = []
        for n, rows in sorted(by_length.items(), reverse=True):
            if n > self.max_tokens:
                for row in rows:
                    out[row] = self.encode_ids(batch[row])
                continue
            step = max(1, BATCH_TOKENS // n)
            runs += [rows[start:start + step] for start in range(0, len(rows), step)]
        if not runs:
            return out
        with self._lock:
            if self._batched is None:
                self._batched = self._open(batched=True)[0]
            session = self._batched

        def run(rows: list[int]) -> None:
            x = np.stack([self._embedding_sum(list(batch[row])) for row in rows])
            pooled: np.ndarray = session.run(["pooled"], {"x": x})[0]
            out[rows] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True),
                                            1e-12)

        if self._threads == 1 or len(runs) == 1:
            for rows in runs:
                run(rows)
        else:
            from concurrent.futures import ThreadPoolExecutor

            # the largest runs first, so that neither thread is left with a long one
            runs.sort(key=lambda rows: -len(rows) * len(batch[rows[0]]))
            with ThreadPoolExecutor(self._threads, thread_name_prefix="memtui-encode") as pool:
                for _ in pool.map(run, runs):
                    pass
        return out


BATCH_TOKENS = 512
"""Tokens per run of the batched graph: past a few hundred, more rows no longer make the
integer products faster per token."""


def _read(path: Path | None) -> bytes | None:
    """The cached graph at ``path``, or None."""
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


STALE_SECONDS = 30 * 86_400
"""Cached graphs built this long ago by other code or for other weights are removed when
a new one is written (a graph still in use is simply rebuilt by its next user)."""


def _prune(current: Path, family: str) -> None:
    """Remove the family's other cached graphs older than ``STALE_SECONDS``."""
    import time

    cutoff = time.time() - STALE_SECONDS
    for old in current.parent.glob(f"{family}-*.onnx"):
        try:
            if old != current and old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:
            continue
