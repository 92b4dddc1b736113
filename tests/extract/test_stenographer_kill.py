"""SIGKILL the stenographer many times, at every kind of moment: each turn is extracted once.

The child pauses at a chosen occurrence of a chosen point and is killed there, so the
number of kills and where they land do not depend on the machine's speed: between
batches (after a commit), during extraction (nothing written), inside the write
transaction (rows written, watermark not advanced, nothing committed), and around the
daily-log write (memory committed; the file not yet written, or written with its queue
not yet cleared).
"""

from __future__ import annotations

import json
import os
import random
import re
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from memtui.db import Database
from memtui.extract import stenographer as steno
from memtui.home import Home
from memtui.stores import sources

CHILD = """
import sys
from memtui.home import Home
from memtui.extract import stenographer as steno
from memtui.extract.consolidate import Consolidator
from memtui.extract.local import LocalExtractor
from memtui.workspace import dailylog

home = Home(sys.argv[1])
db = home.open_db()
point, occurrence = sys.argv[3], int(sys.argv[4])
seen = {}

def reached(name):
    seen[name] = seen.get(name, 0) + 1
    if name == point and seen[name] == occurrence:
        print("paused", name, flush=True)
        sys.stdin.readline()  # until the test kills this process

def pausing(fn, before=None, after=None):
    def wrapper(*args, **kw):
        if before:
            reached(before)
        result = fn(*args, **kw)
        if after:
            reached(after)
        return result
    return wrapper

LocalExtractor.extract = pausing(LocalExtractor.extract, before="extracting")
Consolidator.apply = pausing(Consolidator.apply, after="written")
dailylog.append_sections = pausing(dailylog.append_sections, before="daily log",
                                   after="daily log written")

def before_batch():
    reached("batch")
    return False

steno.run(home, db, steno.Options(batch_turns=int(sys.argv[2]), stop=before_batch))
print("done", flush=True)
"""

KILLS = [("batch", 2), ("extracting", 1), ("written", 3), ("batch", 4), ("written", 1),
         ("extracting", 3), ("written", 2), ("batch", 3), ("extracting", 2), ("written", 4),
         ("daily log", 1), ("daily log written", 1)]
"""Where each run is killed: (point, its occurrence in that run). The first call of the
batch callback is before the file, so batch kills start at the second."""

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu "
         "amber basalt cobalt dune ember fjord granite harbor iris jade kelp lagoon marble "
         "nectar onyx pearl quartz reef slate topaz umber velvet willow xenon yarrow zephyr"
         ).split()


def big_transcript(path: Path, exchanges: int, seed: int = 7) -> dict[str, str]:
    """A generic transcript of user / assistant-with-tool-call / tool-result exchanges."""
    rng = random.Random(seed)
    roles: dict[str, str] = {}
    with path.open("w", encoding="utf-8") as fh:
        for i in range(exchanges):
            ts = f"2026-04-{1 + i // 1000:02d}T{i // 60 % 24:02d}:{i % 60:02d}:00Z"
            words = " ".join(rng.choice(WORDS) for _ in range(9))
            text = rng.choice([
                f"Please fix the {words} module",
                f"Don't touch the {words} config",
                f"We decided to use {words} for storage",
                f"Thanks, {words}",
            ])
            rows: list[dict[str, Any]] = [
                {"type": "message", "id": f"u{i}", "session": "big", "ts": ts, "role": "user",
                 "content": text},
                {"type": "message", "id": f"a{i}", "session": "big", "ts": ts,
                 "role": "assistant", "content": f"Working on {words}.",
                 "tool_calls": [{"id": f"c{i}", "name": "bash",
                                 "input": {"command": f"make {words.split()[0]} {i}"}}]},
                {"type": "message", "id": f"t{i}", "session": "big", "ts": ts, "role": "tool",
                 "tool_call_id": f"c{i}", "name": "bash", "content": "ok",
                 "is_error": i % 7 == 0},
            ]
            for row in rows:
                roles[row["id"]] = row["role"]
                fh.write(json.dumps(row) + "\n")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    return roles


def outcome(db: Database) -> dict[str, Any]:
    """What extraction produced, without ids or wall-clock times."""
    return {
        "state": Counter((r["category"], r["summary"], r["source_entry"], r["status"])
                         for r in db.query("SELECT * FROM state")),
        "episodes": Counter((r["kind"], r["summary"], r["source_entry"], r["outcome"])
                            for r in db.query("SELECT * FROM episodes")),
        "facts": Counter((r["key"], r["value"], r["source_entry"], r["superseded_at"] is None)
                         for r in db.query("SELECT * FROM facts")),
        "ledger": Counter(r["entry"] for r in db.query("SELECT entry FROM extracted_turns")),
    }


