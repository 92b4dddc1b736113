"""Benchmark of the rejection/decision classifier on the held-out split of the corpus.

Run: .venv/bin/python bench/bench_classifier.py [--skip-cross] [--cross-reader]

1. Held-out (hand-written conversations never read by training or tuning): per label
   precision / recall / F1 for the phrase rules alone, the classifier alone, and both
   (everything recorded, review included), and of both what is served (active: what
   agents are given, review excluded); the share of none-turns each captures. The rules
   and both are read through the stenographer's whole pipeline, as it runs: redaction,
   a new home's capture policy (noise refused, phrase hits added), the extractor, the
   policy enforced.
2. Reliability of the combined rejection and decision confidences on held-out; and on
   600 random held-out turns an independent annotator labelled blind
   (``audit/heldout-relabelled.tsv`` in the corpus), how far the annotator and the
   classifier each agree with the corpus's labels: what a careful reader reaches.
3. Cross-domain: for each of the six domains, a head trained on the other five (plus
   SGD train; with ``--cross-reader`` a reader fine-tuned on them too), measured on
   every hand-written turn of the sixth; and the shipped classifier on SGD's test split
   (travel and booking, services partly unseen in training).
4. Throughput: turns classified per second (embedding included), and the local
   extractor with the classifier over the sample transcripts.
Targets on held-out: rejection precision and recall >= 0.9, decision recall >= 0.8,
at most 1% of none-turns captured.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.classifier.corpus import CODES, DOMAINS, LABELS, Example, load  # noqa: E402
from bench.classifier.evaluate import (  # noqa: E402
    Score,
    citations,
    label_of,
    piped,
    rules_reading,
    scores,
)
from bench.classifier.training import CachedEmbed, fit, matrix, sample_weights  # noqa: E402
from memtui.extract.classify.head import Classifier, Head  # noqa: E402
from memtui.extract.classify.reader import Adapter, Reader  # noqa: E402
from memtui.extract.local import LocalExtractor  # noqa: E402
from memtui.extract.policy import default_policy  # noqa: E402

KEY = ("rejected", "decision")


def readings(examples: list[Example], clf: Classifier) -> dict[str, list[tuple[str, float, bool]]]:
    """Per method, per example: (label, confidence, captured anything)."""
    verdicts = clf.verdicts([(e.answering, e.text) for e in examples])
    # What the stenographer runs: the capture policy (a new home's), the extractor, the
    # policy enforced; the rules alone as with [extract] classifier = false.
    policy = default_policy()
    rules = [rules_reading(e, policy=policy) for e in examples]
    wired = LocalExtractor(classifier=clf)
    recorded = [piped(e, wired, policy) for e in examples]
    both = [label_of(out) for out in recorded]
    served = [label_of(out, served=True) for out in recorded]
    alone = [(v.label, v.probability, v.label != "none") for v in verdicts]
    return {"rules": rules, "classifier": alone, "both": both, "both, served": served}


def table(gold: list[str], by_method: dict[str, list[tuple[str, float, bool]]]) -> list[str]:
    got = {m: scores(gold, [r[0] for r in rows]) for m, rows in by_method.items()}
    lines = ["| label | n | " + " | ".join(f"{m} P / R / F1" for m in got) + " |",
             "| --- | --- | " + " | ".join("---" for _ in got) + " |"]
    for label in LABELS:
        cells = [_cell(got[m][label]) for m in got]
        lines.append(f"| {label} | {got['rules'][label].support} | " + " | ".join(cells) + " |")
    nones = [i for i, g in enumerate(gold) if g == "none"]
    lines.append("| none-turns captured | " + str(len(nones)) + " | " + " | ".join(
        f"{sum(by_method[m][i][2] for i in nones) / max(1, len(nones)):.1%}" for m in got) + " |")
    keyed = [sum(by_method[m][i][0] in KEY for i in nones) / max(1, len(nones)) for m in got]
    lines.append(f"| none-turns read as a refusal or a decision | {len(nones)} | "
                 + " | ".join(f"{share:.1%}" for share in keyed) + " |")
    return lines


def _cell(s: Score) -> str:
    return f"{s.precision:.2f} / {s.recall:.2f} / {s.f1:.2f}"


def reliability(gold: list[str], rows: list[tuple[str, float, bool]]) -> list[str]:
    """Of the entries given confidence in a bin, how many were right."""
    bins = [(0.0, 0.6), (0.6, 0.7), (0.7, 0.8), (0.8, 0.9), (0.9, 1.01)]
    lines = ["| label | confidence | entries | correct | mean confidence |",
             "| --- | --- | --- | --- | --- |"]
    for label in KEY:
        for lo, hi in bins:
            hits = [(g == label, c) for g, (p, c, _) in zip(gold, rows, strict=True)
                    if p == label and lo <= c < hi]
            if hits:
                lines.append(f"| {label} | {lo:.1f}–{min(hi, 1.0):.1f} | {len(hits)} | "
                             f"{sum(h for h, _ in hits) / len(hits):.2f} | "
                             f"{statistics.mean(c for _, c in hits):.2f} |")
    return lines


RELABELLED = ROOT / "bench/data/extract-corpus/audit/heldout-relabelled.tsv"


def agreement(heldout: list[Example], got: dict[str, list[tuple[str, float, bool]]]
              ) -> list[str]:
    """The annotator's labels and the classifier's readings (both, everything recorded)
    against the corpus's, on the turns the annotator labelled."""
    given = {}
    for line in RELABELLED.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            example, code = line.split("\t")
            given[example] = CODES[code]
    rows = [i for i, e in enumerate(heldout) if e.id in given]
    gold = [heldout[i].label for i in rows]
    nones = [j for j, g in enumerate(gold) if g == "none"]
    lines = ["| reader | rejected P / R | decision P / R | none-turns captured |",
             "| --- | --- | --- | --- |"]
    annotator = [given[heldout[i].id] for i in rows]
    for name, pred, captured in (
            ("independent annotator", annotator, [a != "none" for a in annotator]),
            ("rules and classifier", [got["both"][i][0] for i in rows],
             [got["both"][i][2] for i in rows])):
        sc = scores(gold, pred)
        caught = sum(captured[j] for j in nones) / max(1, len(nones))
        lines.append(f"| {name} | {sc['rejected'].precision:.2f} / {sc['rejected'].recall:.2f} | "
                     f"{sc['decision'].precision:.2f} / {sc['decision'].recall:.2f} | "
                     f"{caught:.1%} |")
    return [f"{len(rows)} held-out turns; the annotator read the conversation so far, the "
            "classifier the turn and the one before.", "", *lines]


