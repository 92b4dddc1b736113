"""Pane 5, context: the agent's window as one bar with the flush and compaction marks."""

from __future__ import annotations

import textwrap

from rich.text import Text

from memtui.tui.contextview import ContextView
from memtui.tui.data import Snapshot
from memtui.tui.glyphs import sep, tokens, usage_bar
from memtui.tui.panes.base import Pane
from memtui.tui.render import clean, lit
from memtui.tui.rowlist import Column, Row


def context_lines(view: ContextView | None, width: int, *, ascii_only: bool) -> list[Text]:
    """The pane's lines for a view, fitted to ``width`` cells."""
    if view is None:
        return [Text("reading...", style="dim")]
    if not view.available or view.window <= 0:
        return [Text(line, style="dim") for line in
                textwrap.wrap(clean(view.note or "no context report"), max(10, width))]
    exact = view.exact
    head = f"{tokens(view.used, exact=exact)} / {tokens(view.window)} "
    pct = f" {round(100 * view.used / view.window)}%"
    marks = [m for m in (view.flush_at, view.compact_at) if m]
    line = Text(head)
    line.append(usage_bar(view.used, view.window, marks, max(4, width - len(head) - len(pct)),
                          ascii_only=ascii_only), style="bold")
    line.append(pct)
    out = [line]
    thresholds = []
    if view.flush_at:
        thresholds.append(f"flush at {tokens(view.flush_at)}")
    if view.compact_at:
        thresholds.append(f"compact at {tokens(view.compact_at)}")
    dot = sep(ascii_only=ascii_only)
    if thresholds:
        out.append(Text(dot.join(thresholds), style="dim"))
    if view.by_kind:
        out.append(lit(dot.join(f"{k} {tokens(n, exact=exact)}" for k, n in view.by_kind)))
    for label, n in view.top:
        out.append(lit(f"{tokens(n, exact=exact):>6}  {label}"))
    return out


class ContextPane(Pane):
    number = 5
    title = "Context"
    columns = [Column("context")]
    empty = "no context report"

    def data_of(self, snapshot: Snapshot) -> tuple[object, ...]:
        return (snapshot.context, self._width())

    def _width(self) -> int:
        # The scrollbar takes a column when the lines outgrow the pane.
        return max(20, (self.rows.size.width or 41) - 1)

    def make_rows(self, snapshot: Snapshot) -> list[Row]:
        lines = context_lines(snapshot.context, self._width(), ascii_only=self.ascii_only)
        return [(f"line:{i}", [line]) for i, line in enumerate(lines)]

    def subtitle(self, snapshot: Snapshot) -> str:
        view = snapshot.context
        if view is None:
            return ""
        dot = sep(ascii_only=self.ascii_only)
        self.border_title = f"5 Context{dot}{clean(view.agent)}" + (
            f"{dot}{view.compactions} compactions" if view.compactions else "")
        return "" if view.available else "no engine"
