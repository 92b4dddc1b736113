"""Shared fixtures: a fresh memory home per test, its open database, a CLI runner."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from memtui.db import Database
from memtui.home import Home

REPO = Path(__file__).resolve().parents[1]

# Hypothesis checks what a parser does, not how fast: its per-example deadline (200 ms)
# failed a property test on a box busy training the reader. Speed lives in bench/.
settings.register_profile("memtui", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("memtui")


@pytest.fixture(scope="session", autouse=True)
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Caches (the built query encoder) go to a folder of this run, not the user's."""
    old = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("xdg-cache"))
    yield
    if old is None:
        os.environ.pop("XDG_CACHE_HOME", None)
    else:
        os.environ["XDG_CACHE_HOME"] = old


@pytest.fixture
def home(tmp_path: Path) -> Home:
    h = Home(tmp_path / "home")
    h.init(["main", "ops"])
    return h


@pytest.fixture
def db(home: Home) -> Iterator[Database]:
    database = home.open_db()
    yield database
    database.close()


def run_cli(*args: str, home: Home | Path | None = None, env: dict[str, str] | None = None,
            input: str | None = None) -> subprocess.CompletedProcess[str]:
    """Run `memtui` as a real process (what users and agent hooks do)."""
    full_env = {**os.environ, **(env or {})}
    full_env.pop("MEMTUI_HOME", None)
    cmd = [sys.executable, "-m", "memtui.cli.main"]
    if home is not None:
        cmd += ["--home", str(home.root if isinstance(home, Home) else home)]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, env=full_env,
                          input=input, timeout=120)