def cross_domain(corpus: list[Example], embed: CachedEmbed, shipped: Head,
                 with_reader: bool) -> list[str]:
    """Per domain, a head (and with ``with_reader`` a reader of two members,
    fine-tuned: about twenty minutes each) trained on the other five, read on every
    hand-written turn of it."""
    lines = ["| test domain | turns | classifier rejected F1 | both rejected P / R | "
             "both decision R |", "| --- | --- | --- | --- | --- |"]
    trainable = [e for e in corpus if e.split in ("train", "dev")]
    shipped_reader = Adapter.load()[0] if with_reader else None
    for domain in DOMAINS:
        train = [e for e in trainable if e.domain != domain and e.source != "sgd"
                 or e.source == "sgd" and e.split == "train"]
        test = [e for e in corpus if e.domain == domain and e.source == "hand"]
        x, y = matrix(train, embed)
        w, b = fit(x, y)
        head = Head(LABELS, w, b, shipped.temperature, shipped.thresholds, shipped.model,
                    shipped.buckets, shipped.alone)
        reader: Reader | bool = False
        if shipped_reader is not None:
            from bench.classifier import reader_training as rt

            tokens = rt.Tokens(shipped.model)
            readable = [e for e in train if e.source != "sgd"]
            nets = rt.train(readable, sample_weights(readable), tokens, shipped.model)
            path = Path(tempfile.mkdtemp()) / f"reader-{domain}.npz"
            rt.export(nets, path, shipped_reader.temperature, shipped.model)
            reader = Reader(path)
        clf = Classifier(embed=embed, head=head, reader=reader)
        got = readings([_unsplit(e) for e in test], clf)
        gold = [e.label for e in test]
        alone = scores(gold, [r[0] for r in got["classifier"]])
        both = scores(gold, [r[0] for r in got["both"]])
        lines.append(f"| {domain} | {len(test)} | {alone['rejected'].f1:.2f} | "
                     f"{both['rejected'].precision:.2f} / {both['rejected'].recall:.2f} | "
                     f"{both['decision'].recall:.2f} |")
    return lines


def _unsplit(e: Example) -> Example:
    return dataclasses.replace(e, split="cross")


def throughput(examples: list[Example], clf: Classifier, embed: CachedEmbed) -> list[str]:
    pairs = [(e.answering, e.text) for e in examples]
    start = time.perf_counter()
    embed.vectors.clear()  # time the model, not the cache
    clf.verdicts(pairs)
    took = time.perf_counter() - start
    return [f"classifier, embedding included: {len(pairs) / took:.0f} turns/s "
            f"({len(pairs)} turns, {took:.2f} s)"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--skip-cross", action="store_true")
    ap.add_argument("--cross-reader", action="store_true",
                    help="fine-tune a reader per domain too (about two hours)")
    args = ap.parse_args()
    corpus = load()
    heldout = [e for e in corpus if e.split == "heldout"]
    embed = CachedEmbed()
    clf = Classifier(embed=embed)
    gold = [e.label for e in heldout]
    got = readings(heldout, clf)
    print(f"## Held-out: {len(heldout)} hand-written turns, "
          f"{len({e.conv for e in heldout})} conversations\n")
    print("\n".join(table(gold, got)))
    entries, own, answering = citations(heldout, LocalExtractor(classifier=clf),
                                        default_policy())
    print(f"\nCitations: {own} of {entries} entries cite their own turn; {answering} "
          f"rejections and decisions also cite the proposal they answer.")
    print("\n## Reliability of the combined confidences (held-out)\n")
    print("\n".join(reliability(gold, got["both"])))
    print("\n## Agreement with the corpus's labels: an independent annotator (held-out)\n")
    print("\n".join(agreement(heldout, got)))
    sgd_test = [e for e in corpus if e.split == "sgd-test"]
    print(f"\n## Cross-domain: SGD test ({len(sgd_test)} turns, travel and booking)\n")
    print("\n".join(table([e.label for e in sgd_test], readings(sgd_test, clf))))
    if clf.reader is not None:
        head_only = readings(heldout, Classifier(embed=embed, reader=False))
        print("\n## Held-out, the head without the reader (with the thresholds fitted "
              "for it alone)\n")
        print("\n".join(table(gold, head_only)))
    if not args.skip_cross:
        with_reader = clf.reader is not None and args.cross_reader
        print("\n## Cross-domain: train on five domains, test on the sixth "
              f"({'head and reader' if with_reader else 'the head alone'})\n")
        print("\n".join(cross_domain(corpus, embed, clf.head, with_reader)))
    embed.save()
    print("\n## Throughput\n")
    print("\n".join(throughput(heldout, clf, embed)))


if __name__ == "__main__":
    main()
