"""Ranking experiments on the LoCoMo dev slice, in-process: one index build, many rankings.

The official number comes from the evaluation harness, which drives the CLI in fresh
homes. This script exists to compare ranking variants quickly: it builds each
conversation's index once per chunking variant (kept in .bench/locomo/, embeddings
cached), then runs every question through each ranking variant and prints R@k. The data
is the LoCoMo dev slice in bench/data/locomo/ (CC BY-NC 4.0), or ``--data FILE``.

    .venv/bin/python bench/bench_search_locomo.py                 # the default variants
    .venv/bin/python bench/bench_search_locomo.py --context 0,200 --fusion weighted,rrf
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from locomo_data import DEV, evidence_ids, load, to_transcript  # noqa: E402

from memtui.home import Home  # noqa: E402
from memtui.search.hybrid import Searcher, SearchOptions  # noqa: E402
from memtui.search.index import SearchIndex  # noqa: E402
from memtui.stores import sources as source_store  # noqa: E402

KS = (5, 10, 25, 50)


def build(sample: dict[str, Any], root: Path, context: int) -> tuple[Home, list[dict[str, Any]]]:
    home = Home(root / f"{sample['sample_id']}-ctx{context}")
    fresh = not home.exists()
    if fresh:
        home.init(["eval"])
    home.settings.search.session_chunking = "message"
    home.settings.search.context_chars = context
    transcript = home.root / "transcript.jsonl"
    known = to_transcript(sample, transcript)
    if fresh:
        db = home.open_db()
        source_store.add(db, str(transcript), agent="eval", fmt="generic", actor="cli")
        db.close()
    questions = []
    for n, qa in enumerate(sample["qa"]):
        ev = evidence_ids(qa, known)
        if ev:
            questions.append({"id": f"q{n}", "query": qa["question"], "evidence": ev,
                              "category": int(qa.get("category", 0))})
    return home, questions


def evaluate(searcher: Searcher, questions: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rows = []
    opts = SearchOptions(sources=("sessions",), max_results=max(KS), min_score=0.0)
    for q in questions:
        hits = searcher.search(q["query"], opts).results
        row = {"category": q["category"]}
        for k in KS:
            covered = {m for h in hits[:k] for m in h.message_ids}
            row[f"R@{k}"] = len(covered & set(q["evidence"])) / len(q["evidence"])
        rows.append(row)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    core = [r for r in rows if r["category"] != 5]
    parts = [f"n={len(core)}"]
    for k in KS:
        parts.append(f"R@{k}={statistics.fmean(r[f'R@{k}'] for r in core):.3f}")
    for cat in (1, 2, 3, 4):
        sub = [r for r in core if r["category"] == cat]
        if sub:
            parts.append(f"c{cat}={statistics.fmean(r['R@10'] for r in sub):.3f}")
    return " ".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--context", default="0", help="context_chars variants, comma-separated")
    ap.add_argument("--fusion", default="weighted,rrf", help="fusion variants")
    ap.add_argument("--weights", default="0.7", help="vector weight variants (text = 1 - w)")
    ap.add_argument("--set", action="append", default=[],
                    help="extra [search] setting variant name=v1|v2 (e.g. session_boost=0|0.3)")
    ap.add_argument("--root", default=str(REPO / ".bench" / "locomo"))
    ap.add_argument("--data", type=Path, default=DEV,
                    help="a LoCoMo JSON file (default: the dev slice in bench/data/locomo/)")
    args = ap.parse_args()
    samples = load(args.data)
    root = Path(args.root)
    root.mkdir(parents=True, exist_ok=True)
    extra: list[list[tuple[str, Any]]] = [[]]
    for spec in args.set:
        name, values = spec.split("=", 1)
        extra = [e + [(name, json.loads(v))] for e in extra for v in values.split("|")]
    for context in [int(c) for c in args.context.split(",")]:
        built = []
        for sample in samples:
            home, questions = build(sample, root, context)
            idx = SearchIndex(home, "eval")
            t0 = time.perf_counter()
            report = idx.sync()
            print(f"ctx={context} {sample['sample_id']}: indexed {report.chunks_added} chunks "
                  f"in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
            built.append((idx, questions))
        for fusion in args.fusion.split(","):
            for w in [float(x) for x in args.weights.split(",")]:
                for variant in extra:
                    rows: list[dict[str, Any]] = []
                    t0 = time.perf_counter()
                    for idx, questions in built:
                        s = dataclasses.replace(idx.settings, fusion=fusion, vector_weight=w,
                                                text_weight=round(1 - w, 3))
                        for name, value in variant:
                            if not hasattr(s, name):
                                raise SystemExit(f"no [search] setting {name!r}")
                            setattr(s, name, value)
                        idx.settings = s
                        rows += evaluate(Searcher(idx, warm=True), questions)
                    ms = 1000 * (time.perf_counter() - t0) / max(1, len(rows))
                    label = " ".join(f"{n}={v}" for n, v in variant)
                    print(f"ctx={context} {fusion} w={w} {label} | {table(rows)} | "
                          f"{ms:.1f} ms/q", flush=True)


if __name__ == "__main__":
    main()
