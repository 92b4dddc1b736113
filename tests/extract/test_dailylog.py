"""The daily log: sections appended atomically without losing what the agent writes."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from memtui.db import Database
from memtui.home import Home
from memtui.workspace import dailylog, writer

DAY = "2026-03-01"


def _queue(db: Database, n: int) -> None:
    with db.write():
        dailylog.queue(db, "main", DAY, [f"- section {n}"], f"run {n}")


def test_sections_are_appended_once_with_a_header(home: Home, db: Database) -> None:
    _queue(db, 1)
    [path] = dailylog.flush(home, db)
    assert path == dailylog.path_for(home, "main", DAY)
    text = path.read_text()
    assert text.startswith(f"# {DAY}\n") and text.count("- section 1") == 1
    assert dailylog.append_sections(path, "", [(1, "again\n")]) is False
    assert path.read_text() == text


SECTIONS = 200
"""Enough flushes that the agent appends hundreds of lines while they run."""


def test_the_agents_concurrent_appends_are_never_lost(home: Home, db: Database) -> None:
    path = dailylog.path_for(home, "main", DAY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {DAY}\n\nthe agent's own notes\n")
    stop = threading.Event()
    written: list[int] = []

    def agent() -> None:
        i = 0
        while not stop.is_set():
            with path.open("a", encoding="utf-8") as fh:
                fh.write(f"agent line {i}\n")
            written.append(i)
            i += 1
            time.sleep(0.0005)

    appender = threading.Thread(target=agent)
    appender.start()
    try:
        for n in range(SECTIONS):
            _queue(db, n)
            dailylog.flush(home, db)
    finally:
        stop.set()
        appender.join()
    dailylog.flush(home, db)  # what contention left queued
    text = path.read_text()
    assert len(written) > 100  # the agent really wrote while memtui did
    missing = [i for i in written if f"agent line {i}\n" not in text]
    assert missing == [], f"{len(missing)} of {len(written)} agent lines lost"
    assert all(text.count(f"- section {n}\n") == 1 for n in range(SECTIONS))
    assert "the agent's own notes" in text
    assert not list(path.parent.glob(".*.tmp"))


def test_a_file_that_keeps_changing_stays_queued(home: Home, db: Database,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = dailylog.path_for(home, "main", DAY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"# {DAY}\n")
    real_append = writer._append_tail

    def agent_appends_first(target: Path, seen: os.stat_result, tail: str) -> bool:
        with target.open("a") as fh:  # the agent writes between memtui's read and append
            fh.write("x\n")
        return real_append(target, seen, tail)

    monkeypatch.setattr(writer, "_append_tail", agent_appends_first)
    _queue(db, 1)
    assert dailylog.flush(home, db) == []
    assert int(db.scalar("SELECT count(*) FROM daily_log_pending")) == 1
    assert "section 1" not in path.read_text()
    monkeypatch.undo()
    assert dailylog.flush(home, db) == [path]
    text = path.read_text()
    assert "section 1" in text and text.count("x\n") == writer.MAX_ATTEMPTS
