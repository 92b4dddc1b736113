"""Foundation benchmarks: concurrent writers, maintenance at scale, hook latency, batch adds.

Run: .venv/bin/python bench/bench_foundation.py [--quick]
Prints medians and the targets from the foundation issue; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from memtui.db import Database  # noqa: E402
from memtui.home import Home  # noqa: E402
from memtui.stores import flows, rules, watermarks  # noqa: E402
from memtui.stores import state as st  # noqa: E402

NOW = datetime(2026, 11, 25, 3, 0, tzinfo=UTC)
AGENTS = ["main", "ops", "content"]
CATEGORIES = ["decision", "task", "rejected", "agent_state", "context", "discovery", "learning"]
WORDS = ("deploy nginx postgres backup restic newsletter blog migration staging production "
         "certificate disk cron monitoring alert release rollback schema cache queue worker "
         "invoice pricing onboarding tutorial changelog webhook index vacuum replica").split()


def fresh_home(root: Path, agents: list[str] | None = None) -> Home:
    home = Home(root)
    home.init(agents or ["main", "ops", "content"])
    return home


def fill(db: Database, n_state: int, n_rules: int, seed: int = 7) -> None:
    """Bulk-load synthetic but plausible rows straight into the tables (set-up only).

    Generated inside SQLite (a recursive CTE) so a million rows take seconds. The
    promotion watermarks are set past the loaded rows, as after earlier nightly runs, and
    one day's worth of new rejections and learnings is added on top.
    """
    words = json.dumps(WORDS)
    cats = json.dumps(CATEGORIES)
    epoch = int(NOW.timestamp())

    def pick(array: str, n: int) -> str:
        return f"json_extract('{array}', '$[' || (abs(random()) % {n}) || ']')"

    phrase = " || ' ' || ".join([pick(words, len(WORDS))] * 6)
    stamp = "strftime('%Y-%m-%dT%H:%M:%SZ', {} , 'unixepoch')"
    with db.write():
        db.execute(f"""
            WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?),
            raw AS MATERIALIZED (SELECT i, {epoch} - abs(random()) % (120 * 86400) AS t,
                           abs(random()) % 100 AS r FROM seq)
            INSERT INTO state(created_at, updated_at, agent, category, domain, summary, detail,
                              status, session_date, completed_at)
            SELECT {stamp.format('t')}, {stamp.format('t')},
                   {pick(json.dumps(AGENTS), 3)}, {pick(cats, 7)}, {pick(words, len(WORDS))},
                   {phrase} || ' #' || i, {phrase} || ' ' || {phrase},
                   CASE WHEN r < 70 THEN 'archived' WHEN r < 95 THEN 'active'
                        ELSE 'completed' END,
                   substr({stamp.format('t')}, 1, 10),
                   CASE WHEN r >= 95 THEN
                        {stamp.format(f"{epoch} - abs(random()) % (30 * 86400)")} END
            FROM raw""", (n_state,))
        db.execute(f"""
            WITH RECURSIVE seq(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM seq WHERE i < ?),
            raw AS MATERIALIZED (SELECT i, round(1 + (abs(random()) % 900) / 100.0, 1) AS score,
                           {epoch} - abs(random()) % (30 * 86400) AS t,
                           abs(random()) % 100 AS dup, {phrase} AS words FROM seq)
            INSERT INTO rules(rule, norm_key, domain, agent, source, provenance, score,
                              violations, last_reinforced, created_at, updated_at, status)
            SELECT CASE WHEN dup < 2 THEN 'always check disk space before deploying ' || i
                        ELSE words || ' rule ' || i END,
                   CASE WHEN dup < 2 THEN 'always check disk space before deploying'
                        ELSE substr(words || ' rule ' || i, 1, 40) END,
                   {pick(words, len(WORDS))}, {pick(json.dumps([None, *AGENTS]), 4)},
                   'extractor', '[]', score, 0, {stamp.format('t')}, {stamp.format('t')},
                   {stamp.format('t')},
                   CASE WHEN score >= 9 THEN 'critical' WHEN score >= 5 THEN 'active'
                        WHEN score >= 3 THEN 'dormant' ELSE 'retired' END
            FROM raw""", (n_rules,))
        top = str(db.scalar("SELECT max(id) FROM state"))
        for category in ("rejected", "learning"):
            watermarks.put(db, f"maintenance:promoted_upto:{category}", top)
    random.seed(seed)
    st.add_many(db, [st.NewState(agent=random.choice(AGENTS), category=random.choice(
        ["rejected", "learning"]), summary=f"new finding {i} about {random.choice(WORDS)}")
        for i in range(50)], actor="test")
    db.execute("ANALYZE")


def bench_concurrency(tmp: Path, n: int) -> None:
    home = fresh_home(tmp / "conc")
    db = home.open_db()
    for i in range(10):
        rules.add(db, f"rule {i}", actor="test", score=6)
    flows.add(db, "deploy", actor="test", steps=["go"])
    worker = REPO / "tests" / "concurrent_writer.py"
    started = time.perf_counter()
    procs = [subprocess.Popen([sys.executable, str(worker), role, str(home.root), str(n), role],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for role in ("state", "rules", "flows")]
    failures = 0
    for p in procs:
        _out, err = p.communicate()
        failures += p.returncode != 0
        if p.returncode:
            print(err)
    elapsed = time.perf_counter() - started
    state_rows = db.scalar("SELECT count(*) FROM state")
    distinct = db.scalar("SELECT count(DISTINCT summary) FROM state")
    runs = db.scalar("SELECT count(*) FROM flow_runs")
    violations = db.scalar("SELECT sum(violations) FROM rules")
    ok = (failures == 0 and state_rows == distinct == n and runs == n
          and violations == n // 2)
    print(f"concurrency: 3 processes x {n} transactions in {elapsed:.2f}s "
          f"({3 * n / elapsed:.0f} tx/s); failed processes {failures}; "
          f"state {state_rows}/{n}, flow runs {runs}/{n}, violations {violations}/{n // 2}: "
          f"{'no loss, no duplicates' if ok else 'MISMATCH'}")


def bench_maintenance(tmp: Path, n_state: int, n_rules: int, repeats: int) -> None:
    from memtui.upkeep.maintenance import run_maintenance

    home = fresh_home(tmp / "maint")
    db = home.open_db()
    t0 = time.perf_counter()
    fill(db, n_state, n_rules)
    print(f"maintenance: loaded {n_state:,} state rows and {n_rules:,} rules "
          f"in {time.perf_counter() - t0:.1f}s")
    times = []
    for day in range(repeats):
        started = time.perf_counter()
        report = run_maintenance(home, db, now=NOW + timedelta(days=day))
        times.append(time.perf_counter() - started)
        print(f"  day {day}: {times[-1]:.3f}s  {report.counts()}")
    db.close()
    med = statistics.median(times)
    print(f"maintenance over {n_rules:,} rules and {n_state:,} state rows: median {med:.3f}s "
          f"(target <= 2 s: {'met' if med <= 2 else 'MISSED'}, ratio {med / 2:.2f})")


def bench_hooks(tmp: Path, n_state: int, n_rules: int, repeats: int) -> None:
    home = fresh_home(tmp / "hooks")
    db = home.open_db()
    fill(db, n_state, n_rules, seed=11)
    for name in ["deploy-production", "renew-tls-certificate", "send-newsletter"]:
        flows.add(db, name, actor="test", steps=["one", "two", "three"],
                  trigger_phrases=[name.replace("-", " ")])
    db.close()
    memtui = [sys.executable, "-m", "memtui.cli.main", "--home", str(home.root)]
    commands = {
        "gate pre": [*memtui, "gate", "pre", "ops", "deploy to production"],
        "boot": [*memtui, "boot", "ops"],
        "python -c pass (floor)": [sys.executable, "-c", "pass"],
    }
    for label, cmd in commands.items():
        subprocess.run(cmd, capture_output=True, check=True)  # warm the page cache
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            subprocess.run(cmd, capture_output=True, check=True)
            times.append(time.perf_counter() - started)
        med = statistics.median(times) * 1000
        target = "" if "floor" in label else (
            f" (target <= 300 ms: {'met' if med <= 300 else 'MISSED'}, ratio {med / 300:.2f})")
        print(f"{label} as a process on {n_state:,} state rows / {n_rules:,} rules: "
              f"median {med:.0f} ms{target}")


def bench_batch_add(tmp: Path, n: int, batch: int) -> None:
    home = fresh_home(tmp / "batch")
    db = home.open_db()
    entries = [st.NewState(agent="main", category=CATEGORIES[i % 7],
                           summary=f"entry {i} about {WORDS[i % len(WORDS)]}",
                           detail="details " * 5, domain=WORDS[i % len(WORDS)])
               for i in range(n)]
    started = time.perf_counter()
    for i in range(0, n, batch):
        st.add_many(db, entries[i:i + batch], actor="test")
    elapsed = time.perf_counter() - started
    rate = n / elapsed
    print(f"state add in batches of {batch}: {rate:,.0f} rows/s with audit rows "
          f"(target >= 5,000: {'met' if rate >= 5000 else 'MISSED'}, ratio {rate / 5000:.1f}x)")
    db.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="Smaller sizes (a smoke run).")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    with tempfile.TemporaryDirectory(prefix="memtui-bench-") as tmp_name:
        tmp = Path(tmp_name)
        bench_batch_add(tmp, 20_000 // scale, 500)
        bench_concurrency(tmp, 2_000 // scale)
        bench_hooks(tmp, 100_000 // scale, 10_000 // scale, 15)
        bench_maintenance(tmp, 1_000_000 // scale, 100_000 // scale, 5)
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
