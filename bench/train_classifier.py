"""Train the classifier head from the corpus: no network, reproducible, held-out never read.

Run: .venv/bin/python bench/train_classifier.py [--head-only] [--seeds 0,1]

1. Embeds every train and dev turn (and its context) with the shipped MiniLM, through
   memtui's shared search embedder; vectors are cached in
   ``bench/data/extract-corpus/.cache/`` (not committed) keyed by text.
2. Out-of-fold readings: the hand-written (non-held-out) conversations in four groups by
   conversation, each read by a head trained without it (plus every templated turn and
   SGD train); SGD dev is read by a head trained on all of them.
3. Fits the temperature and the combination thresholds on those readings: the most
   rejection F1 plus decision F1, minus the share of none-turns read as either; prints
   what tuning sees (out of fold, never held-out).
4. Fine-tunes the reader (``memtui/extract/classify/reader.py``: adapters on MiniLM over
   the turn and its context as one sequence, in torch) the same way, out of fold and
   then on everything but SGD, and fits its temperature; the combination's thresholds
   are fitted on the mean of the head's and the reader's probabilities (where the head
   gives a refusal or a decision ``READER_GATE``, as the classifier reads), and a second
   set on the head's alone, for when it reads without the reader. ``--head-only``
   skips the reader (and removes ``reader.npz``); ``--seeds`` fine-tunes one member per
   seed listed (``reader_training.SEEDS`` by default), which the shipped reader
   averages. The reader's members are kept in
   ``bench/data/extract-corpus/readers/`` under a key of the corpus and the code, and
   committed as they finish: fine-tuning them all takes longer than one working session
   on a new machine, so the next one resumes from them.
5. Fits the shipped head on all of it (multinomial logistic regression in numpy,
   class-balanced, hand-written turns weighted most) and writes
   ``memtui/extract/classify/head.npz``, ``reader.npz`` and ``head-manifest.json`` (the
   conversations read).

Examples of the ``heldout`` split raise an error if they reach any of these steps.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
import sys
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.classifier.corpus import LABELS, Example, load  # noqa: E402
from bench.classifier.evaluate import both_label, rules_reading, scores  # noqa: E402
from bench.classifier.training import (  # noqa: E402
    CACHE,
    MODEL,
    SOURCE_WEIGHT,
    CachedEmbed,
    fit,
    fit_temperature,
    fit_thresholds,
    matrix,
    sample_weights,
)
from memtui.extract.classify import reader as reader_module  # noqa: E402
from memtui.extract.classify.apply import (  # noqa: E402
    CORRECTION_SURE,
    OTHER_SURE,
    OTHERS,
    other_category,
)
from memtui.extract.classify.features import BUCKETS, context_of  # noqa: E402
from memtui.extract.classify.head import (  # noqa: E402
    ALONE,
    WEIGHTS,
    Verdict,
    gated,
    softmax,
    verdicts_of,
)
from memtui.extract.classify.reader import READER  # noqa: E402

MANIFEST = ROOT / "memtui/extract/classify/head-manifest.json"
MEMBERS = ROOT / "bench/data/extract-corpus/readers"
"""Where the reader's members are kept, one folder per key (``reader_cache``): committed,
unlike the embedding cache, which is rebuilt in minutes."""


FOLDS = 4


def folds(examples: list[Example]) -> np.ndarray:
    """Each example's fold: hand conversations in FOLDS groups by id, the rest -1."""
    return np.array([zlib.crc32(e.conv.encode()) % FOLDS if e.source == "hand" else -1
                     for e in examples])


def out_of_fold(examples: list[Example], embed: CachedEmbed) -> np.ndarray:
    """P(label) of every non-SGD-dev example from a head that did not see its
    conversation: hand conversations in FOLDS groups; SGD dev is never trained on."""
    x, y = matrix(examples, embed)
    sw = sample_weights(examples)
    fold = folds(examples)
    tune = np.array([e.source == "hand" or e.split == "dev" for e in examples])
    trainable = np.array([not (e.source == "sgd" and e.split == "dev") for e in examples])
    logits = np.zeros((len(examples), len(LABELS)))
    for k in range(FOLDS):
        keep = trainable & (fold != k)
        w, b = fit(x[keep], y[keep], sw[keep])
        part = tune & (fold == k)
        logits[part] = x[part] @ w + b
    w, b = fit(x[trainable], y[trainable], sw[trainable])
    sgd_dev = ~trainable
    logits[sgd_dev] = x[sgd_dev] @ w + b
    return logits


def reader_cache(corpus: list[Example]) -> Path:
    """The folder the reader's members of this corpus are cached in: a key of what a
    member learns from, the list of seeds aside."""
    from bench.classifier import reader_training as rt

    # what a member learns from: every example as read (a relabelled or reworded turn
    # keeps its id), how it is weighted and folded, and the code that fine-tunes it
    key = hashlib.sha256("\n".join(repr((e.id, e.label, e.text, e.answering, e.source,
                                         e.split)) for e in corpus).encode())
    key.update(re.sub(r"(?m)^SEEDS = .*$", "", Path(rt.__file__).read_text()).encode())
    for code in (reader_module.pair_ids, context_of, folds):
        key.update(inspect.getsource(code).encode())
    key.update(repr((reader_module.MAX_TOKENS, reader_module.SCALE, reader_module.ADAPTED,
                     SOURCE_WEIGHT, FOLDS, MODEL)).encode())
    return MEMBERS / f"reader-{key.hexdigest()[:16]}"


