"""Pane 4, flows: effectiveness, used / succeeded / failed, and a sparkline of recent runs."""

from __future__ import annotations

from rich.text import Text

from memtui.tui.data import FlowView, Snapshot
from memtui.tui.glyphs import spark
from memtui.tui.panes.base import Pane
from memtui.tui.render import lit
from memtui.tui.rowlist import Column, Row


def flow_cells(view: FlowView, *, ascii_only: bool) -> list[Text]:
    f = view.flow
    pct = "  - " if f.effectiveness is None else f"{round(f.effectiveness * 100):3d}%"
    style = "dim" if f.status == "draft" else ""
    return [lit(f.name, style), Text(pct), Text(spark(list(view.recent), 6,
                                                      ascii_only=ascii_only)),
            Text(f"{f.times_used}/{f.times_succeeded}/{f.times_failed}"),
            Text(f.status if f.status != "active" else "")]


FLOW_COLUMNS = [Column("flow"), Column("eff", 4, right=True), Column("recent", 6),
                Column("u/s/f", 8, right=True, min_width=1), Column("", 5, min_width=1)]


class FlowsPane(Pane):
    number = 4
    title = "Flows"
    columns = FLOW_COLUMNS
    empty = "no flows"

    def data_of(self, snapshot: Snapshot) -> tuple[object, ...]:
        return (snapshot.flows,)

    def make_rows(self, snapshot: Snapshot) -> list[Row]:
        return [(view.flow.name, flow_cells(view, ascii_only=self.ascii_only))
                for view in snapshot.flows]

    def subtitle(self, snapshot: Snapshot) -> str:
        return f"{snapshot.flows_total:,}"
