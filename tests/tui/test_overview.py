"""The overview on the demo home at 80x24: five panes of real data, keys, the agent switcher."""

from __future__ import annotations

import pytest

from memtui.home import Home
from memtui.stores import pages
from memtui.tui.app import MemtuiApp
from memtui.tui.rowlist import RowList
from tests.tui.conftest import fixed_clock, row_texts, wait_for

pytestmark = pytest.mark.anyio


def _app(home: Home, **kw: object) -> MemtuiApp:
    return MemtuiApp(home, clock=fixed_clock, refresh_seconds=0, **kw)  # type: ignore[arg-type]


async def test_overview_shows_the_five_panes_with_real_data_at_80x24(demo_home: Home) -> None:
    app = _app(demo_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.last_snapshot is not None, "first snapshot")
        await pilot.pause()
        screen = app.screen
        db = demo_home.open_db()
        top_rule = pages.rule_page(db, statuses=("critical", "active"), limit=1).rows[0]
        newest_rejection = pages.state_page(db, categories=("rejected",),
                                            statuses=("active", "completed"), limit=1).rows[0]
        db.close()
        rules = screen.query_one("#rules RowList", RowList)
        assert rules.rows[0][0] == str(top_rule.id)
        assert top_rule.rule[:20] in row_texts(rules)[0] and "CRIT" in row_texts(rules)[0]
        rejections = screen.query_one("#rejections RowList", RowList)
        assert rejections.rows[0][0] == str(newest_rejection.id)
        for pane in ("state", "rejections", "rules", "flows", "context"):
            widget = screen.query_one(f"#{pane}")
            assert widget.region.height >= 5, pane  # every pane visible at 80x24
            assert widget.region.right <= 80 and widget.region.bottom <= 24
        db = demo_home.open_db()
        live = pages.rule_count(db, statuses=("critical", "active"))
        db.close()
        assert str(screen.query_one("#rules").border_subtitle).startswith(f"{live:,}")
        # Numbers focus panes; the focused pane's keys are in the footer.
        await pilot.press("3")
        assert app.focused is rules
        await pilot.press("down", "down")
        assert rules.cursor == 2


async def test_agent_switcher_narrows_every_pane(demo_home: Home) -> None:
    app = _app(demo_home)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.last_snapshot is not None)
        await pilot.press("a")
        await pilot.pause()
        await pilot.press("down", "down", "enter")  # all, coordinator, content
        await wait_for(pilot, lambda: app.last_snapshot is not None
                       and app.last_snapshot.agent == "content", "switch to content")
        snap = app.last_snapshot
        assert snap is not None
        assert {e.agent for e in snap.state} == {"content"}
        assert all(r.agent in (None, "content") for r in snap.rules)
        assert "agent content" in str(app.screen.query_one("#header").render())


async def test_stored_text_is_shown_literally(demo_home: Home) -> None:
    from memtui.stores import state

    db = demo_home.open_db()
    state.add(db, state.NewState(agent="ops", category="task",
                                 summary="[bold red]not markup[/] [link=x]y[/link]"),
              actor="test")
    db.close()
    app = _app(demo_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.last_snapshot is not None)
        texts = row_texts(app.screen.query_one("#state RowList", RowList))
        assert any("[bold red]not markup[/] [link=x]y[/link]" in t for t in texts)


def test_escape_codes_from_a_transcript_are_shown_never_obeyed() -> None:
    from memtui.tui.render import block, lit

    assert lit("a\x1b[2Jb\nc").plain == "a␛[2Jb c"
    assert "\x1b" not in block("line one\n\x1b]0;title\x07").plain


def test_a_long_home_path_gives_way_to_the_review_count() -> None:
    """`make demo` builds its home under /tmp with a long name: at 80 columns the header
    shortens the path, never the review queue."""
    from memtui.tui.data import Snapshot
    from memtui.tui.screens.overview import header_text

    snap = Snapshot(read_at="2026-11-25T09:30:00Z", agent=None,
                    agents=("ops", "content", "coordinator"), state=(), state_total=0,
                    rejections=(), rejections_total=0, rules=(), rules_total=0,
                    boot_ids=frozenset(), flows=(), flows_total=0,
                    last_extract="2026-11-25T09:30:00Z", review_pending=199)
    home = "/tmp/memtui-demo-z69s6j7a/a/much/longer/folder/for/the/demo/home"
    wide = header_text(snap, home).plain
    assert home in wide and len(wide) > 80
    narrow = header_text(snap, home, width=80).plain
    assert narrow.endswith("review 199") and len(narrow) <= 80
    assert "…/home" in narrow
    tiny = header_text(snap, home, width=60).plain
    assert "…" in tiny and "review 199" in tiny and "/tmp" not in tiny
    assert header_text(snap, "~/home", width=80).plain.startswith(" memtui · ~/home ·")
