"""The learned head: multinomial logistic regression over the features, temperature-scaled.

``head.npz`` holds the weights, the temperature fitted on the dev split, the thresholds
the combination uses (also fitted on dev) and the labels in order. It is rebuilt by
``bench/train_classifier.py`` from the corpus; the held-out split never reaches it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memtui.extract.classify.features import (
    Buckets,
    Embed,
    context_of,
    features,
    model_embed,
)
from memtui.extract.classify.reader import Reader

if TYPE_CHECKING:
    import numpy as np

WEIGHTS = Path(__file__).with_name("head.npz")
ALONE = "alone."
"""The prefix, in ``head.npz``, of the thresholds fitted for the head without the reader."""
log = logging.getLogger(__name__)
READER_GATE = 0.2
"""The reader reads a turn only where the head gives a refusal or a decision at least
this chance. Out of fold (``bench/train_classifier.py``'s readings) skipping the other
turns lost no rejection or decision the mean recorded (a few none-turns fewer were
recorded) and spared the reader 56% of the corpus's turns, more of a real session's
(mostly instructions and questions): the reader costs 3–13 ms a turn, the head ~1 ms."""


@dataclass(frozen=True)
class Verdict:
    """The head's calibrated reading of one turn."""

    label: str
    probability: float
    rejected: float
    """P(rejected), whatever the top label."""
    decision: float


@dataclass(frozen=True)
class Head:
    labels: tuple[str, ...]
    w: np.ndarray
    b: np.ndarray
    temperature: float
    thresholds: dict[str, float]
    model: str
    buckets: Buckets = Buckets(0, 0, 0)
    """The hashed blocks of the feature vector the weights were fitted with."""
    alone: dict[str, float] | None = None
    """The thresholds fitted for the head reading alone, where ``thresholds`` were fitted
    for its mean with the reader (None: the file has one set, used either way)."""

    @classmethod
    def load(cls, path: Path = WEIGHTS) -> Head:
        import numpy as np

        with np.load(path, allow_pickle=False) as z:
            names = [str(k) for k in z["threshold_names"]]
            every = dict(zip(names, (float(v) for v in z["thresholds"]), strict=True))
            alone = {k.removeprefix(ALONE): v for k, v in every.items() if k.startswith(ALONE)}
            # Weights are stored as float16 (half the file, no measurable change in any
            # reading) and computed with in float32.
            return cls(labels=tuple(str(x) for x in z["labels"]),
                       w=z["w"].astype(np.float32), b=z["b"].astype(np.float32),
                       temperature=float(z["temperature"]),
                       thresholds={k: v for k, v in every.items() if not k.startswith(ALONE)},
                       alone=alone or None,
                       model=str(z["model"]),
                       buckets=Buckets(*(int(n) for n in z["buckets"])) if "buckets" in z
                       else Buckets(0, 0, 0))

    def probabilities(self, x: np.ndarray) -> np.ndarray:
        return softmax((x @ self.w + self.b) / self.temperature)


def softmax(z: np.ndarray) -> np.ndarray:
    import numpy as np

    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=1, keepdims=True))


class Classifier:
    """Loads the head, the embedder and the reader on first use; shared by every
    extraction. With a reader (``reader.py``), a verdict's probabilities are the mean of
    the head's and the reader's, both calibrated (where the head sees a refusal or a
    decision at all: ``READER_GATE``); ``reader=False`` reads with the head
    alone, with the thresholds fitted for it (``thresholds``)."""

    def __init__(self, embed: Embed | None = None, weights: Path = WEIGHTS,
                 head: Head | None = None, reader: Reader | bool = True) -> None:
        self._embed = embed
        self._weights = weights
        self._head = head
        if reader is True:
            self.reader: Reader | None = Reader() if Reader.available() else None
        else:
            self.reader = reader or None
        self._lock = threading.Lock()

    @property
    def head(self) -> Head:
        with self._lock:
            if self._head is None:
                self._head = Head.load(self._weights)
                if self._embed is None:
                    self._embed = model_embed(self._head.model)
            return self._head

    def thresholds(self) -> dict[str, float]:
        """The combination's thresholds for how this classifier reads: fitted for the mean
        of the head and the reader, or for the head alone when it has no reader (none
        shipped, ``reader=False``, or its file turned out damaged)."""
        head = self.head
        if self.reader is None and head.alone is not None:
            return head.alone
        return head.thresholds

    def verdicts(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        """(what the turn answers, turn) pairs in, one verdict each out: the open offer,
        else the preceding turn (``PreparedTurn.answering``)."""
        if not pairs:
            return []
        head = self.head
        assert self._embed is not None
        contexts = [context_of(p) for p, _ in pairs]
        x = features([t for _, t in pairs], contexts, self._embed, head.buckets)
        probs = head.probabilities(x)
        if self.reader is not None:
            try:
                if self.reader.labels() != head.labels:
                    raise ValueError("its labels are not the head's: rebuild both with "
                                     "bench/train_classifier.py")
                rows = [int(i) for i in gated(probs, head.labels).nonzero()[0]]
                if rows:
                    probs[rows] = (probs[rows] + softmax(self.reader.logits(
                        [(contexts[i], pairs[i][1]) for i in rows]))) / 2
            except (OSError, ValueError) as exc:
                log.warning("the extraction reader is unavailable, the head reads alone: %s",
                            exc)
                self.reader = None
        return verdicts_of(probs, head.labels)


def gated(probs: np.ndarray, labels: Sequence[str]) -> np.ndarray:
    """Which rows of the head's probabilities the reader reads (``READER_GATE``)."""
    import numpy as np

    rej, dec = labels.index("rejected"), labels.index("decision")
    return np.asarray(np.maximum(probs[:, rej], probs[:, dec]) >= READER_GATE)


def verdicts_of(probs: np.ndarray, labels: Sequence[str]) -> list[Verdict]:
    """One verdict per row of calibrated probabilities."""
    rej, dec = labels.index("rejected"), labels.index("decision")
    out = []
    for row in probs:
        top = int(row.argmax())
        out.append(Verdict(labels[top], float(row[top]), float(row[rej]), float(row[dec])))
    return out
