"""Live: another process writes memory.db, the visible panes follow within the refresh and the
cursor stays on its row. The tmux test reads the screen as a person over SSH would."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memtui.home import Home
from memtui.stores import pages
from memtui.tui.app import MemtuiApp
from memtui.tui.rowlist import RowList
from tests.conftest import run_cli
from tests.tui.conftest import fixed_clock, wait_for

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.anyio
async def test_another_process_writes_and_the_overview_follows(demo_home: Home) -> None:
    app = MemtuiApp(demo_home, clock=fixed_clock, refresh_seconds=0.2)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.last_snapshot is not None)
        rejections = app.screen.query_one("#rejections RowList", RowList)
        await wait_for(pilot, lambda: len(rejections.rows) > 3)
        rejections.focus()
        rejections.move_to(2)
        held = rejections.key
        done = run_cli("state", "add", "rejected", "Rejected: a cron job that emails Dana at 3am",
                       "--agent", "ops", home=demo_home)
        assert done.returncode == 0, done.stderr
        await wait_for(pilot, lambda: any("emails Dana at 3am" in c[2].plain
                                          for _k, c in rejections.rows), "the new rejection")
        assert rejections.key == held  # the cursor stayed on its row, not on its position
        db = demo_home.open_db()
        total = pages.state_count(db, categories=("rejected",), statuses=("active", "completed"))
        db.close()
        await wait_for(pilot, lambda: str(app.screen.query_one("#rejections").border_subtitle)
                       == f"{total:,}", "the count")


@pytest.mark.anyio
async def test_a_full_screen_keeps_its_row_when_rules_are_added(demo_home: Home) -> None:
    app = MemtuiApp(demo_home, clock=fixed_clock, refresh_seconds=0.2)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.last_snapshot is not None)
        await pilot.press("3", "enter")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "RulesScreen")
        table = app.screen.query_one("#table", RowList)
        await wait_for(pilot, lambda: len(table.rows) > 10)
        await pilot.press("down", "down", "down", "down", "down")
        held = table.key
        done = run_cli("rules", "add", "Never run migrations at lunch", "--score", "9.95",
                       home=demo_home)
        assert done.returncode == 0, done.stderr
        await wait_for(pilot, lambda: "Never run migrations at lunch" in table.rows[0][1][6].plain,
                       "the new top rule")
        assert table.key == held


def _screen(session: str, history: bool = False) -> str:
    """What the pane shows; with ``history``, also what scrolled off it, wrapped lines
    joined (the shell's own screen after the console exits: a line that exactly fills the
    width can scroll away as the next one starts)."""
    more = ["-J", "-S", "-"] if history else []
    return subprocess.run(["tmux", "capture-pane", "-p", *more, "-t", session],
                          capture_output=True, text=True, check=True).stdout


def _keys(session: str, *keys: str) -> None:
    """Keys one at a time, as a person types them (not one burst)."""
    for key in keys:
        subprocess.run(["tmux", "send-keys", "-t", session, key], check=True)
        time.sleep(0.3)


def _until(session: str, wanted: str, seconds: float = 30, history: bool = False) -> str:
    deadline = time.monotonic() + seconds
    text = ""
    while time.monotonic() < deadline:
        text = _screen(session, history)
        if wanted in text:
            return text
        time.sleep(0.2)
    raise AssertionError(f"{wanted!r} never showed; the screen was:\n{text}")


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
def test_over_ssh_in_tmux_at_80x24(tmp_path: Path) -> None:
    home = tmp_path / "demo"
    session = f"memtui-test-{os.getpid()}"
    command = shlex.join([sys.executable, "-m", "memtui.cli.main", "demo", "--keep", str(home)])
    env = f"PYTHONPATH={shlex.quote(str(REPO))} TERM=xterm-256color"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24",
                    f"env {env} {command}"], check=True)
    # Keep the pane once memtui exits, so its last words can still be read (without it
    # the session closes as it prints, and reading the screen races the exit).
    subprocess.run(["tmux", "set-window-option", "-t", session, "remain-on-exit", "on"],
                   check=True)
    try:
        first = _until(session, "CRIT")
        for title in ("1 Active state", "2 Rejections", "3 Rules", "4 Flows", "5 Context"):
            assert title in first, first
        assert "CRIT" in first and "deploy" in first
        assert all(len(line) <= 80 for line in first.splitlines())
        _keys(session, "3", "Enter")
        rules = _until(session, "row 1 of")
        assert "sort score" in rules
        _keys(session, "Escape")
        _until(session, "2 Rejections")
        done = run_cli("state", "add", "rejected", "Rejected: paging Dana for a 5xx blip",
                       "--agent", "ops", home=home)
        assert done.returncode == 0, done.stderr
        _until(session, "Rejected: paging Dana", seconds=5)
        _keys(session, "q")
        kept = _until(session, "demo home kept at", history=True)
        assert f"demo home kept at {home} " in kept, kept
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)


def _consoles(marker: str) -> list[int]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    return [int(pid) for pid in found.split()]


@pytest.mark.skipif(shutil.which("tmux") is None or shutil.which("pgrep") is None,
                    reason="needs tmux and pgrep")
def test_console_leaves_when_its_terminal_hangs_up_under_a_parent(tmp_path: Path) -> None:
    """As under `make demo` over SSH: the parent is the session leader, takes the hang-up
    and waits; the console never gets a SIGHUP. It used to spin on the dead terminal at
    full CPU for good; it must notice and exit."""
    home = tmp_path / "hangup-demo"
    session = f"memtui-hup-{os.getpid()}"
    console = shlex.join([sys.executable, "-m", "memtui.cli.main", "demo", "--keep", str(home)])
    env = f"PYTHONPATH={shlex.quote(str(REPO))} TERM=xterm-256color"
    # The shell keeps a handler for SIGHUP (so it survives it, as make does) and has more
    # to do after the console (so it cannot exec into it and stays the session leader).
    parent = f"trap : HUP; env {env} {console}; echo parent-done"
    subprocess.run(["tmux", "new-session", "-d", "-s", session, "-x", "80", "-y", "24",
                    shlex.join(["sh", "-c", parent])], check=True)
    try:
        _until(session, "CRIT")
        assert _consoles(str(home)), "the console is not running"
        subprocess.run(["tmux", "kill-session", "-t", session], check=True)
        deadline = time.monotonic() + 10
        while _consoles(str(home)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _consoles(str(home)), "the console outlived its terminal"
    finally:
        subprocess.run(["tmux", "kill-session", "-t", session], capture_output=True)
        for pid in _consoles(str(home)):
            os.kill(pid, 9)
