"""Console fixtures: the demo home at a fixed day and clock, and helpers to drive the app."""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime
from pathlib import Path
from unittest import mock

import pytest

from memtui.home import Home

FIXED_NOW = datetime(2026, 11, 25, 9, 30, tzinfo=UTC)
FIXED_DAY = date(2026, 11, 25)


def fixed_clock() -> datetime:
    return FIXED_NOW


@pytest.fixture(scope="session")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo home built once, on a fixed day with a fixed clock, extraction done."""
    from memtui.demo import build_demo_home
    from memtui.extract.stenographer import run as extract

    root = tmp_path_factory.mktemp("console-demo") / "home"
    with mock.patch("memtui.timeutil.now", fixed_clock):
        home, _ = build_demo_home(root, today=FIXED_DAY)
        db = home.open_db()
        try:
            extract(home, db)
        finally:
            db.close()
    return root


@pytest.fixture
def demo_home(demo_template: Path, tmp_path: Path) -> Iterator[Home]:
    """A private copy of the demo home for one test (the console writes to it)."""
    root = tmp_path / "home"
    shutil.copytree(demo_template, root)
    with mock.patch.dict("os.environ", {"MEMTUI_ASCII": ""}):
        yield Home(root)


async def wait_for(pilot: object, condition: Callable[[], bool], what: str = "") -> None:
    """Let the app run until ``condition`` holds (workers finish, messages land)."""
    deadline = time.monotonic() + 30  # a loaded CI box, not a speed target
    while time.monotonic() < deadline:
        if condition():
            return
        await pilot.pause(0.025)  # type: ignore[attr-defined]
    await asyncio.sleep(0)
    assert condition(), f"never happened: {what}"


def row_texts(rowlist: object) -> list[str]:
    """The lines a RowList draws, as plain text (what a person reads)."""
    rows = rowlist.rows  # type: ignore[attr-defined]
    return [" ".join(cell.plain for cell in cells) for _key, cells in rows]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
