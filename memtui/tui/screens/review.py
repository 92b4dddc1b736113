"""The daily review: what extraction added since each agent's review mark, backtest proposals
and draft flows (accept, edit, reject into a tombstone), and daily-log lines to promote into
MEMORY.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static

from memtui.home import Home
from memtui.stores import flows as flow_store
from memtui.stores import review
from memtui.stores.flows import Flow
from memtui.stores.state import StateEntry
from memtui.tui.glyphs import ascii_text
from memtui.tui.messages import Act
from memtui.tui.render import clean, lit
from memtui.tui.rowlist import Column, Row, RowList
from memtui.tui.store import Store

QUEUE = 300
LOG_DAYS = 2


def daily_lines(home: Home, agent: str, days: int = LOG_DAYS) -> list[tuple[str, str]]:
    """(where, text) of the bullet lines of the agent's newest daily logs."""
    folder = home.workspace(agent) / "memory"
    files = sorted(folder.glob("????-??-??.md"), reverse=True)[:days] if folder.is_dir() else []
    out = []
    for path in files:
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace")
                                 .splitlines(), 1):
            if line.startswith("- ") and line[2:].strip():
                out.append((f"{Path(path).name}:{n}", line[2:].strip()))
    return out


def _entry_cells(e: StateEntry) -> list[Text]:
    # A proposal is a question to the person: "rejected?" (the unsure rejections, first),
    # "learning?" (a backtest's lesson); it is served only once accepted.
    kind = f"{e.category}?" if e.status == "proposed" else e.category
    return [Text(str(e.id)), lit(e.agent), lit(kind, "italic" if e.status == "proposed" else ""),
            lit(e.summary), Text(f"{round(e.confidence * 100)}%")]


class ReviewScreen(Screen[None]):
    """Two lists; tab moves between them. Every decision goes through the review store."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.go_back", "back", id="review.back"),
        Binding("y,space", "decide('review.accept')", "accept", id="review.accept"),
        Binding("e", "decide('review.edit')", "edit", id="review.edit"),
        Binding("x", "decide('review.reject')", "reject", id="review.reject"),
        Binding("R", "mark", "all reviewed", id="review.mark",
                tooltip="Move the review mark past everything shown"),
        Binding("p", "promote", "to MEMORY.md", id="review.promote_line",
                tooltip="Promote the daily-log line under the cursor into MEMORY.md"),
    ]

    def __init__(self, store: Store, agent: str | None, key: str | None = None) -> None:
        super().__init__()
        self.store = store
        self.agent = agent
        self.entries: dict[str, StateEntry] = {}
        self.lines: dict[str, tuple[str, str]] = {}

    def compose(self) -> ComposeResult:
        yield Static(Text(ascii_text(self.app, " Review · since the review mark: y accept · "
                                     "e edit · x reject (tombstone) · R all reviewed"),
                          style="bold"), classes="full-title")
        yield RowList([Column("id", 6, right=True), Column("agent", 11),
                       Column("kind", 9), Column("summary"),
                       Column("conf", 4, right=True, min_width=1)], id="queue",
                      empty="nothing waits for review")
        yield Static("", classes="full-status", id="status")
        yield Static(Text(ascii_text(self.app, " Daily logs · p promotes a line into MEMORY.md"),
                          style="bold"),
                     classes="full-title")
        yield RowList([Column("agent", 11), Column("where", 16, min_width=1), Column("line")],
                      id="lines", empty="no daily-log lines")
        yield Static("", id="jobline")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#queue", RowList).focus()
        self.refresh_rows()

    def memory_changed(self) -> None:
        self.refresh_rows()

    def agents(self) -> list[str]:
        return [self.agent] if self.agent else self.store.home.agents()

    @work(thread=True, exclusive=True, exit_on_error=False, group="review")
    def refresh_rows(self) -> None:
        with self.store.reading() as db:
            pending = review.pending(db, self.agent, limit=QUEUE)
            drafts = flow_store.list_flows(db, agent=self.agent, status="draft")
            marks = [f"{a} at state {review.mark(db, a)}" for a in self.agents()]
        lines = [(a, where, text) for a in self.agents()
                 for where, text in daily_lines(self.store.home, a)]
        self.app.call_from_thread(self._show, pending, drafts, lines, marks)

    def _show(self, pending: review.Pending, drafts: list[Flow],
              lines: list[tuple[str, str, str]], marks: list[str]) -> None:
        self.entries = {str(e.id): e for e in pending.entries}
        queue: list[Row] = [(str(e.id), _entry_cells(e)) for e in pending.entries]
        queue += [(f"flow:{d.name}", [Text("-"), lit(d.agent or "all"),
                                      Text("flow", style="italic"),
                                      lit(f"draft flow {d.name}"), Text("")])
                  for d in drafts]
        self.query_one("#queue", RowList).set_rows(queue)
        self.lines = {f"{a}:{where}": (a, text) for a, where, text in lines}
        self.query_one("#lines", RowList).set_rows(
            [(f"{a}:{where}", [lit(a), lit(where, "dim"), lit(text)]) for a, where, text in lines])
        self.query_one("#status", Static).update(Text(ascii_text(
            self.app, f" {pending.total:,} waiting ({len(pending.entries)} shown) · "
            f"{len(drafts)} draft flows · marks: {clean(', '.join(marks))}")))

    def action_decide(self, action: str) -> None:
        queue = self.query_one("#queue", RowList)
        key = queue.key
        if key is None:
            self.notify("nothing under the cursor", severity="warning")
            return
        if key.startswith("flow:"):
            flow_action = {"review.accept": "flows.accept", "review.reject": "flows.reject"}
            if action not in flow_action:
                self.notify("a draft flow is accepted or rejected; edit it with memtui flows",
                            severity="warning")
                return
            self.post_message(Act(flow_action[action], key[5:], key[5:]))
            return
        entry = self.entries[key]
        self.post_message(Act(action, key, entry.summary, agent=entry.agent))

    def action_mark(self) -> None:
        for agent in self.agents():
            self.post_message(Act("review.mark", agent, agent))

    def action_promote(self) -> None:
        lines = self.query_one("#lines", RowList)
        if lines.key is None or lines.key not in self.lines:
            self.notify("move to a daily-log line first (tab)", severity="warning")
            return
        agent, text = self.lines[lines.key]
        app: Any = self.app
        app.make_change("review.promote_line", lines.key, text, False)

    @on(RowList.Selected, "#queue")
    def _selected(self, event: RowList.Selected) -> None:
        event.stop()
        entry = self.entries.get(event.key)
        if entry is not None:
            app: Any = self.app
            source = f"\n\nsaid in {entry.cite}" if entry.source_entry else ""
            app.show_text(f"state {entry.id}",
                          lit(f"{entry.summary}\n\n{entry.detail}{source}"))
