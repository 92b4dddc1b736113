"""The reader: MiniLM fine-tuned to read a turn against the proposal it answers.

The head (``head.py``) sees the turn and its context embedded apart, so "keep the music
one" after "cancel both?" looks like agreement about music. The reader encodes the pair
as one sequence, ``[CLS] context [SEP] turn [SEP]``, through the shipped MiniLM with
low-rank adapters (LoRA) fine-tuned on the corpus, and reads the label from its pooled,
normalised vector with a linear layer. The classifier averages its calibrated
probabilities with the head's.

The reader is a small ensemble: adapters fine-tuned alike from different seeds
(``bench/classifier/reader_training.py``'s ``SEEDS``), whose logits are averaged before
the shared temperature. Two fine-tunings that differ only in their seed disagree on
the hard turns; their mean reads better than either (on one fold of the corpus, the
reader's log loss was 0.476 and 0.443 for each alone and 0.436 for the mean).

``reader.npz`` holds only what fine-tuning changed: for each member and each adapted
weight ``W`` of every layer the factors ``A`` (rank × in) and ``B`` (out × rank), the
merged weight being ``W + scale · B A``, and the member's output layer. It is about
1.25 MB a member, rebuilt by ``bench/train_classifier.py``; each member's encoder is
built from the model's own weights plus its deltas by the search encoders' own ONNX
Runtime builder (a float32 graph, cached as its own family), so no torch is needed to
read.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import threading
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np

READER = Path(__file__).with_name("reader.npz")
MAX_TOKENS = 128
"""A pair longer than this keeps the turn and the end of its context."""
PRECISION = "fp32"
"""The reader's graph computes in float32, as it was fine-tuned: on the corpus, int8
rounding moved the shipped reader's probabilities by up to 0.31 and changed 1.4% of its
labels (the head's vectors are int8 in training and reading alike, so it reads the int8
search graph)."""
SCALE = 10.0
"""The pooled vector is L2-normalised and multiplied by this before the output layer."""
ADAPTED = ("attention.self.query", "attention.self.key", "attention.self.value",
           "attention.output.dense", "intermediate.dense", "output.dense")
"""The linear layers of every transformer layer that carry an adapter."""


def tokenise(tokenizer: Any, context: str, turn: str) -> list[int]:
    """``pair_ids`` with a ``tokenizers.Tokenizer`` (the model's ``tokenizer.json``): the
    ids the reader reads, at training and at extraction alike."""

    def encode(text: str) -> list[int]:
        return list(tokenizer.encode(text, add_special_tokens=False).ids)

    return pair_ids(encode, tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]"),
                    context, turn)


def turn_start(ids: Sequence[int], sep: int) -> int | None:
    """Where the turn of a pair starts (segment 1: after the first [SEP]); None for a
    turn read alone, which is all segment 0."""
    first = ids.index(sep) if sep in ids else len(ids)
    return first + 1 if first < len(ids) - 1 else None


def pair_ids(encode: Callable[[str], list[int]], cls: int, sep: int, context: str,
             turn: str, max_tokens: int = MAX_TOKENS) -> list[int]:
    """``[CLS] context [SEP] turn [SEP]`` (``[CLS] turn [SEP]`` without a context), cut
    to ``max_tokens``: the turn first, then as much of the context's end as fits.
    ``encode`` gives a text's word-piece ids without special tokens."""
    said = encode(turn)[:max_tokens - 2]
    if not context:
        return [cls, *said, sep]
    room = max_tokens - 3 - len(said)
    asked = encode(context)[-room:] if room > 0 else []
    if not asked:
        return [cls, *said, sep]
    return [cls, *asked, sep, *said, sep]


@dataclass(frozen=True)
class Adapter:
    """The fine-tuned deltas and the output layer (``reader.npz``)."""

    labels: tuple[str, ...]
    deltas: dict[str, tuple[np.ndarray, np.ndarray]]
    """Weight name (``encoder.layer.0.attention.self.query.weight``) → (A, B)."""
    scale: float
    w: np.ndarray
    """[labels, hidden]."""
    b: np.ndarray
    temperature: float
    model: str
    digest: str
    """sha256 of the file and the member's place in it: its encoder graph's cache key."""

    @classmethod
    def load(cls, path: Path = READER) -> list[Adapter]:
        """The file's members, in order (``member_key`` names their arrays)."""
        import numpy as np

        raw = path.read_bytes()
        digest = hashlib.sha256(raw).hexdigest()[:16]
        try:
            with np.load(io.BytesIO(raw), allow_pickle=False) as z:
                arrays = {k: z[k] for k in z.files}
            names = [str(n) for n in arrays["names"]]
            labels = tuple(str(x) for x in arrays["labels"])
            scale, temperature = float(arrays["scale"]), float(arrays["temperature"])
            model = str(arrays["model"])

            def get(m: int, key: str) -> np.ndarray:
                return arrays[member_key(m, key)].astype(np.float32)

            out = [cls(labels=labels, deltas={n: (get(m, f"a{i}"), get(m, f"b{i}"))
                                              for i, n in enumerate(names)},
                       scale=scale, w=get(m, "w"), b=get(m, "bias"), temperature=temperature,
                       model=model, digest=f"{digest}.{m}")
                   for m in range(int(arrays["members"]))]
        except (KeyError, ValueError, zipfile.BadZipFile, EOFError) as exc:
            raise ValueError(f"{path}: not a reader file ({exc})") from exc
        if not out:
            raise ValueError(f"{path}: not a reader file (no members)")
        return out

    def merged(self, name: str, weight: np.ndarray) -> np.ndarray:
        """``weight`` with this adapter's delta added, if it has one."""
        factors = self.deltas.get(name)
        if factors is None:
            return weight
        a, b = factors
        out: np.ndarray = weight + self.scale * (b @ a)
        return out


def member_key(member: int, key: str) -> str:
    """The name in ``reader.npz`` of a member's array: ``a{i}``/``b{i}`` (the factors of
    the i-th adapted weight in ``names``), ``w`` and ``bias`` (its output layer)."""
    return f"m{member}.{key}"


def _adapted_encoder(path: Path, adapter: Adapter) -> Any:
    """The query encoder of ``path`` with the adapter's deltas merged into its weights."""
    from memtui.search.encoders import onnx_query
    from memtui.search.encoders.numpy_query import NumpyEncoder

    base: type[NumpyEncoder] = (onnx_query.OnnxEncoder if onnx_query.available()
                                else NumpyEncoder)

    class AdaptedEncoder(base):  # type: ignore[valid-type,misc]
        def __init__(self, path: Path, max_tokens: int) -> None:
            if base is NumpyEncoder:
                super().__init__(path, max_tokens)
            else:
                super().__init__(path, max_tokens, precision=PRECISION)
            self.type_step = self.token_types[1] - self.token_types[0]
            self.sep = self.tokenizer.token_to_id("[SEP]")

        def _embedding_sum(self, ids: list[int]) -> np.ndarray:
            """As the model's, with the turn of a pair in segment 1."""
            x: np.ndarray = super()._embedding_sum(ids)
            start = turn_start(ids, self.sep)
            if start is not None:
                x[start:] += self.type_step
            return x

        @contextlib.contextmanager
        def _weights(self) -> Iterator[Callable[[str], np.ndarray]]:
            with super()._weights() as w:
                yield lambda name: adapter.merged(name, w(name))

        cache_family = "reader-encoder"
        one_text_graph = False  # pairs are cut to MAX_TOKENS: encode_many reads them all

        def cache_salt(self) -> bytes:
            return adapter.digest.encode()

    return AdaptedEncoder(path, MAX_TOKENS)


CACHE_SIZE = 4096
"""Readings kept per process, by the pair's token ids: the same reply to the same
proposal is read once (a resumed session's copy of the conversation, a sub-agent's
transcript repeating its prompt, a file extracted again)."""


class Reader:
    """Loads the members and builds their encoders on first use; thread-safe."""

    def __init__(self, path: Path = READER) -> None:
        self._path = path
        self._members: list[tuple[Adapter, Any]] | None = None
        self._lock = threading.Lock()
        self._cache: OrderedDict[tuple[int, ...], np.ndarray] = OrderedDict()
        self._cache_lock = threading.Lock()

    @staticmethod
    def available(path: Path = READER) -> bool:
        return path.is_file()

    def _load(self) -> list[tuple[Adapter, Any]]:
        with self._lock:
            if self._members is None:
                from memtui.search.encoders.embedder import local_model_path

                adapters = Adapter.load(self._path)
                model = local_model_path(adapters[0].model)
                self._members = [(a, _adapted_encoder(model, a)) for a in adapters]
            return self._members

    def labels(self) -> tuple[str, ...]:
        return self._load()[0][0].labels

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """(context, turn) pairs in, calibrated logits out (their softmax is P(label)):
        the mean of the members' logits over the temperature."""
        import numpy as np

        members = self._load()
        if not pairs:
            return np.zeros((0, len(members[0][0].labels)), dtype=np.float32)
        tokenizer = members[0][1].tokenizer
        ids = [tuple(tokenise(tokenizer, c, t)) for c, t in pairs]
        with self._cache_lock:
            known = {k: self._cache[k] for k in ids if k in self._cache}
            for k in known:
                self._cache.move_to_end(k)
        todo = list(dict.fromkeys(k for k in ids if k not in known))
        if todo:
            fresh = np.mean([(np.asarray(encoder.encode_many(todo), dtype=np.float32) * SCALE)
                             @ adapter.w.T + adapter.b for adapter, encoder in members],
                            axis=0) / members[0][0].temperature
            known.update(zip(todo, fresh, strict=True))
            with self._cache_lock:
                self._cache.update(zip(todo, fresh, strict=True))
                while len(self._cache) > CACHE_SIZE:
                    self._cache.popitem(last=False)
        out: np.ndarray = np.stack([known[k] for k in ids]).astype(np.float32)
        return out
