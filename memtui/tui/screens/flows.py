"""Full screen 4: every flow with its effectiveness, counts, recent runs and steps."""

from __future__ import annotations

from rich.text import Text

from memtui.stores import flows as flow_store
from memtui.tui.data import flow_views
from memtui.tui.glyphs import ascii_text
from memtui.tui.panes.flows import flow_cells
from memtui.tui.render import block, clean
from memtui.tui.rowlist import Column, Row
from memtui.tui.screens.simple import ListScreen

FLOWS_SHOWN = 2000


class FlowsScreen(ListScreen):
    TITLE = "4 Flows · effectiveness, used/succeeded/failed, the last runs"
    COLUMNS = [Column("flow"), Column("eff", 4, right=True), Column("last 12", 12),
               Column("u/s/f", 10, right=True), Column("status", 7)]

    def read(self) -> list[Row]:
        with self.store.reading() as db:
            views, _total = flow_views(db, self.agent, FLOWS_SHOWN)
        ascii_only = bool(getattr(self.app, "ascii_only", False))
        out: list[Row] = []
        for v in views:
            cells = flow_cells(v, ascii_only=ascii_only)
            from memtui.tui.glyphs import spark

            cells[2] = Text(spark(list(v.recent), 12, ascii_only=ascii_only))
            cells[4] = Text(v.flow.status)
            out.append((v.flow.name, cells))
        return out

    def detail(self, key: str) -> Text:
        with self.store.reading() as db:
            flow = flow_store.get(db, key)
            runs = flow_store.runs(db, key, limit=12)
        lines = [f"{clean(flow.name)} · {clean(flow.domain)} · {flow.effectiveness_line()}",
                 "triggers: " + "; ".join(clean(t) for t in flow.trigger_phrases), "steps:"]
        lines += [f"  {i}. {clean(s)}" for i, s in enumerate(flow.steps, 1)]
        lines += ["recent runs:"] + [f"  {r.at} {r.outcome} {clean(r.note)}"
                                     for r in reversed(runs)]
        return block(ascii_text(self.app, "\n".join(lines)))
