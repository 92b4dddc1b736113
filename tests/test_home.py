"""The memory home: paths, agents, atomic writes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memtui.errors import MemtuiError, NotFound
from memtui.home import Home, atomic_write


def test_atomic_write_keeps_modes_and_leaves_no_temp_files(tmp_path: Path) -> None:
    target = tmp_path / "MEMORY.md"
    old = os.umask(0o022)
    try:
        atomic_write(target, "one\n")
    finally:
        os.umask(old)
    assert target.read_text() == "one\n" and target.stat().st_mode & 0o777 == 0o644
    target.chmod(0o640)
    atomic_write(target, "two\n")
    assert target.read_text() == "two\n" and target.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["MEMORY.md"]


def test_home_resolution_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMTUI_HOME", str(tmp_path / "env"))
    assert Home.resolve().root == tmp_path / "env"
    assert Home.resolve(tmp_path / "flag").root == tmp_path / "flag"
    monkeypatch.delenv("MEMTUI_HOME")
    assert "memtui" in str(Home.resolve().root)


def test_agent_ids_are_validated(home: Home) -> None:
    for bad in ["../etc", "a/b", "", ".hidden", "x" * 65]:
        with pytest.raises(MemtuiError):
            home.workspace(bad)
    assert home.agent(None) == "main"
    assert home.index_path("ops") == home.root / "index" / "ops.sqlite"


def test_uninitialised_home_says_how_to_fix(tmp_path: Path) -> None:
    with pytest.raises(NotFound, match="memtui init"):
        Home(tmp_path / "nope").require()
