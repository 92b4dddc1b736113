"""The one writer: what it refuses, and that a refused daily log loses no section."""

from __future__ import annotations

from pathlib import Path

import pytest

from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.workspace import dailylog, writer

DAY = "2026-03-01"


def test_a_symlinked_daily_log_is_refused_and_its_sections_stay_queued(
        home: Home, db: Database, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.md"
    outside.write_text("not memory\n")
    path = dailylog.path_for(home, "main", DAY)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to(outside)
    with db.write():
        dailylog.queue(db, "main", DAY, ["- kept"], "run 1")
    assert dailylog.flush(home, db) == []
    assert outside.read_text() == "not memory\n" and path.is_symlink()
    assert int(db.scalar("SELECT count(*) FROM daily_log_pending")) == 1
    path.unlink()
    assert dailylog.flush(home, db) == [path]
    assert "- kept" in path.read_text()
    assert int(db.scalar("SELECT count(*) FROM daily_log_pending")) == 0


def test_a_symlinked_memory_folder_is_refused(home: Home, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    folder = home.workspace("main") / "memory"
    if folder.exists():
        folder.rmdir()
    folder.symlink_to(elsewhere)
    with pytest.raises(MemtuiError, match="symbolic link"):
        writer.append(folder / f"{DAY}.md", f"# {DAY}\n\n", lambda text: text + "- x\n")
    assert list(elsewhere.iterdir()) == []


def test_merge_sees_the_header_of_a_new_file_and_an_unchanged_text_writes_nothing(
        tmp_path: Path) -> None:
    path = tmp_path / "memory" / f"{DAY}.md"
    assert writer.append(path, f"# {DAY}\n\n", lambda text: text + "- one\n")
    assert path.read_text() == f"# {DAY}\n\n- one\n"
    before = path.stat()
    assert not writer.append(path, "ignored", lambda text: text)
    assert path.stat().st_ino == before.st_ino and path.read_text() == f"# {DAY}\n\n- one\n"
