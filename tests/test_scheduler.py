"""The daemon's scheduler: cron parsing, due jobs one at a time, logging, SIGTERM, crontab lines."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memtui.db import Database
from memtui.errors import ConfigError
from memtui.home import Home
from memtui.stores import jobs, sources
from memtui.upkeep import scheduler


def test_validate_and_next_after() -> None:
    assert scheduler.validate("*/30  8-23 * * *") == "*/30 8-23 * * *"
    for bad in ("", "every hour", "61 * * * *", "* * * *", "0 0 * * * *"):
        with pytest.raises(ConfigError):
            scheduler.validate(bad)
    at = datetime(2026, 3, 1, 7, 59, tzinfo=UTC)
    assert scheduler.next_after("*/30 8-23 * * *", at) == at.replace(hour=8, minute=0)
    assert scheduler.next_after("*/30 8-23 * * *", at.replace(hour=23, minute=30)) == \
        datetime(2026, 3, 2, 8, 0, tzinfo=UTC)


def test_default_schedules_and_crontab_lines(home: Home) -> None:
    kinds = [(s.kind, s.expr) for s in scheduler.schedules(home)]
    assert kinds == [("extraction", "*/30 8-23 * * *"), ("maintenance", "0 3 * * *")]
    lines = scheduler.crontab_lines(home, executable="/usr/bin/memtui")
    assert f"*/30 8-23 * * * /usr/bin/memtui --home {home.root} extract --wait >> " \
           f"{home.root}/logs/extraction.log 2>&1" in lines
    assert any(line.startswith("0 3 * * * /usr/bin/memtui") and " maintain " in line
               for line in lines)


class Clock:
    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now


def test_due_jobs_run_once_each_and_are_logged(home: Home, db: Database, tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps({"type": "message", "id": "m1", "session": "s", "role": "user",
                                "ts": "2026-03-01T10:00:00Z",
                                "content": "Don't deploy on Fridays."}) + "\n")
    os.utime(path, (1_700_000_000, 1_700_000_000))
    sources.add(db, str(path), agent="main", fmt="generic", actor="test")
    clock = Clock(datetime(2026, 3, 1, 2, 59, tzinfo=UTC))
    lines: list[str] = []
    d = scheduler.Daemon(home, db, clock=clock, log=lines.append)
    assert d.tick() == []
    assert d.next_due() == ("maintenance", datetime(2026, 3, 1, 3, 0, tzinfo=UTC))
    clock.now += timedelta(hours=6)  # 08:59: both due; maintenance missed its slot once
    ran = d.tick()
    assert [(r.kind, r.status) for r in ran] == [("extraction", "ok"), ("maintenance", "ok")]
    assert d.tick() == []
    assert d.due["extraction"] == datetime(2026, 3, 1, 9, 0, tzinfo=UTC)
    assert d.due["maintenance"] == datetime(2026, 3, 2, 3, 0, tzinfo=UTC)
    assert [j.kind for j in jobs.recent(db)] == ["maintenance", "extraction"]
    assert db.scalar("SELECT count(*) FROM state WHERE category = 'rejected'") == 1
    assert any("extraction: ok" in line for line in lines)


def test_a_held_lock_skips_the_kind(home: Home, db: Database) -> None:
    with scheduler.kind_lock(home, "maintenance") as got:
        assert got
        result = scheduler.run_job(home, db, "maintenance")
    assert result.status == "skipped"
    last = jobs.last(db, "maintenance")
    assert last is not None and last.status == "skipped"
    assert scheduler.run_job(home, db, "maintenance").status == "ok"


def _heartbeat_home(home: Home, deliver: str, command: str = "") -> None:
    with home.config_path.open("a", encoding="utf-8") as fh:
        fh.write('\n[schedule]\nextraction = ""\nmaintenance = ""\nheartbeat = "0 * * * *"\n'
                 f'\n[heartbeat]\nactive_hours = ""\ndeliver = "{deliver}"\n'
                 f'command = {json.dumps(command)}\n')
    home._settings = None
    (home.workspace("main") / "HEARTBEAT.md").write_text("# Heartbeat\n\n- check the disk\n")


def test_a_scheduled_heartbeat_wakes_every_agent_with_the_configured_delivery(
    home: Home, db: Database, tmp_path: Path
) -> None:
    script = tmp_path / "agent.sh"
    script.write_text("#!/bin/sh\ncat > prompt.txt\necho 'Disk is 97% full on /var'\n")
    script.chmod(0o755)
    _heartbeat_home(home, "command", str(script))
    (home.workspace("ops") / "HEARTBEAT.md").write_text("# Heartbeat\n\n- [ ]\n")
    clock = Clock(datetime(2026, 3, 1, 9, 59, tzinfo=UTC))
    d = scheduler.Daemon(home, db, clock=clock, log=lambda _: None)
    clock.now += timedelta(minutes=2)
    [ran] = d.tick()
    assert (ran.kind, ran.status) == ("heartbeat", "ok")
    assert ran.message == "main: alert; ops: skipped"  # ops's checklist is empty
    runs = {j.name: j for j in jobs.recent(db, "heartbeat")}
    assert sorted(runs) == ["main", "ops"]
    assert runs["main"].counts["outcome"] == "alert" and runs["main"].counts["deliver"] == \
        "command"
    assert runs["ops"].status == "skipped"
    prompt = (home.workspace("main") / "prompt.txt").read_text()
    assert "check the disk" in prompt  # the command got the real heartbeat prompt
    assert f"daemon --once heartbeat >> {home.root}/logs/heartbeat.log" in "\n".join(
        scheduler.crontab_lines(home, executable="memtui"))


def test_a_scheduled_heartbeat_fails_only_when_every_agent_fails(
    home: Home, db: Database
) -> None:
    _heartbeat_home(home, "command", "exit 3")
    (home.workspace("ops") / "HEARTBEAT.md").write_text("- look at the queue\n")
    result = scheduler.run_job(home, db, "heartbeat")
    assert result.status == "failed" and "every heartbeat failed" in result.message
    runs = jobs.recent(db, "heartbeat")
    # One row per agent, written by the heartbeat; the scheduler adds none.
    assert sorted((j.name, j.status) for j in runs) == [("main", "failed"), ("ops", "failed")]


def test_an_extraction_where_every_file_fails_is_a_failed_job(
    home: Home, db: Database, tmp_path: Path
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json at all\n")
    sources.add(db, str(bad), agent="main", actor="test")
    result = scheduler.run_job(home, db, "extraction")
    assert result.status == "failed"
    assert result.message.startswith(f"every file failed: {bad}: not a transcript")
    assert result.message.count(str(bad)) == 1
    runs = [j for j in jobs.recent(db, limit=10) if j.kind == "extraction"]
    assert [j.status for j in runs] == ["failed"]  # logged once, by the stenographer


def test_sigterm_stops_the_daemon_cleanly(home: Home) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "memtui.cli.main", "--home", str(home.root), "daemon"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])})
    assert proc.stdout is not None
    assert "daemon started" in proc.stdout.readline()
    time.sleep(0.2)
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=15)
    assert proc.returncode == 0, err
    assert time.monotonic() - started < 5
    assert "stopped" in out


def test_a_run_that_finds_a_lock_held_is_skipped_not_failed(
    home: Home, db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memtui.locks import LockTimeout

    def held(*_: object) -> str:
        raise LockTimeout(home.root / ".extract.lock", 0)

    monkeypatch.setattr(scheduler, "_run", held)
    result = scheduler.run_job(home, db, "extraction")
    assert result.status == "skipped" and ".extract.lock" in result.message
