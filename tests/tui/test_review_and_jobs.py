"""The daily review and the jobs, driven by keys: decisions reach the stores and the audit
log; jobs run in a worker, show their preview first and end in a notification."""

from __future__ import annotations

from typing import Any

import pytest

from memtui.home import Home
from memtui.stores import flows, jobs, review, state, tombstones
from memtui.tui.app import MemtuiApp
from memtui.tui.rowlist import RowList
from tests.tui.conftest import fixed_clock, wait_for
from tests.tui.test_actions import _audited, _on_row, _read, _started

pytestmark = pytest.mark.anyio


def _app(home: Home) -> MemtuiApp:
    return MemtuiApp(home, clock=fixed_clock, refresh_seconds=0)


def _notes(app: MemtuiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def _review(pilot: Any, app: MemtuiApp) -> RowList:
    await pilot.press("r")
    await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ReviewScreen")
    queue = app.screen.query_one("#queue", RowList)
    await wait_for(pilot, lambda: bool(queue.rows), "review queue read")
    return queue


async def test_review_accept_edit_reject_and_mark(demo_home: Home) -> None:
    pending = _read(demo_home, lambda db: review.pending(db, "ops").entries)
    first, second, third = (str(e.id) for e in pending[:3])
    app = _app(demo_home)
    app.agent = "ops"
    async with app.run_test(size=(120, 40)) as pilot:
        await _started(pilot, app)
        await _review(pilot, app)
        await _on_row(pilot, app, "#queue", first)
        await pilot.press("y")
        await wait_for(pilot, lambda: _audited(demo_home, "review.accept", f"state:{first}"))
        await _on_row(pilot, app, "#queue", second)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("Input").value = "Reworded in review"
        await pilot.press("enter")
        await wait_for(pilot, lambda: _audited(demo_home, "review.edit", f"state:{second}"))
        await _on_row(pilot, app, "#queue", third)
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: _audited(demo_home, "review.reject", f"state:{third}"))
        queue = app.screen.query_one("#queue", RowList)
        await wait_for(pilot, lambda: first not in [k for k, _ in queue.rows], "left the queue")
        await pilot.press("R")
        await wait_for(pilot, lambda: _audited(demo_home, "review.mark", "review:ops"))
    assert _read(demo_home, lambda db: state.get(db, int(second))).summary == "Reworded in review"
    rejected = _read(demo_home, lambda db: state.get(db, int(third)))
    assert rejected.status == "archived"
    assert _read(demo_home, lambda db: tombstones.Graveyard.load(db, "ops").buried(
        "state", rejected.category, rejected.summary, None))
    assert _read(demo_home, lambda db: review.pending(db, "ops").total) == 0


async def test_a_proposal_and_a_draft_flow_are_accepted(demo_home: Home) -> None:
    def setup(db: Any) -> int:
        entry = state.add(db, state.NewState(agent="ops", category="learning",
                                             summary="Lesson: restart nginx after a cert "
                                             "renewal", source_entry="msg_x",
                                             status="proposed"), actor="test")
        flows.add(db, "backtest-renew-cert", actor="test", steps=["certbot renew"],
                  agent="ops", status="draft")
        return entry.id

    proposal = _read(demo_home, setup)
    db_mark = _read(demo_home, lambda db: review.mark_reviewed(db, "ops", actor="test",
                                                               upto=proposal - 1))
    assert db_mark
    app = _app(demo_home)
    app.agent = "ops"
    async with app.run_test(size=(120, 40)) as pilot:
        await _started(pilot, app)
        await _review(pilot, app)
        await _on_row(pilot, app, "#queue", str(proposal))
        await pilot.press("y")
        await wait_for(pilot, lambda: _audited(demo_home, "state.accept", f"state:{proposal}"))
        await _on_row(pilot, app, "#queue", "flow:backtest-renew-cert")
        await pilot.press("y")
        await wait_for(pilot, lambda: _audited(demo_home, "flow.status",
                                               "flow:backtest-renew-cert"))
    assert _read(demo_home, lambda db: state.get(db, proposal)).status == "active"
    assert _read(demo_home, lambda db: flows.get(db, "backtest-renew-cert")).status == "active"


