"""Benchmark of redaction on hostile, repetitive input: throughput and how time grows.

Run: .venv/bin/python bench/bench_redact.py [--repeat R]

Each input (the ones tests/extract/test_redact.py guards against hanging) is redacted at
two sizes, n and 4n; the script prints the median time of R runs at each size, the
throughput at 4n, and the growth ratio t(4n) / t(n). Linear behaviour gives ~4; a ratio
near 16 means a pattern went quadratic. Target: every ratio under 8.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memtui.redact import redact  # noqa: E402

# (unit, repeats at size n): n is chosen so each input is roughly 40-150 KB at 4n.
INPUTS = [
    ("eyJ", 12_500), ("-----BEGIN RSA PRIVATE KEY-----\n", 1_250), ("password=", 3_750),
    ("api_key=", 5_000), ("token is ", 5_000), ("://a:", 7_500), ("sk-", 12_500),
    ("Bearer ", 5_000), ("Authorization: ", 2_500),
]


def _median(text: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        redact(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    print(f"{'input':<14} {'t(n) ms':>9} {'t(4n) ms':>9} {'MB/s':>7} {'ratio':>6}")
    worst = 0.0
    for unit, n in INPUTS:
        small = _median(unit * n, args.repeat)
        large_text = unit * 4 * n
        large = _median(large_text, args.repeat)
        ratio = large / small if small else float("inf")
        worst = max(worst, ratio)
        print(f"{unit[:12]!r:<14} {small * 1e3:9.1f} {large * 1e3:9.1f} "
              f"{len(large_text) / large / 1e6:7.2f} {ratio:6.1f}")
    print(f"worst growth ratio for 4x the input: {worst:.1f} (target < 8; linear is ~4)")


if __name__ == "__main__":
    main()
