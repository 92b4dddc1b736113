"""Every change the console makes, driven by keys through Pilot: the store changed, and the
audit log names the console ("tui") with the action and the target."""

from __future__ import annotations

from typing import Any

import pytest

from memtui.db import Database
from memtui.home import Home
from memtui.stores import audit, pages, rules, state
from memtui.tui.app import MemtuiApp
from memtui.tui.rowlist import RowList
from tests.tui.conftest import fixed_clock, wait_for

pytestmark = pytest.mark.anyio


def _app(home: Home) -> MemtuiApp:
    return MemtuiApp(home, clock=fixed_clock, refresh_seconds=0)


def _read(home: Home, fn: Any) -> Any:
    db = home.open_db()
    try:
        return fn(db)
    finally:
        db.close()


def _audited(home: Home, action: str, target: str) -> bool:
    rows = _read(home, lambda db: audit.recent(db, target=target, limit=20))
    return any(r.actor == "tui" and r.action == action for r in rows)


async def _on_row(pilot: Any, app: MemtuiApp, selector: str, key: str) -> RowList:
    rows = app.screen.query_one(selector, RowList)
    await wait_for(pilot, lambda: key in [k for k, _ in rows.rows], f"row {key} in {selector}")
    rows.focus()
    rows.move_to([k for k, _ in rows.rows].index(key))
    await pilot.pause()
    return rows


async def _started(pilot: Any, app: MemtuiApp) -> None:
    await wait_for(pilot, lambda: app.last_snapshot is not None, "first snapshot")
    await pilot.pause()


def _rule(home: Home, status: str) -> rules.Rule:
    return _read(home, lambda db: pages.rule_page(db, statuses=(status,), limit=1).rows[0])


@pytest.mark.parametrize(("key", "action", "check"), [
    ("plus", "rule.adjust", lambda before, after: after.score == min(8.9, before.score + 1)),
    ("minus", "rule.adjust", lambda before, after: after.score == before.score - 1),
    ("exclamation_mark", "rule.critical", lambda before, after: after.status == "critical"),
    ("x", "rule.retire", lambda before, after: after.status == "retired"),
])
async def test_rule_keys_on_the_overview(demo_home: Home, key: str, action: str,
                                         check: Any) -> None:
    app = _app(demo_home)
    before = _read(demo_home, lambda db: pages.rule_page(
        db, statuses=("active",), limit=1, anchor=(8.0, 0)).rows[0])  # an active rule below 8
    async with app.run_test(size=(120, 40)) as pilot:
        await _started(pilot, app)
        await _on_row(pilot, app, "#rules RowList", str(before.id))
        await pilot.press(key)
        await wait_for(pilot, lambda: _audited(demo_home, action, f"rule:{before.id}"), action)
    after = _read(demo_home, lambda db: rules.get(db, before.id))
    assert check(before, after), (before, after)


async def test_retiring_a_critical_rule_asks_first(demo_home: Home) -> None:
    crit = _rule(demo_home, "critical")
    app = _app(demo_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await _started(pilot, app)
        await _on_row(pilot, app, "#rules RowList", str(crit.id))
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("n")  # the question: no
        await pilot.pause(0.2)
        assert _read(demo_home, lambda db: rules.get(db, crit.id)).status == "critical"
        await pilot.press("x")
        await pilot.pause()
        await pilot.press("y")
        await wait_for(pilot, lambda: _audited(demo_home, "rule.retire", f"rule:{crit.id}"))
    assert _read(demo_home, lambda db: rules.get(db, crit.id)).status == "retired"


async def test_revive_edit_and_merge_on_the_rules_screen(demo_home: Home) -> None:
    dormant = _rule(demo_home, "dormant")
    other = _rule(demo_home, "active")
    app = _app(demo_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await _started(pilot, app)
        await pilot.press("3", "enter")
        await wait_for(pilot, lambda: app.screen.__class__.__name__ == "RulesScreen")
        await _on_row(pilot, app, "#table", str(dormant.id))
        await pilot.press("u")
        await wait_for(pilot, lambda: _audited(demo_home, "rule.revive", f"rule:{dormant.id}"))
        await _on_row(pilot, app, "#table", str(dormant.id))
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("Input").value = "Revived and reworded by hand"
        await pilot.press("enter")
        await wait_for(pilot, lambda: _audited(demo_home, "rule.edit", f"rule:{dormant.id}"))
        await _on_row(pilot, app, "#table", str(dormant.id))
        await pilot.press("M")
        await pilot.pause()
        await pilot.press(*str(other.id), "enter")
        await wait_for(pilot, lambda: _audited(demo_home, "rule.merge", f"rule:{other.id}"))
    merged = _read(demo_home, lambda db: rules.get(db, dormant.id))
    assert merged.rule == "Revived and reworded by hand"
    assert (merged.status, merged.merged_into) == ("retired", other.id)
    assert f"rule:{dormant.id}" in _read(demo_home, lambda db: rules.get(db, other.id)).provenance


def _newest(home: Home, category: str | None = None) -> state.StateEntry:
    cats = (category,) if category else None
    statuses = ("active", "completed") if category == "rejected" else ("active",)
    return _read(home, lambda db: pages.state_page(db, categories=cats, statuses=statuses,
                                                    limit=1).rows[0])


async def test_state_complete_edit_and_supersede(demo_home: Home) -> None:
    app = _app(demo_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await _started(pilot, app)
        first = app.screen.query_one("#state RowList", RowList).rows[0][0]
        await _on_row(pilot, app, "#state RowList", first)
        await pilot.press("e")
        await pilot.pause()
        app.screen.query_one("Input").value = "Corrected by hand"
        await pilot.press("enter")
        await wait_for(pilot, lambda: _audited(demo_home, "state.update", f"state:{first}"))
        await _on_row(pilot, app, "#state RowList", first)
        await pilot.press("S")
        await pilot.pause()
        app.screen.query_one("Input").value = "The newer truth"
        await pilot.press("enter")
        await wait_for(pilot, lambda: _audited(demo_home, "state.supersede", f"state:{first}"))
        second = app.screen.query_one("#state RowList", RowList).rows[1][0]
        await _on_row(pilot, app, "#state RowList", second)
        await pilot.press("c")
        await wait_for(pilot, lambda: _audited(demo_home, "state.complete", f"state:{second}"))
    old = _read(demo_home, lambda db: state.get(db, int(first)))
    assert old.summary == "Corrected by hand" and old.status == "superseded"
    new = _read(demo_home, lambda db: state.get(db, old.superseded_by))
    assert new.summary == "The newer truth" and new.agent == old.agent
    assert _read(demo_home, lambda db: state.get(db, int(second))).status == "completed"


async def test_a_rejection_becomes_a_critical_rule(demo_home: Home) -> None:
    rejection = _newest(demo_home, "rejected")
    app = _app(demo_home)
    async with app.run_test(size=(120, 40)) as pilot:
        await _started(pilot, app)
        await _on_row(pilot, app, "#rejections RowList", str(rejection.id))
        await pilot.press("exclamation_mark")
        await pilot.pause()
        await pilot.press("y")

        def made(db: Database) -> rules.Rule | None:
            row = db.one("SELECT id FROM rules WHERE provenance LIKE ?",
                         (f'%"state:{rejection.id}"%',))
            return rules.get(db, row["id"]) if row else None

        await wait_for(pilot, lambda: _read(demo_home, made) is not None)
    rule = _read(demo_home, made)
    assert rule.status == "critical" and rule.source == "rejection"
    assert _audited(demo_home, "rule.add", f"rule:{rule.id}")