async def test_unsure_rejections_come_first_and_say_so(demo_home: Home) -> None:
    def unsure(db: Any) -> list[str]:
        return [str(e.id) for e in state.list_entries(db, state.StateFilter(
            category="rejected", status="proposed", limit=100))]

    doubted = _read(demo_home, unsure)
    assert doubted, "the demo has rejections the extractor was unsure of"
    app = _app(demo_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await _started(pilot, app)
        queue = await _review(pilot, app)
        top = queue.rows[:len(doubted)]
        assert sorted(k for k, _ in top) == sorted(doubted)
        assert {cells[2].plain for _, cells in top} == {"rejected?"}
        assert all(cells[2].plain != "rejected?" for _, cells in queue.rows[len(doubted):])


async def test_a_daily_log_line_is_promoted_into_memory_md(demo_home: Home) -> None:
    app = _app(demo_home)
    app.agent = "coordinator"
    memory = demo_home.workspace("coordinator") / "MEMORY.md"
    before = memory.read_text()
    async with app.run_test(size=(120, 40)) as pilot:
        await _started(pilot, app)
        await _review(pilot, app)
        lines = app.screen.query_one("#lines", RowList)
        await wait_for(pilot, lambda: bool(lines.rows))
        key, cells = lines.rows[0]
        text = cells[2].plain
        lines.focus()
        await pilot.press("p")
        await wait_for(pilot, lambda: _audited(demo_home, "memory.promote",
                                               "memory:coordinator/MEMORY.md"))
    after = memory.read_text()
    assert after.startswith(before) and text.rstrip("…") in after


async def test_extract_runs_in_a_worker_and_notifies(demo_home: Home) -> None:
    count = lambda db: len(jobs.recent(db, "extraction", limit=100))  # noqa: E731
    before = _read(demo_home, count)
    app = _app(demo_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await _started(pilot, app)
        await pilot.press("E")
        await wait_for(pilot, lambda: any("extracted" in n for n in _notes(app)), "done")
    assert _read(demo_home, count) == before + 1


async def test_a_snapshot_for_a_screen_not_composed_or_torn_down_draws_nothing(
        demo_home: Home) -> None:
    """A worker's last refresh can land as the console quits (the overview's children
    already gone) or before a screen is composed: it is dropped, not raised; the screen
    draws the latest snapshot when it mounts."""
    from memtui.tui.screens.overview import OverviewScreen

    app = _app(demo_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await _started(pilot, app)
        assert app.last_snapshot is not None
        OverviewScreen().show(app.last_snapshot)  # no children: nothing to draw, no error


async def test_maintenance_shows_its_dry_run_then_applies(demo_home: Home) -> None:
    app = _app(demo_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await _started(pilot, app)
        await pilot.press("m")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ConfirmScreen",
                       "the dry run's diff")
        runs = _read(demo_home, lambda db: jobs.recent(db, "maintenance"))
        assert [j.dry_run for j in runs] == [True]  # only the dry run so far
        await pilot.press("y")
        await wait_for(pilot, lambda: any("maintenance applied" in n for n in _notes(app)))
    runs = _read(demo_home, lambda db: jobs.recent(db, "maintenance"))
    assert [j.dry_run for j in runs] == [False, True]


async def test_context_jobs_preview_first_and_the_heartbeat_is_a_dry_run(
        demo_home: Home) -> None:
    app = _app(demo_home)
    app.agent = "coordinator"
    async with app.run_test(size=(120, 40)) as pilot:
        await _started(pilot, app)
        await pilot.press("P")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "TextScreen",
                       "the pruning preview")
        await pilot.press("escape")
        await pilot.press("C")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "ConfirmScreen",
                       "the compaction preview")
        await pilot.press("n")  # nothing is compacted
        await pilot.pause()
        await pilot.press("H")
        await wait_for(pilot, lambda: any("heartbeat (dry-run)" in n for n in _notes(app)))
    beats = _read(demo_home, lambda db: jobs.recent(db, "heartbeat"))
    assert beats and beats[0].dry_run
