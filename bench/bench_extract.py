"""Benchmark of the stenographer: local-extractor throughput and the cost of an idle run.

Run: .venv/bin/python bench/bench_extract.py [--copies N] [--repeat R] [--stages]

1. Extractor throughput: every turn of the sample transcripts (tests/data/claude-code and
   sample-data/transcripts) extracted by the local extractor, turns per second, median
   of R runs (target: at least 5,000 turns/s); and the same with the preparation each
   turn gets first (redaction and the policy) included.
2. Pipeline throughput: the same transcripts copied N times with fresh message ids,
   extracted into a new home (read, redact, policy, extract, consolidate, write,
   watermark); turns per second, with the phrase rules only and with the learned
   classifier (the default; its model loads inside the timed run). Then the worst case
   for the classifier: the hand-written corpus as transcripts, every other turn a
   person's reply it reads, once, so that no reading comes from a cache (the copies
   above repeat the samples' words, which the embedding and reader caches serve from
   the second copy on: what a resumed session or a re-extraction costs); no target,
   printed for the record.
3. Idle run: 100 sources with nothing new; median wall time of ``stenographer.run``.
   Target: at most 100 ms.

``--stages`` prints only where a classifier-on pipeline run spends its time, stage by
stage (under cProfile: read the shares, not the seconds).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.classifier.corpus import CODES  # noqa: E402
from memtui.extract import stenographer as steno  # noqa: E402
from memtui.extract.choose import load_capture_policy  # noqa: E402
from memtui.extract.local import LocalExtractor  # noqa: E402
from memtui.extract.prepare import FileContext, Preparer  # noqa: E402
from memtui.home import Home  # noqa: E402
from memtui.stores import sources  # noqa: E402
from memtui.transcripts import read_transcript  # noqa: E402

SAMPLES = [*sorted((ROOT / "tests/data/claude-code").glob("*.jsonl")),
           *sorted((ROOT / "sample-data/transcripts").rglob("*.jsonl"))]


def bench_extractor(repeat: int) -> tuple[float, float, int]:
    """(extractor turns/s, redact + policy + extractor turns/s, turns)."""
    turns = [t for path in SAMPLES for t in read_transcript(path, final=True).turns]
    with tempfile.TemporaryDirectory(prefix="memtui-bench-") as scratch:
        policy = load_capture_policy(Home(scratch))  # no policy.yaml there: the default one
    extractor = LocalExtractor()
    alone, whole = [], []
    for _ in range(repeat):
        preparer = Preparer(policy)
        ctx = FileContext()
        start = time.perf_counter()
        prepared = [p.turn for p in (preparer.prepare(t, ctx) for t in turns)
                    if p.turn is not None]
        middle = time.perf_counter()
        extractor.extract(prepared)
        end = time.perf_counter()
        alone.append(len(turns) / (end - middle))
        whole.append(len(turns) / (end - start))
    return statistics.median(alone), statistics.median(whole), len(turns)


_ID = re.compile(r'"(uuid|id|parentUuid|parentId|sessionId|session|tool_use_id|toolCallId|'
                 r'tool_call_id)":"([^"]+)"')


def copy_with_new_ids(src: Path, dst: Path, tag: str) -> None:
    text = src.read_text(encoding="utf-8")
    dst.write_text(_ID.sub(lambda m: f'"{m.group(1)}":"{m.group(2)}-{tag}"', text),
                   encoding="utf-8")
    os.utime(dst, (1_700_000_000, 1_700_000_000))


def make_home(root: Path) -> Home:
    home = Home(root)
    home.init(["main"])
    return home


def conversation_transcripts(folder: Path, copies: int) -> None:
    """The hand-written corpus as generic transcripts: every other turn is a person's
    reply the classifier reads, the worst case for its cost (agent sessions are mostly
    tool calls and results, which it never reads)."""
    lines = (ROOT / "bench/data/extract-corpus/hand").glob("*.txt")
    turns = [(("assistant", line[2:]) if line.startswith("> ") else ("user", line[2:]))
             for path in sorted(lines) for line in path.read_text(encoding="utf-8").splitlines()
             if line[:2] == "> " or line[:1] in CODES and line[1:2] == " "]
    for c in range(copies):
        with (folder / f"corpus-{c:03d}.jsonl").open("w", encoding="utf-8") as fh:
            for i, (role, text) in enumerate(turns):
                fh.write(json.dumps({"type": "message", "id": f"c{c}-{i}", "session": f"c{c}",
                                     "role": role, "ts": "2026-03-01T10:00:00Z",
                                     "content": text}) + "\n")


def bench_pipeline(copies: int, *, classifier: bool = True,
                   conversations: bool = False) -> tuple[float, int]:
    work = Path(tempfile.mkdtemp(prefix="memtui-bench-"))
    folder = work / "transcripts"
    folder.mkdir()
    if conversations:
        conversation_transcripts(folder, 1)
    else:
        for c in range(copies):
            for i, src in enumerate(SAMPLES):
                copy_with_new_ids(src, folder / f"{c:03d}-{i:02d}.jsonl", f"c{c}")
    home = make_home(work / "home")
    if not classifier:
        with home.config_path.open("a", encoding="utf-8") as fh:
            fh.write("\n[extract]\nclassifier = false\n")
        home = Home(home.root)
    with home.open_db() as db:
        sources.add(db, str(folder / "*.jsonl"), agent="main", actor="test")
        start = time.perf_counter()
        report = steno.run(home, db)
        seconds = time.perf_counter() - start
    assert not report.failed and not report.problems, report.counts()
    shutil.rmtree(work, ignore_errors=True)
    return report.turns_extracted / seconds, report.turns_extracted


def bench_idle(n_sources: int, repeat: int) -> float:
    work = Path(tempfile.mkdtemp(prefix="memtui-bench-"))
    home = make_home(work / "home")
    with home.open_db() as db:
        for i in range(n_sources):
            folder = work / f"src{i:03d}"
            folder.mkdir()
            copy_with_new_ids(SAMPLES[i % len(SAMPLES)], folder / "session.jsonl", f"s{i}")
            sources.add(db, str(folder / "*.jsonl"), agent="main", actor="test")
        steno.run(home, db)
    times = []
    for _ in range(repeat):
        fresh = Home(home.root)  # settings and policy are read again, as in a new process
        with fresh.open_db() as db:
            start = time.perf_counter()
            report = steno.run(fresh, db)
            times.append(time.perf_counter() - start)
            assert report.turns_read == 0
    shutil.rmtree(work, ignore_errors=True)
    return statistics.median(times)


STAGES = (
    ("reading the transcripts", "memtui/transcripts/reader.py", "read_transcript"),
    ("redaction and the capture policy", "memtui/extract/prepare.py", "prepare"),
    ("the phrase rules", "memtui/extract/local.py", "extract_turn"),
    ("the classifier (embedding, head, reader)", "memtui/extract/classify/apply.py", "read"),
    ("consolidating and writing", "memtui/extract/stenographer.py", "_write_batch"),
    ("the daily log", "memtui/extract/stenographer.py", "_flush_daily_log"),
)


def stages(copies: int) -> list[str]:
    """Where a classifier-on pipeline run spends its time, by stage (cumulative seconds
    under cProfile, which slows everything; the shares are what to read)."""
    import cProfile
    import pstats

    profile = cProfile.Profile()
    profile.runcall(bench_pipeline, copies)
    table = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    seconds: dict[tuple[str, str], float] = {}
    total = 0.0
    for (filename, _, name), (_, _, _, cumulative, _) in table.items():
        path = filename.replace("\\", "/")
        if path.endswith("memtui/extract/stenographer.py") and name == "run":
            total = max(total, cumulative)
        for _, suffix, func in STAGES:
            if path.endswith(suffix) and name == func:
                seconds[(suffix, func)] = seconds.get((suffix, func), 0.0) + cumulative
    lines = []
    for label, suffix, func in STAGES:
        spent = seconds.get((suffix, func), 0.0)
        lines.append(f"  {label:<42} {spent:6.2f} s  {spent / total:4.0%}" if total else label)
    return [f"a classifier-on run of {copies} copies, profiled ({total:.2f} s in all):", *lines]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--stages", action="store_true",
                        help="only print where a classifier-on pipeline run spends its time")
    args = parser.parse_args()
    if args.stages:
        print("\n".join(stages(args.copies)))
        return 0
    ok = True
    alone, whole, n = bench_extractor(args.repeat)
    ok &= alone >= 5000
    print(f"local extractor:                             {alone:,.0f} turns/s over {n} turns "
          f"(median of {args.repeat}; target 5,000: {alone / 5000:.1f}x)")
    print(f"redact + policy + local extractor:           {whole:,.0f} turns/s "
          f"({whole / 5000:.1f}x the target)")
    for label, kwargs in (("rules only", {"classifier": False}),
                          ("rules + classifier", {}),
                          ("conversations, rules + classifier", {"conversations": True})):
        rate, n = bench_pipeline(args.copies, **kwargs)
        if "conversations" not in kwargs:
            ok &= rate >= 1000
        against = ("worst case for the classifier, no target" if "conversations" in kwargs
                   else f"target 1,000: {rate / 1000:.1f}x")
        print(f"full pipeline into a new home, {label + ':':<35} {rate:,.0f} turns/s over "
              f"{n} turns ({against})")
    idle = bench_idle(100, args.repeat)
    ok &= idle <= 0.100
    print(f"idle run over 100 sources:                   {idle * 1000:.1f} ms "
          f"(median of {args.repeat}; target 100 ms: {0.100 / idle:.1f}x headroom)")
    print(json.dumps({"ok": ok}))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
