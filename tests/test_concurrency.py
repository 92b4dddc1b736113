"""Three processes writing at once: no SQLITE_BUSY reaches anyone, no row lost or doubled."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memtui.home import Home
from memtui.stores import flows, rules

WORKER = Path(__file__).with_name("concurrent_writer.py")


def test_three_writers_lose_nothing(home: Home) -> None:
    db = home.open_db()
    for n in range(10):
        rules.add(db, f"rule {n}", actor="test", score=6)
    flows.add(db, "deploy", actor="test", steps=["go"])
    audit_before = db.scalar("SELECT count(*) FROM audit")
    n = 600
    procs = [subprocess.Popen([sys.executable, str(WORKER), role, str(home.root), str(n), role],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for role in ("state", "rules", "flows")]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert db.scalar("SELECT count(*) FROM state") == n
    assert db.scalar("SELECT count(DISTINCT summary) FROM state") == n
    assert db.scalar("SELECT sum(violations) FROM rules") == n // 2
    flow = flows.get(db, "deploy")
    assert flow.times_used == n and flow.times_succeeded + flow.times_failed == n
    assert db.scalar("SELECT count(*) FROM flow_runs") == n
    assert db.scalar("SELECT count(*) FROM audit") - audit_before == 3 * n
    assert db.integrity_check() == []
    db.close()


def test_three_processes_editing_the_same_rules_lose_no_update(home: Home) -> None:
    """Read-modify-write of one rule happens inside one IMMEDIATE transaction."""
    db = home.open_db()
    for n in range(10):
        rules.add(db, f"rule {n}", actor="test", score=6)
    n = 300
    procs = [subprocess.Popen([sys.executable, str(WORKER), "rules", str(home.root), str(n),
                               f"w{i}"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for i in range(3)]
    for p in procs:
        _out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    assert db.scalar("SELECT sum(violations) FROM rules") == 3 * (n // 2)
    db.close()