def reader_readings(corpus: list[Example], tune: list[int], folder: Path
                    ) -> tuple[np.ndarray, Path]:
    """The reader's out-of-fold logits of the tuning rows (hand conversations by fold,
    SGD dev by the final reader, which never trains on SGD) and the final reader's file
    (``reader.npz`` with temperature 1).

    Every member (a fold, or the final reader, and a seed) is kept on its own in
    ``readers/reader-<key>/`` under a key of the corpus and the fine-tuning code, the list
    of seeds aside: a member takes 15-40 minutes on two cores and the ten well over a
    working session, so a run that stops resumes where it stopped, on this machine or,
    once the finished members are committed, on another; adding a seed to ``SEEDS``
    trains only its five members. The merged ``reader.npz`` is rebuilt, not kept."""
    from bench.classifier import reader_training as rt

    folder.mkdir(parents=True, exist_ok=True)
    tokens = rt.Tokens(MODEL)
    readable = np.array([e.source != "sgd" for e in corpus])
    sw = sample_weights(corpus)
    fold = folds(corpus)
    out = np.zeros((len(corpus), len(LABELS)), dtype=np.float32)
    for k in [*range(FOLDS), -1]:  # -1: the final reader, which reads SGD dev
        keep = np.where(readable & (fold != k))[0] if k >= 0 else np.where(readable)[0]
        part = [i for i in tune if fold[i] == k]
        read = np.zeros((len(rt.SEEDS), len(part), len(LABELS)), dtype=np.float32)
        name, said = (f"fold{k + 1}", f"fold {k + 1}/{FOLDS}") if k >= 0 else ("final",) * 2
        for m, seed in enumerate(rt.SEEDS):
            cached = folder / f"{name}-seed{seed}.npy"
            if cached.is_file() and (got := np.load(cached)).shape == read[m].shape:
                read[m] = got
                continue
            print(f"reader {said}, seed {seed}: {len(keep)} turns")
            net = rt.train_one([corpus[i] for i in keep], sw[keep], tokens, MODEL, seed)
            read[m] = rt.logits([net], [corpus[i] for i in part], tokens)
            if k < 0:
                rt.export([net], folder / f"final-seed{seed}.npz", 1.0, MODEL)
            # last, whole or not at all: a member counts as cached only once complete
            np.save(cached.with_suffix(".part.npy"), read[m])
            cached.with_suffix(".part.npy").replace(cached)
        out[part] = read.mean(axis=0)
    final_path = CACHE.parent / "reader.npz"
    final_path.parent.mkdir(parents=True, exist_ok=True)
    rt.merge([folder / f"final-seed{seed}.npz" for seed in rt.SEEDS], final_path)
    return out[tune], final_path