def daily_lines(home: Home) -> tuple[Counter[str], list[str]]:
    folder = home.workspace("main") / "memory"
    text = "".join(p.read_text() for p in sorted(folder.glob("*.md")))
    lines = Counter(ln for ln in text.splitlines() if ln.startswith("- **"))
    return lines, re.findall(r"<!-- memtui:extract (\d+) -->", text)


def make_home(root: Path, transcript: Path) -> Home:
    home = Home(root)
    home.init(["main"])
    with home.open_db() as db:
        sources.add(db, str(transcript), agent="main", fmt="generic", actor="test")
    return home


@pytest.mark.slow
def test_sigkill_many_times_then_finish_extracts_every_turn_exactly_once(tmp_path: Path) -> None:
    transcript = tmp_path / "big.jsonl"
    roles = big_transcript(transcript, 1500)

    reference = make_home(tmp_path / "reference", transcript)
    with reference.open_db() as db:
        steno.run(reference, db, steno.Options(batch_turns=50))
        expected = outcome(db)
    assert sum(expected["ledger"].values()) == len(roles)

    home = make_home(tmp_path / "killed", transcript)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    kills = 0
    progress: list[int] = []
    for point, occurrence in KILLS:
        proc = subprocess.Popen([sys.executable, "-c", CHILD, str(home.root), "50", point,
                                 str(occurrence)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                env=env)
        assert proc.stdout is not None
        said = proc.stdout.readline().strip()
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        assert said == f"paused {point}", f"the run did not reach {point} #{occurrence}: {said}"
        kills += proc.returncode != 0
        with home.open_db() as db:
            progress.append(int(db.scalar("SELECT count(*) FROM extracted_turns")))
    assert kills >= 5, f"the extractor finished too early to be killed ({progress})"
    assert any(0 < p < len(roles) for p in progress), progress
    print("progress after each kill:", progress)

    with home.open_db() as db:
        report = steno.run(home, db, steno.Options(batch_turns=50))
        assert not report.failed
        got = outcome(db)
        wm = db.one("SELECT offset FROM source_files")
        assert wm is not None and wm["offset"] == transcript.stat().st_size
    assert got["ledger"] == expected["ledger"]
    assert set(got["ledger"]) == set(roles) and max(got["ledger"].values()) == 1
    assert got == expected
    calls = [k for k in got["episodes"] if k[0] == "tool_call"]
    assert len(calls) == sum(1 for r in roles.values() if r == "assistant")

    lines, markers = daily_lines(home)
    ref_lines, _ = daily_lines(reference)
    assert len(markers) == len(set(markers))
    assert lines == ref_lines


KILLED_AT = """
import os, signal, sys
from memtui.home import Home
from memtui.extract import stenographer as steno
home = Home(sys.argv[1])
db = home.open_db()
calls = 0

def before_batch():
    global calls
    calls += 1
    if calls == int(sys.argv[3]):
        os.kill(os.getpid(), signal.SIGKILL)
    return False

steno.run(home, db, steno.Options(batch_turns=int(sys.argv[2]), stop=before_batch))
"""


def test_a_run_killed_in_a_file_written_just_now_resumes_at_once(tmp_path: Path) -> None:
    transcript = tmp_path / "fresh.jsonl"
    roles = big_transcript(transcript, 200)
    os.utime(transcript)  # written just now: far from [extract] final_after_minutes
    home = make_home(tmp_path / "home", transcript)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run([sys.executable, "-c", KILLED_AT, str(home.root), "50", "5"],
                          env=env, timeout=120)
    assert proc.returncode == -signal.SIGKILL
    with home.open_db() as db:
        done = int(db.scalar("SELECT count(*) FROM extracted_turns"))
        assert 0 < done < len(roles)
        report = steno.run(home, db, steno.Options(batch_turns=50))
        assert report.turns_extracted == len(roles) - done
        ledger = Counter(r["entry"] for r in db.query("SELECT entry FROM extracted_turns"))
        wm = db.one("SELECT offset FROM source_files")
    assert set(ledger) == set(roles) and max(ledger.values()) == 1
    assert wm is not None and wm["offset"] == transcript.stat().st_size
