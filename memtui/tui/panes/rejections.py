"""Pane 2, rejections: what a human refused, newest first; promote one to a critical rule."""

from __future__ import annotations

from rich.text import Text

from memtui.stores.state import StateEntry
from memtui.tui.actions import REJECTION_BINDINGS, ActsOnRows
from memtui.tui.data import Snapshot
from memtui.tui.panes.base import Pane
from memtui.tui.render import lit
from memtui.tui.rowlist import Column, Row


def rejection_cells(e: StateEntry) -> list[Text]:
    confidence = Text(f"{round(e.confidence * 100)}%", style="dim" if e.confidence < 0.7 else "")
    return [Text(e.created_at[5:10]), lit(e.agent[:5]), lit(e.summary), confidence]


class RejectionsPane(ActsOnRows, Pane):
    BINDINGS = REJECTION_BINDINGS
    number = 2
    title = "Rejections"
    columns = [Column("date", 5), Column("agent", 5), Column("summary"),
               Column("conf", 4, right=True, min_width=1)]
    empty = "no rejections"

    def data_of(self, snapshot: Snapshot) -> tuple[object, ...]:
        return (snapshot.rejections,)

    def make_rows(self, snapshot: Snapshot) -> list[Row]:
        return [(str(e.id), rejection_cells(e)) for e in snapshot.rejections]

    def subtitle(self, snapshot: Snapshot) -> str:
        return f"{snapshot.rejections_total:,}"

    def current_item(self) -> tuple[str, str, bool, str | None] | None:
        key = self.rows.key
        found = [e for e in (self.snapshot.rejections if self.snapshot else ())
                 if str(e.id) == key]
        return (key, found[0].summary, False, found[0].agent) if key and found else None
