"""Backtest: seeds a home from old sessions, proposes flows and lessons; twice changes nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from memtui.db import Database
from memtui.extract.backtest import backtest, step_key
from memtui.home import Home
from memtui.stores import flows


def session(path: Path, sid: str, day: int, request: str,
            steps: list[tuple[str, bool]]) -> Path:
    rows: list[dict[str, Any]] = [{"type": "message", "id": f"{sid}-u", "session": sid,
                                   "ts": f"2026-05-{day:02d}T09:00:00Z", "role": "user",
                                   "content": request}]
    for i, (command, ok) in enumerate(steps):
        rows.append({"type": "message", "id": f"{sid}-a{i}", "session": sid,
                     "ts": f"2026-05-{day:02d}T09:0{i}:10Z", "role": "assistant", "content": "",
                     "tool_calls": [{"id": f"{sid}-c{i}", "name": "bash",
                                     "input": {"command": command}}]})
        rows.append({"type": "message", "id": f"{sid}-t{i}", "session": sid,
                     "ts": f"2026-05-{day:02d}T09:0{i}:20Z", "role": "tool",
                     "tool_call_id": f"{sid}-c{i}", "name": "bash",
                     "content": "ok" if ok else "error: missing DATABASE_URL", "is_error": not ok})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.utime(path, (1_700_000_000 + day, 1_700_000_000 + day))
    return path


DEPLOY = [("git pull --ff-only", True), ("make test", True), ("make deploy ENV=staging", True)]


def seed(tmp_path: Path) -> Path:
    folder = tmp_path / "history"
    folder.mkdir()
    session(folder / "a.jsonl", "a", 3, "Please deploy the billing service to staging.", DEPLOY)
    session(folder / "b.jsonl", "b", 5, "Deploy the billing service to staging again.", DEPLOY)
    session(folder / "c.jsonl", "c", 7, "Run the migrations for the billing service.",
            [("alembic upgrade head", False), ("export DATABASE_URL=postgres://db", True),
             ("alembic upgrade head", True)])
    return folder


def test_backtest_seeds_state_and_proposes_flows_and_lessons(
    home: Home, db: Database, tmp_path: Path
) -> None:
    folder = seed(tmp_path)
    result = backtest(home, db, [str(folder / "*.jsonl")], agent="main", fmt="generic")
    assert result.report.turns_extracted == 21
    assert db.scalar("SELECT count(*) FROM state WHERE category = 'task'") >= 2
    [flow] = result.flows
    assert flow.support == 2 and flow.sessions == ["a", "b"]
    assert flow.steps == ["bash: git pull --ff-only", "bash: make test",
                          "bash: make deploy ENV=staging"]
    stored = flows.get(db, flow.name)
    assert stored.status == "draft" and stored.agent == "main"
    assert "billing" in flow.name and "deploy" in flow.name
    [lesson] = result.lessons
    assert "alembic upgrade head failed (error: missing DATABASE_URL)" in lesson.summary
    assert "export DATABASE_URL" in lesson.summary
    row = db.one("SELECT * FROM state WHERE category = 'learning' AND summary LIKE 'Lesson:%'")
    assert row is not None and row["confidence"] == 0.5 and row["source_entry"] == "c-a2"
    assert row["status"] == "proposed"  # waits for review; boot and gates never serve it
    assert row["source_file"].endswith("c.jsonl")


def test_backtest_twice_changes_nothing(home: Home, db: Database, tmp_path: Path) -> None:
    folder = seed(tmp_path)
    backtest(home, db, [str(folder / "*.jsonl")], agent="main", fmt="generic")

    def snapshot() -> tuple[Any, ...]:
        return tuple(db.scalar(f"SELECT count(*) FROM {t}") for t in
                     ("state", "episodes", "facts", "flows", "sources", "extracted_turns"))

    before = snapshot()
    again = backtest(home, db, [str(folder / "*.jsonl")], agent="main", fmt="generic")
    assert snapshot() == before
    assert again.report.turns_read == 0 and again.flows == [] and again.lessons == []
    assert again.already_known == 2


def test_backtest_dry_run_writes_nothing(home: Home, db: Database, tmp_path: Path) -> None:
    folder = seed(tmp_path)
    result = backtest(home, db, [str(folder / "*.jsonl")], agent="main", fmt="generic",
                      dry_run=True)
    assert len(result.flows) == 1 and len(result.lessons) == 1
    for table in ("state", "episodes", "flows", "sources", "extracted_turns", "jobs"):
        assert db.scalar(f"SELECT count(*) FROM {table}") == 0, table
    assert not list((home.workspace("main") / "memory").glob("2026-05-*.md"))
    assert not list(home.root.glob(".dry-run-*"))  # the scratch copy is gone


def test_backtest_does_not_hold_the_write_lock_for_the_whole_run(
        home: Home, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """While a batch is extracted, another connection can take the write lock at once."""
    import apsw

    from memtui.extract import stenographer as steno

    folder = seed(tmp_path)
    other = home.open_db()
    other.conn.set_busy_timeout(0)
    got_in: list[bool] = []
    real_prepare = steno.Stenographer._prepare_batch

    def probe_then_prepare(self: steno.Stenographer, *args: Any) -> Any:
        try:
            other.conn.execute("BEGIN IMMEDIATE")
            other.conn.execute("ROLLBACK")
            got_in.append(True)
        except apsw.BusyError:
            got_in.append(False)
        return real_prepare(self, *args)

    monkeypatch.setattr(steno.Stenographer, "_prepare_batch", probe_then_prepare)
    backtest(home, db, [str(folder / "*.jsonl")], agent="main", fmt="generic")
    other.close()
    assert got_in and all(got_in)


def test_step_keys() -> None:
    assert step_key("bash", "bash: sudo -u lumen .venv/bin/alembic upgrade head") == \
        "bash: alembic upgrade"
    assert step_key("exec", "exec: cd /srv/app && make test") == "exec: make test"
    assert step_key("Bash", "Bash: git push origin main") == "Bash: git push"
    assert step_key("exec", "exec: df -h / /var/lib/postgresql") == "exec: df /"
    assert step_key("Read", "Read: /etc/hosts") == "Read"
