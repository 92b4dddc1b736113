"""Full screen 5: the agent's context window, by kind, the largest consumers, and its actions."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static

from memtui.tui.contextview import ContextView
from memtui.tui.data import Snapshot
from memtui.tui.glyphs import ascii_text, bar, tokens
from memtui.tui.panes.context import context_lines
from memtui.tui.render import clean, lit
from memtui.tui.rowlist import Column, RowList
from memtui.tui.store import Store


def breakdown_rows(view: ContextView, *, ascii_only: bool) -> list[tuple[str, list[Text]]]:
    rows: list[tuple[str, list[Text]]] = []
    used = max(1, view.used)
    for kind, n in view.by_kind:
        rows.append((f"kind:{kind}", [lit(kind), Text(tokens(n, exact=view.exact)),
                                      Text(bar(n / used, 20, ascii_only=ascii_only))]))
    for i, (label, n) in enumerate(view.top):
        rows.append((f"top:{i}", [lit(label, "dim"), Text(tokens(n, exact=view.exact)),
                                  Text(bar(n / used, 20, ascii_only=ascii_only))]))
    return rows


class ContextScreen(Screen[None]):
    """Follows the agent's live transcript through the snapshots the app reads."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.go_back", "back", id="context.back"),
        Binding("P", "app.run('prune')", "prune preview", id="context.prune"),
        Binding("F", "app.run('flush')", "flush", id="context.flush"),
        Binding("C", "app.run('compact')", "compact", id="context.compact"),
        Binding("H", "app.run('heartbeat')", "heartbeat", id="context.heartbeat"),
    ]

    def __init__(self, store: Store, agent: str | None, key: str | None = None) -> None:
        super().__init__()
        self.store = store
        self.agent = agent

    def compose(self) -> ComposeResult:
        yield Static(Text(" 5 Context", style="bold"), classes="full-title", id="title")
        yield Static("", id="usage")
        yield RowList([Column("what"), Column("tokens", 8, right=True), Column("share", 20)],
                      id="table", empty="no breakdown (no context report)")
        yield Static("", classes="full-status", id="status")
        yield Static("", id="jobline")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(RowList).focus()
        app: Any = self.app
        if app.last_snapshot is not None:
            self.show(app.last_snapshot)

    def show(self, snapshot: Snapshot) -> None:
        view = snapshot.context
        if view is None:
            return
        ascii_only = bool(getattr(self.app, "ascii_only", False))
        width = max(20, self.size.width - 2)
        title = f" 5 Context · {clean(view.agent)}"
        if view.session:
            title += f" · session {clean(view.session)}"
        if view.model:
            title += f" · {clean(view.model)}"
        if view.compactions:
            title += f" · {view.compactions} compactions"
        self.query_one("#title", Static).update(Text(ascii_text(self.app, title), style="bold"))
        lines = context_lines(view, width, ascii_only=ascii_only)[:3]
        self.query_one("#usage", Static).update(Text("\n").join(lines))
        self.query_one(RowList).set_rows(breakdown_rows(view, ascii_only=ascii_only))
        app: Any = self.app
        estimate = "" if view.exact else " · ~ marks estimates (chars/4)"
        self.query_one("#status", Static).update(Text(ascii_text(
            app, f" read {app.clock().strftime('%H:%M:%S')}{estimate} · P prune preview · "
            "F flush · C compact (preview first) · H heartbeat (dry run)")))
