"""Fitting the head: embedding with a cache, softmax regression, temperature, thresholds.

Shared by ``bench/train_classifier.py`` (the shipped head) and ``bench/bench_classifier.py``
(the cross-domain runs). Every entry point refuses held-out examples.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bench.classifier.corpus import DATA, LABELS, Example
from bench.classifier.evaluate import both_label, rules_reading
from memtui.extract.classify.features import context_of, features, model_embed, proposes
from memtui.extract.classify.head import Verdict, softmax

MODEL = "all-MiniLM-L6-v2"
CACHE = DATA / ".cache/embeddings.npz"


class CachedEmbed:
    """The model's vectors, remembered across runs (embedding the corpus takes minutes)."""

    def __init__(self) -> None:
        self.vectors: dict[str, np.ndarray] = {}
        if CACHE.is_file():
            with np.load(CACHE, allow_pickle=False) as z:
                self.vectors = dict(zip((str(k) for k in z["keys"]), z["vectors"], strict=True))
        self.model = model_embed(MODEL)
        self.dirty = False

    def __call__(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in texts if t not in self.vectors]
        if missing:
            for t, v in zip(missing, self.model(missing), strict=True):
                self.vectors[t] = v
            self.dirty = True
        return np.vstack([self.vectors[t] for t in texts])

    def save(self) -> None:
        if self.dirty:
            CACHE.parent.mkdir(parents=True, exist_ok=True)
            keys = sorted(self.vectors)
            np.savez(CACHE, keys=np.array(keys), vectors=np.vstack([self.vectors[k] for k in keys]))


def matrix(examples: list[Example], embed: CachedEmbed) -> tuple[np.ndarray, np.ndarray]:
    if any(ex.split == "heldout" for ex in examples):
        raise RuntimeError("a held-out example reached training or tuning")
    x = features([e.text for e in examples], [context_of(e.answering) for e in examples], embed)
    y = np.array([LABELS.index(e.label) for e in examples])
    return x, y


SOURCE_WEIGHT = {"hand": 3.0, "generated": 1.0, "sgd": 0.3}
"""People's own words count most; templated and travel-booking turns fill in (SGD's
weight was 0.7 until the hashed words joined the features: its booking phrases then
pulled the hand-written turns' out-of-fold rejection precision down)."""


def sample_weights(examples: list[Example]) -> np.ndarray:
    return np.array([SOURCE_WEIGHT[e.source] for e in examples])


def fit(x: np.ndarray, y: np.ndarray, source_weight: np.ndarray | None = None, *,
        l2: float = 1e-4, steps: int = 300, lr: float = 0.05) -> tuple[np.ndarray, np.ndarray]:
    """Class-balanced, source-weighted softmax regression by Adam on the full batch."""
    n, d = x.shape
    k = len(LABELS)
    counts = np.bincount(y, minlength=k).astype(np.float64)
    weight = (n / (k * np.maximum(counts, 1)))[y]
    if source_weight is not None:
        weight = weight * source_weight
    onehot = np.eye(k, dtype=np.float32)[y]
    weight = weight.astype(np.float32)
    x = x.astype(np.float32)
    w, b = np.zeros((d, k), np.float32), np.zeros(k, np.float32)
    mw, vw, mb, vb = (np.zeros_like(w), np.zeros_like(w), np.zeros_like(b), np.zeros_like(b))
    for step in range(1, steps + 1):
        p = softmax(x @ w + b)
        g = (p - onehot) * weight[:, None] / weight.sum()
        gw, gb = x.T @ g + l2 * w, g.sum(axis=0)
        for m, v, grad in ((mw, vw, gw), (mb, vb, gb)):
            m *= 0.9
            m += 0.1 * grad
            v *= 0.999
            v += 0.001 * grad * grad
        w -= lr * (mw / (1 - 0.9 ** step)) / (np.sqrt(vw / (1 - 0.999 ** step)) + 1e-8)
        b -= lr * (mb / (1 - 0.9 ** step)) / (np.sqrt(vb / (1 - 0.999 ** step)) + 1e-8)
    return w.astype(np.float32), b.astype(np.float32)


def fit_temperature(logits: np.ndarray, y: np.ndarray) -> float:
    best, best_nll = 1.0, float("inf")
    for t in np.arange(0.3, 4.01, 0.05):
        p = softmax(logits / t)
        nll = -float(np.mean(np.log(p[np.arange(len(y)), y] + 1e-12)))
        if nll < best_nll:
            best, best_nll = float(t), nll
    return best


def fit_thresholds(dev: list[Example], verdicts: list[Verdict]) -> dict[str, float]:
    """The combination's thresholds that read the most rejections and decisions right
    (the sum of their F1) less the share of none-turns read as either.

    These thresholds decide what is *recorded*; what is *served* is decided later by the
    calibrated confidence against the promotion threshold (below it a rejection waits in
    review). So recall is worth more here than a precision floor: a refusal never
    recorded is the failure people notice, one recorded for review costs a keypress.
    """
    rules = [rules_reading(e) for e in dev]
    offered = [proposes(e.answering) for e in dev]
    gold = [e.label for e in dev]
    nones = [i for i, g in enumerate(gold) if g == "none"]

    def f1(pred: list[str], label: str) -> float:
        tp = sum(g == p == label for g, p in zip(gold, pred, strict=True))
        return 2 * tp / max(1, pred.count(label) + gold.count(label))

    best: tuple[float, dict[str, float]] = (-1.0, {})
    # From 0.5 up: with calibrated probabilities, anything recorded is more likely right
    # than wrong (lower thresholds win a little recall on the corpus and fill a person's
    # review with questions and instructions in real sessions).
    # A question's threshold ("question", 0: as any turn's) is searched once the others
    # are fitted: a pushback that leaves the choice open is the commonest question read
    # as a refusal.
    def value(th: dict[str, float]) -> float:
        pred = [both_label(r[0], r[1], v, th, e, o)[0]
                for r, v, e, o in zip(rules, verdicts, dev, offered, strict=True)]
        captured = sum(pred[i] in ("rejected", "decision") for i in nones)
        return f1(pred, "rejected") + f1(pred, "decision") - captured / max(1, len(nones))

    for rej in np.arange(0.5, 0.96, 0.05):
        for veto in (0.0, 0.05, 0.1, 0.2, 0.3, 0.4):
            for dec in np.arange(0.5, 0.96, 0.05):
                th = {"rejected": round(float(rej), 2), "veto": veto,
                      "decision": round(float(dec), 2), "question": 0.0,
                      "unoffered": 1.01}
                got = value(th)
                if got > best[0]:
                    best = (got, th)
    # Each added threshold is searched alone, the others fixed, kept only if it helps.
    # Then what a refusal needs where the preceding turn shows no offer ("unoffered",
    # 1.01: none is read there): an offer is often only implied, and an instruction
    # after a report reads much like a refusal.
    for name, values in (("question", (0.6, 0.7, 0.8, 0.9, 1.01)),
                         ("unoffered", (0.5, 0.55, 0.6, 0.65, 0.7, 0.8, 0.9))):
        for one in values:
            th = {**best[1], name: one}
            got = value(th)
            if got > best[0]:
                best = (got, th)
    return best[1]
