"""Benchmark of the context engine on a synthetic 200,000-token OpenClaw transcript.

Run: .venv/bin/python bench/bench_context.py [--tokens N] [--repeat R]

1. The /context report over the whole transcript, cold (read, account, report, as a
   one-shot ``memtui context list`` does): median of R runs. Target: at most 300 ms.
2. A pruning plan over the window as a long-running process has it (the console, a
   follower: the transcript read already, only what was appended is read): median of R
   runs. Target: at most 100 ms. The cold plan (the whole read first) is printed too.
3. ``context status --follow``: a follower that has read the transcript up to its last
   200 entries is polled after each of them is appended; median milliseconds per
   appended message. Target: at most 20 ms.
4. The shared transcript reader on the same file: a whole read, and a resumed read of
   one appended entry with and without the state the previous read carried.

Nothing outside the repository is needed: the transcript is generated here.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memtui.context import live  # noqa: E402
from memtui.context.follow import ContextFollower  # noqa: E402
from memtui.context.pruning import plan_pruning  # noqa: E402
from memtui.context.report import context_report  # noqa: E402
from memtui.home import Home  # noqa: E402
from memtui.transcripts import ReadState, read_transcript  # noqa: E402
from tests.context import synth  # noqa: E402

TAIL = 200


def median_ms(fn: object, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp) / "home")
        home.init(["main"])
        path = synth.write(Path(tmp) / "session.jsonl", args.tokens)
        lines = path.read_bytes().splitlines(keepends=True)
        report = context_report(home, "main", path)
        print(f"transcript: {len(lines):,} lines, {path.stat().st_size / 1e6:.1f} MB, "
              f"{report.status_line()} ({report.messages:,} messages)")

        def cold_report() -> None:
            live.forget()
            context_report(home, "main", path)

        def cold_plan() -> None:
            live.forget()
            plan_pruning(home, "main", path)

        ms = median_ms(cold_report, args.repeat)
        print(f"context report:   {ms:7.1f} ms median, cold   (target <= 300 ms: "
              f"{'ok' if ms <= 300 else 'MISSED'}, ratio {ms / 300:.2f})")
        plan = plan_pruning(home, "main", path)
        ms = median_ms(lambda: plan_pruning(home, "main", path), args.repeat)
        cold = median_ms(cold_plan, args.repeat)
        print(f"pruning plan:     {ms:7.1f} ms median, warm   (target <= 100 ms: "
              f"{'ok' if ms <= 100 else 'MISSED'}, ratio {ms / 100:.2f}; cold {cold:.1f} ms; "
              f"{len(plan.trimmed)} trimmed, {len(plan.cleared)} cleared)")

        growing = Path(tmp) / "live.jsonl"
        growing.write_bytes(b"".join(lines[:-TAIL]))
        follower = ContextFollower(home, "main", growing)
        follower.poll()
        per_message = []
        with growing.open("ab") as fh:
            for line in lines[-TAIL:]:
                fh.write(line)
                fh.flush()
                start = time.perf_counter()
                update = follower.poll()
                per_message.append((time.perf_counter() - start) * 1000)
                assert update is not None
        ms = statistics.median(per_message)
        final = context_report(home, "main", growing)
        assert update.used == final.used, "the follower disagrees with a full report"
        print(f"status --follow:  {ms:7.1f} ms median per appended message over {TAIL} "
              f"(target <= 20 ms: {'ok' if ms <= 20 else 'MISSED'}, ratio {ms / 20:.2f}; "
              f"p90 {sorted(per_message)[int(0.9 * TAIL)]:.1f} ms)")

        ms = median_ms(lambda: read_transcript(path, final=True), args.repeat)
        print(f"transcript read:  {ms:7.1f} ms median, whole file")
        growing.write_bytes(b"".join(lines[:-1]))
        before = read_transcript(growing)
        with growing.open("ab") as fh:
            fh.write(lines[-1])
        for label, state in (("without", None), ("with", before.state)):
            def resumed(carried: ReadState | None = state) -> None:
                read_transcript(growing, start_offset=before.end_offset,
                                start_line=before.end_line, state=carried)

            ms = median_ms(resumed, args.repeat)
            print(f"resumed read:     {ms:7.2f} ms median, one appended entry, {label} the "
                  "carried state")


if __name__ == "__main__":
    main()
