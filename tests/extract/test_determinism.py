"""The same transcript gives the same memory in every process, whatever the hash seed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CHILD = """
import json, random, sys
from pathlib import Path
from memtui.home import Home
from memtui.extract import stenographer as steno
from memtui.stores import sources

root, turns = Path(sys.argv[1]), int(sys.argv[2])
# Many similar decisions over a small vocabulary: the similarity index sees many ties.
rng = random.Random(5)
words = "alpha bravo charlie delta echo foxtrot golf hotel india juliet".split()
path = root / "t.jsonl"
with path.open("w") as fh:
    for i in range(turns):
        text = (f"We decided to keep the {' '.join(rng.sample(words, 5))} store on "
                f"version {rng.randint(1, 3)}.")
        fh.write(json.dumps({"type": "message", "id": f"m{i}", "session": "s", "role": "user",
                             "ts": f"2026-03-01T{i // 3600 % 24:02d}:{i // 60 % 60:02d}:"
                                   f"{i % 60:02d}Z", "content": text}) + "\\n")
home = Home(root / "home")
home.init(["main"])
with home.open_db() as db:
    sources.add(db, str(path), agent="main", fmt="generic", actor="test")
    steno.run(home, db, steno.Options(batch_turns=100))
    memory = {
        "state": db.query("SELECT id, category, summary, status, superseded_by, source_entry "
                          "FROM state ORDER BY id"),
        "episodes": db.query("SELECT kind, summary, source_entry FROM episodes ORDER BY id"),
        "facts": db.query("SELECT key, value, source_entry, superseded_at IS NULL AS current "
                          "FROM facts ORDER BY id"),
    }
print(json.dumps(memory))
"""


def extract_under_seed(root: Path, seed: str, turns: int) -> str:
    root.mkdir()
    env = {**os.environ, "PYTHONHASHSEED": seed,
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-c", CHILD, str(root), str(turns)], env=env,
                          capture_output=True, text=True, timeout=600, check=True)
    return done.stdout


def test_two_hash_seeds_extract_the_same_memory(tmp_path: Path) -> None:
    first = extract_under_seed(tmp_path / "one", "1", 2000)
    second = extract_under_seed(tmp_path / "two", "2", 2000)
    assert '"superseded"' in first  # the input exercises supersession, not just adds
    assert first == second