def main() -> None:
    from bench.classifier import reader_training as rt

    if "--seeds" in sys.argv:
        rt.SEEDS = tuple(int(x) for x in sys.argv[sys.argv.index("--seeds") + 1].split(","))
    corpus = [e for e in load() if e.split in ("train", "dev")]
    # keyed now: the key reads the fine-tuning code's source, and a file edited while the
    # embedding below runs would otherwise be read at the lines it had when imported
    folder = None if "--head-only" in sys.argv else reader_cache(corpus)
    embed = CachedEmbed()
    x, y = matrix(corpus, embed)
    embed.save()
    trainable = np.array([not (e.source == "sgd" and e.split == "dev") for e in corpus])
    tune = [i for i, e in enumerate(corpus) if e.source == "hand" or e.split == "dev"]
    logits = out_of_fold(corpus, embed)
    temperature = fit_temperature(logits[tune], y[tune])
    w, b = fit(x[trainable], y[trainable], sample_weights(corpus)[trainable])
    probs = softmax(logits[tune] / temperature)
    head_alone = verdicts_of(probs, LABELS)
    alone: dict[str, float] = {}
    if folder is None:  # --head-only
        READER.unlink(missing_ok=True)
        reader_temperature = None
    else:
        read, final = reader_readings(corpus, tune, folder)
        reader_temperature = fit_temperature(read, y[tune])
        # the head's own thresholds, for when it reads without the reader
        alone = fit_thresholds([corpus[i] for i in tune], head_alone)
        # as the classifier reads: the mean where the head sees a refusal or a decision
        probs = np.where(gated(probs, LABELS)[:, None],
                         (probs + softmax(read / reader_temperature)) / 2, probs)
        with np.load(final, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        arrays["temperature"] = np.float32(reader_temperature)
        np.savez_compressed(READER, **arrays)
    verdicts = verdicts_of(probs, LABELS)
    thresholds = fit_thresholds([corpus[i] for i in tune], verdicts)
    train = [e for e, t in zip(corpus, trainable, strict=True) if t]
    dev = [corpus[i] for i in tune]
    stored = {**thresholds, **{ALONE + k: v for k, v in alone.items()}}
    names = sorted(stored)
    np.savez_compressed(WEIGHTS, labels=np.array(LABELS), w=w.astype(np.float16), b=b,
                        temperature=np.float32(temperature), model=np.array(MODEL),
                        buckets=np.array([BUCKETS.words, BUCKETS.chars, BUCKETS.asked],
                                         dtype=np.int32),
                        threshold_names=np.array(names),
                        thresholds=np.array([stored[k] for k in names], dtype=np.float32))
    digest = hashlib.sha256("\n".join(sorted(e.id for e in corpus)).encode()).hexdigest()
    MANIFEST.write_text(json.dumps({
        "train": len(train), "dev": len(dev), "temperature": round(temperature, 3),
        "reader_temperature": reader_temperature and round(reader_temperature, 3),
        "reader_seeds": None if folder is None else list(rt.SEEDS),
        "thresholds": {k: round(v, 3) for k, v in thresholds.items()},
        "thresholds_head_alone": {k: round(v, 3) for k, v in alone.items()} or None,
        "sources": sorted({e.source for e in corpus}), "ids_sha256": digest,
        "conversations": sorted({e.conv for e in corpus if e.source == "hand"}),
    }, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({"train": len(train), "dev": len(dev), "temperature": temperature,
                      "reader_temperature": reader_temperature, "thresholds": thresholds,
                      "thresholds_head_alone": alone or None,
                      "weights_bytes": WEIGHTS.stat().st_size,
                      "reader_bytes": READER.stat().st_size if READER.is_file() else 0}))
    hand = [i for i, e in enumerate(dev) if e.source == "hand"]
    print(f"\nOut of fold, {len(hand)} hand-written non-held-out turns (what tuning sees):")
    print("\n".join(out_of_fold_report([dev[i] for i in hand], [verdicts[i] for i in hand],
                                        thresholds)))
    if alone:
        print("The head alone (no reader), with the thresholds fitted for it:")
        print("\n".join(out_of_fold_report([dev[i] for i in hand],
                                            [head_alone[i] for i in hand], alone)))


def out_of_fold_report(examples: list[Example], verdicts: list[Verdict],
                       thresholds: dict[str, float]) -> list[str]:
    """Rejection and decision precision / recall of the classifier alone and of both."""
    gold = [e.label for e in examples]
    rules = [rules_reading(e) for e in examples]
    both = [both_label(r[0], r[1], v, thresholds, e)[0]
            for r, v, e in zip(rules, verdicts, examples, strict=True)]
    nones = [i for i, g in enumerate(gold) if g == "none"]
    lines = []
    for name, pred in (("rules", [r[0] for r in rules]),
                       ("classifier", [v.label for v in verdicts]), ("both", both)):
        got = scores(gold, pred)
        rej, dec = got["rejected"], got["decision"]
        caught = sum(pred[i] in ("rejected", "decision") for i in nones) / max(1, len(nones))
        lines.append(f"  {name:<10} rejected P/R {rej.precision:.2f}/{rej.recall:.2f}  "
                     f"decision P/R {dec.precision:.2f}/{dec.recall:.2f}  "
                     f"none read as either {caught:.1%}")
    # What only the classifier reads is served from ALONE_ACTIVE up: how often it is right.
    lines.append("  what only the classifier read, right / read, by confidence:")
    for label in ("rejected", "decision"):
        cells = []
        for lo, hi in ((0.0, 0.7), (0.7, 0.9), (0.9, 1.01)):
            hits = [e.label == label for e, r, v in zip(examples, rules, verdicts, strict=True)
                    if r[0] not in ("rejected", "decision")
                    and lo <= _alone(r, v, thresholds, label, e) < hi]
            cells.append(f"{lo:.1f}-{min(hi, 1.0):.1f}: {sum(hits)}/{len(hits)}")
        lines.append(f"    {label:<9} " + "  ".join(cells))
    # Where the rules read nothing, the other labels it is very sure of are recorded too.
    quiet = [(e, v) for e, r, v in zip(examples, rules, verdicts, strict=True)
             if not r[2] and other_category(v, bool(e.prev))]
    cells = [f"{label} {sum(e.label == label for e, v in quiet if v.label == label)}/"
             f"{sum(v.label == label for _, v in quiet)}" for label in OTHERS]
    lines.append(f"  recorded where the rules read nothing (from {OTHER_SURE}; corrections "
                 f"from {CORRECTION_SURE}), right / read: "
                 + "  ".join(cells) + f"  none-turns {sum(e.label == 'none' for e, _ in quiet)}")
    return lines


def _alone(rule: tuple[str, float, bool], verdict: Verdict, thresholds: dict[str, float],
           label: str, ex: Example) -> float:
    """The confidence of ``label`` read by the classifier alone, -1 when not read."""
    got, confidence = both_label(rule[0], rule[1], verdict, thresholds, ex)
    return confidence if got == label else -1.0


if __name__ == "__main__":
    main()
