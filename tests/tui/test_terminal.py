"""The console notices a terminal that hung up without telling it (no SIGHUP) and leaves."""

from __future__ import annotations

import os

import pytest

from memtui.home import Home
from memtui.tui import terminal
from memtui.tui.app import MemtuiApp
from tests.tui.conftest import fixed_clock

pytestmark = pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pty")


def test_a_terminal_is_alive_until_its_other_end_closes() -> None:
    master, slave = os.openpty()
    try:
        assert terminal.alive(slave)
        os.close(master)
        assert not terminal.alive(slave)
    finally:
        os.close(slave)


@pytest.mark.anyio
async def test_the_console_exits_with_the_hangup_status_once_its_terminal_is_gone(
        demo_home: Home) -> None:
    master, slave = os.openpty()
    app = MemtuiApp(demo_home, clock=fixed_clock, refresh_seconds=0)
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            app._check_terminal(slave)
            await pilot.pause()
            assert not app.terminal_lost and app.return_code is None
            os.close(master)
            app._check_terminal(slave)
            await pilot.pause()
            assert app.terminal_lost
        assert app.return_code == terminal.HANGUP_EXIT
    finally:
        os.close(slave)
