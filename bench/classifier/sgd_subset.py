"""Copy a stratified subset of the SGD user-act pairs into the repo (run once, by hand).

    python bench/classifier/sgd_subset.py /path/to/sgd-user-acts

Nothing reads the shared copy at run or test time; the subset lands in
``bench/data/extract-corpus/sgd/`` next to its licence (CC BY-SA 4.0).
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

PER = {"train": 700, "dev": 200, "test": 200}
"""Rows kept per (split, label)."""


def main(src: str) -> None:
    rng = random.Random(0)
    pools: dict[tuple[str, str], list[str]] = {}
    for line in (Path(src) / "pairs.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        pools.setdefault((row["split"], row["label"]), []).append(line)
    keep: list[str] = []
    for (split, _label), rows in sorted(pools.items()):
        keep += rng.sample(rows, min(PER[split], len(rows)))
    out = Path(__file__).resolve().parents[2] / "bench/data/extract-corpus/sgd"
    out.mkdir(parents=True, exist_ok=True)
    (out / "pairs-subset.jsonl").write_text("\n".join(keep) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(sys.argv[1])
