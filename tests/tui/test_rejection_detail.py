"""Where a person reads a rejection in the console, it names both messages: the refusal and
the proposal it answers, each found in its transcript."""

from __future__ import annotations

import pytest
from textual.widgets import Static

from memtui.home import Home
from memtui.stores import review, state
from memtui.stores.state import StateEntry
from memtui.tui.app import MemtuiApp
from memtui.tui.screens.dialogs import TextScreen
from tests.tui.conftest import fixed_clock, wait_for
from tests.tui.test_actions import _on_row, _read, _started

pytestmark = pytest.mark.anyio


def _answering(home: Home, status: str) -> StateEntry:
    """A rejection of ``status`` that cites the proposal it answers; for ``proposed``, the
    demo's own if extraction left one in review, else an active one sent there (which
    ones the extractor is unsure of moves with its classifier)."""
    def find(wanted: str) -> StateEntry | None:
        entries = _read(home, lambda db: state.list_entries(db, state.StateFilter(
            category="rejected", status=wanted, limit=500)))
        return next((e for e in entries if e.answers_entry), None)

    entry = find(status)
    if entry is None and status == "proposed":
        active = find("active")
        assert active is not None
        entry = _read(home, lambda db: review.propose(db, active.id, actor="tui"))
    assert entry is not None
    return entry


async def _detail(home: Home, entry: StateEntry, keys: tuple[str, ...], rows: str) -> str:
    """The text the console shows for the entry: open a screen, find its row, press enter."""
    app = MemtuiApp(home, clock=fixed_clock, refresh_seconds=0)
    app.agent = entry.agent
    async with app.run_test(size=(120, 40)) as pilot:
        await _started(pilot, app)
        await pilot.press(*keys)
        await _on_row(pilot, app, rows, str(entry.id))
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TextScreen), "the entry opened")
        return str(app.screen.query_one(".dialog-scroll Static", Static).render())


async def test_the_rejections_screen_shows_where_the_refused_proposal_is(
        demo_home: Home) -> None:
    entry = _answering(demo_home, "active")
    text = await _detail(demo_home, entry, ("2", "enter"), "#table")
    assert f"(message {entry.source_entry})" in text
    [answers] = [line for line in text.splitlines() if line.strip().startswith("answers ")]
    assert ".jsonl:" in answers and f"(message {entry.answers_entry})" in answers


async def test_the_review_detail_of_an_unsure_rejection_cites_both_messages(
        demo_home: Home) -> None:
    entry = _answering(demo_home, "proposed")
    text = await _detail(demo_home, entry, ("r",), "#queue")
    assert f"#{entry.source_entry} (answers #{entry.answers_entry})" in text
