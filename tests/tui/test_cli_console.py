"""Opening the console from the command line: never hangs a script, never serves the world
by accident."""

from __future__ import annotations

from pathlib import Path

from memtui.home import Home
from tests.conftest import run_cli


def test_demo_without_a_terminal_prints_today_and_how_to_open_the_console(
        tmp_path: Path) -> None:
    done = run_cli("demo", "--keep", str(tmp_path / "d"))
    assert done.returncode == 0, done.stderr
    assert "Today: " in done.stdout and "waiting for review" in done.stdout
    assert f"memtui --home {tmp_path / 'd'} console" in done.stdout


def test_console_without_a_terminal_says_why(demo_home: Home) -> None:
    done = run_cli("console", home=demo_home)
    assert done.returncode == 1 and "needs a terminal" in done.stderr


def test_no_arguments_without_a_terminal_prints_the_usage() -> None:
    done = run_cli()
    assert done.returncode == 0 and "Usage: memtui" in done.stdout


def test_serve_refuses_a_public_address_unless_asked(demo_home: Home) -> None:
    done = run_cli("serve", "--host", "0.0.0.0", home=demo_home)
    assert done.returncode == 1 and "--public" in done.stderr
