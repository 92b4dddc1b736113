"""Pane 1, active state: decisions, tasks, discoveries... newest first, with their age."""

from __future__ import annotations

from rich.text import Text

from memtui import timeutil
from memtui.stores.state import StateEntry
from memtui.tui.actions import STATE_BINDINGS, ActsOnRows
from memtui.tui.data import Snapshot
from memtui.tui.glyphs import age
from memtui.tui.panes.base import Pane
from memtui.tui.render import lit
from memtui.tui.rowlist import Column, Row

CATEGORY_STYLE = {"decision": "bold", "task": "", "learning": "italic", "discovery": "",
                  "context": "dim", "agent_state": "dim", "rejected": "bold",
                  "proposed": "italic"}
CATEGORY_LABEL = {"agent_state": "agent"}
"""Shorter names where a category would not fit its nine columns ("agent_sta")."""


def state_cells(e: StateEntry, now: str, *, show_agent: bool) -> list[Text]:
    label = CATEGORY_LABEL.get(e.category, e.category)[:9]
    cells = [lit(label, CATEGORY_STYLE.get(e.category, "")), lit(e.domain)]
    if show_agent:
        cells.append(lit(e.agent))
    return [*cells, lit(e.summary), Text(age(e.created_at, timeutil.parse(now)))]


def state_columns(show_agent: bool) -> list[Column]:
    cols = [Column("category", 9), Column("domain", 7, min_width=1)]
    if show_agent:
        cols.append(Column("agent", 7, min_width=1))
    return [*cols, Column("summary"), Column("age", 3, right=True)]


class StatePane(ActsOnRows, Pane):
    BINDINGS = STATE_BINDINGS
    number = 1
    title = "Active state"
    columns = state_columns(False)
    empty = "no active state"

    def data_of(self, snapshot: Snapshot) -> tuple[object, ...]:
        return (snapshot.agent, snapshot.state, snapshot.read_at[:13])

    def make_rows(self, snapshot: Snapshot) -> list[Row]:
        return [(str(e.id), state_cells(e, snapshot.read_at, show_agent=False))
                for e in snapshot.state]

    def subtitle(self, snapshot: Snapshot) -> str:
        return f"{snapshot.state_total:,}"

    def current_item(self) -> tuple[str, str, bool, str | None] | None:
        key = self.rows.key
        found = [e for e in (self.snapshot.state if self.snapshot else ()) if str(e.id) == key]
        return (key, found[0].summary, False, found[0].agent) if key and found else None
