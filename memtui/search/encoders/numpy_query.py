"""A numpy forward pass of BERT-style sentence encoders (MiniLM), for fast query embedding.

Embedding one short query with sentence-transformers costs an import of torch and
transformers and a framework overhead per call larger than the arithmetic itself. The
same arithmetic in numpy, single-threaded (BLAS threads only add overhead for a dozen
tokens), gives the same vector (cosine > 0.99999 to the torch result, tested) without
either, and loads from the model's own ``tokenizer.json`` and ``model.safetensors``
(docs/search.md has the timings).

Documents are still embedded with sentence-transformers, which batches far better.
Only mean pooling followed by L2 normalisation (all-MiniLM-L6-v2's pipeline) is
supported; ``NumpyEncoder.supports`` says whether a model folder fits.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from memtui.search.vectors import single_thread_blas

_ERF_P_HALF = np.float32(0.3275911 * 0.7071067811865476)
_ERF_A = tuple(np.float32(a) for a in (1.061405429, -1.453152027, 1.421413741, -0.284496736,
                                       0.254829592))


def gelu(x: np.ndarray) -> np.ndarray:
    """Exact (erf) GELU of float32 ``x``, computed in place (``x`` is returned).

    ``0.5 x (1 + erf(x / √2)) = max(x, 0) - 0.5 |x| erfc(|x| / √2)``, with erfc to
    ~1.5e-7 (Abramowitz & Stegun 7.1.26): a handful of in-place float32 passes instead of
    a dozen temporaries.
    """
    ax = np.abs(x)
    t = ax * _ERF_P_HALF
    t += 1.0
    np.reciprocal(t, out=t)
    poly = t * _ERF_A[0]
    for coef in _ERF_A[1:]:
        poly += coef
        poly *= t
    np.multiply(ax, ax, out=t)
    t *= -0.5
    np.exp(t, out=t)
    poly *= t  # erfc(|x| / sqrt 2)
    poly *= ax
    poly *= 0.5
    np.maximum(x, 0, out=x)
    x -= poly
    return x


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    """LayerNorm over the last axis, in place on ``x`` (returned)."""
    x -= x.mean(axis=-1, keepdims=True)
    var = np.einsum("ij,ij->i", x, x)[:, None]
    var /= x.shape[-1]
    var += eps
    np.sqrt(var, out=var)
    x /= var
    x *= w
    x += b
    return x


class NumpyEncoder:
    """Mean-pooled, normalised BERT embeddings computed with numpy."""

    def __init__(self, path: Path, max_tokens: int = 512, *, layers: bool = True) -> None:
        """Load the tokenizer and the embeddings, and the layers unless ``layers`` is False
        (a subclass that runs the layers elsewhere; ``load_layers`` loads them later)."""
        from tokenizers import Tokenizer

        self.path = path
        cfg = json.loads((path / "config.json").read_text(encoding="utf-8"))
        self.layers = int(cfg["num_hidden_layers"])
        self.heads = int(cfg["num_attention_heads"])
        self.hidden = int(cfg["hidden_size"])
        self.eps = float(cfg.get("layer_norm_eps", 1e-12))
        self.max_tokens = min(max_tokens, int(cfg.get("max_position_embeddings", 512)))
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_truncation()
        self.tokenizer.no_padding()
        with self._weights() as w:
            self.word = w("embeddings.word_embeddings.weight")
            self.pos = w("embeddings.position_embeddings.weight")
            self.token_types = w("embeddings.token_type_embeddings.weight")
            self.type0 = self.token_types[0]
            self.ln0 = (w("embeddings.LayerNorm.weight"), w("embeddings.LayerNorm.bias"))
        self.blocks: list[dict[str, np.ndarray]] = []
        if layers:
            self.load_layers()
        self._limiter = single_thread_blas()
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def _weights(self) -> Iterator[Callable[[str], np.ndarray]]:
        """Read single float32 tensors from model.safetensors (only those asked for)."""
        from safetensors import safe_open

        with safe_open(str(self.path / "model.safetensors"), framework="numpy") as f:
            prefix = "bert." if "bert.embeddings.word_embeddings.weight" in f.keys() else ""

            def w(name: str) -> np.ndarray:
                return np.ascontiguousarray(f.get_tensor(prefix + name), dtype=np.float32)

            yield w

    def load_layers(self) -> None:
        """The transformer layers' weights, fused and transposed for ``x @ W``."""
        if self.blocks:
            return
        with self._weights() as w:
            for i in range(self.layers):
                p = f"encoder.layer.{i}."
                q, k, v = (w(p + f"attention.self.{n}.weight") for n in ("query", "key", "value"))
                qb, kb, vb = (w(p + f"attention.self.{n}.bias") for n in ("query", "key", "value"))
                scale = np.float32(1.0 / np.sqrt(self.hidden // self.heads))
                self.blocks.append({
                    "qkv": np.ascontiguousarray(np.concatenate([q * scale, k, v]).T),
                    "qkv_b": np.concatenate([qb * scale, kb, vb]),
                    "o": np.ascontiguousarray(w(p + "attention.output.dense.weight").T),
                    "o_b": w(p + "attention.output.dense.bias"),
                    "ln1_w": w(p + "attention.output.LayerNorm.weight"),
                    "ln1_b": w(p + "attention.output.LayerNorm.bias"),
                    "i": np.ascontiguousarray(w(p + "intermediate.dense.weight").T),
                    "i_b": w(p + "intermediate.dense.bias"),
                    "out": np.ascontiguousarray(w(p + "output.dense.weight").T),
                    "out_b": w(p + "output.dense.bias"),
                    "ln2_w": w(p + "output.LayerNorm.weight"),
                    "ln2_b": w(p + "output.LayerNorm.bias"),
                })

    @staticmethod
    def supports(path: Path) -> bool:
        """True for a BERT model with mean pooling and normalisation, in safetensors."""
        try:
            cfg = json.loads((path / "config.json").read_text(encoding="utf-8"))
            pooling = json.loads((path / "1_Pooling/config.json").read_text(encoding="utf-8"))
            modules = json.loads((path / "modules.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        return (cfg.get("model_type") == "bert" and cfg.get("hidden_act") == "gelu"
                and cfg.get("position_embedding_type", "absolute") == "absolute"
                and bool(pooling.get("pooling_mode_mean_tokens"))
                and not any(pooling.get(k) for k in ("pooling_mode_cls_token",
                                                     "pooling_mode_max_tokens",
                                                     "pooling_mode_mean_sqrt_len_tokens"))
                and any(str(m.get("type", "")).endswith("Normalize") for m in modules)
                and (path / "model.safetensors").is_file() and (path / "tokenizer.json").is_file())

    def token_ids(self, text: str) -> list[int]:
        ids: list[int] = self.tokenizer.encode(text).ids
        return ids

    def _forward(self, ids: list[int]) -> np.ndarray:
        """Mean of the last hidden states of one sequence (float32, in-place where it can)."""
        return self._layers(self._embed(ids))

    def _embed(self, ids: list[int]) -> np.ndarray:
        """The embedded, normalised sequence [n, hidden] that enters the first layer."""
        return _layer_norm(self._embedding_sum(ids), *self.ln0, self.eps)

    def _embedding_sum(self, ids: list[int]) -> np.ndarray:
        """Word-piece, position and token-type embeddings of ``ids``, summed [n, hidden]."""
        x = self.word[ids]
        x += self.pos[:len(ids)]
        x += self.type0
        return x

    def _layers(self, x: np.ndarray) -> np.ndarray:
        """The transformer layers over ``x`` [n, hidden], mean-pooled to [hidden]."""
        n = x.shape[0]
        hidden, heads = self.hidden, self.heads
        dim = hidden // heads
        for b in self.blocks:
            qkv = x @ b["qkv"]
            qkv += b["qkv_b"]
            q = qkv[:, :hidden].reshape(n, heads, dim).transpose(1, 0, 2)
            k = qkv[:, hidden:2 * hidden].reshape(n, heads, dim).transpose(1, 2, 0)
            v = qkv[:, 2 * hidden:].reshape(n, heads, dim).transpose(1, 0, 2)
            probs = q @ k  # the 1/sqrt(dim) scale is folded into the query weights
            probs -= probs.max(axis=-1, keepdims=True)
            np.exp(probs, out=probs)
            probs /= probs.sum(axis=-1, keepdims=True)
            ctx = (probs @ v).transpose(1, 0, 2).reshape(n, hidden)
            y = ctx @ b["o"]
            y += b["o_b"]
            y += x
            x = _layer_norm(y, b["ln1_w"], b["ln1_b"], self.eps)
            h = x @ b["i"]
            h += b["i_b"]
            y = gelu(h) @ b["out"]
            y += b["out_b"]
            y += x
            x = _layer_norm(y, b["ln2_w"], b["ln2_b"], self.eps)
        pooled: np.ndarray = x.mean(axis=0)
        return pooled

    def encode(self, text: str) -> np.ndarray:
        """The normalised embedding of ``text``; long text is embedded in windows, averaged."""
        return self.encode_ids(self.token_ids(text))

    def encode_ids(self, ids: Sequence[int]) -> np.ndarray:
        """``encode`` of already tokenised text (with its [CLS] and [SEP])."""
        ids = list(ids)
        cls, sep, body = ids[0], ids[-1], ids[1:-1]
        room = self.max_tokens - 2
        with self._lock, self._limiter:
            if len(body) <= room:
                vec = self._forward(ids)
            else:
                parts = [body[i:i + room] for i in range(0, len(body), room)]
                vec = sum((self._forward([cls, *p, sep]) * len(p) for p in parts),
                          np.zeros(self.hidden, dtype=np.float32))
        norm = float(np.linalg.norm(vec))
        out: np.ndarray = (vec / max(norm, 1e-12)).astype(np.float32)
        return out

    def encode_many(self, batch: Sequence[Sequence[int]]) -> np.ndarray:
        """``encode_ids`` of many tokenised texts, one row each [texts, hidden] (numpy
        gains nothing from batching a dozen tokens: one at a time)."""
        out = np.zeros((len(batch), self.hidden), dtype=np.float32)
        for row, ids in enumerate(batch):
            out[row] = self.encode_ids(ids)
        return out
