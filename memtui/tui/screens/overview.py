"""The overview: five panes at once from 80x24 up, numbered 1-5, each opening full screen."""

from __future__ import annotations

import os
from typing import Any

from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from memtui import timeutil
from memtui.tui.data import REVIEW_COUNT, Snapshot
from memtui.tui.glyphs import age, sep
from memtui.tui.panes.base import Pane
from memtui.tui.panes.context import ContextPane
from memtui.tui.panes.flows import FlowsPane
from memtui.tui.panes.rejections import RejectionsPane
from memtui.tui.panes.rules import RulesPane
from memtui.tui.panes.state import StatePane
from memtui.tui.render import clean
from memtui.tui.rowlist import RowList

PANES = ("state", "rejections", "rules", "flows", "context")


def header_text(snapshot: Snapshot | None, home: str, *, ascii_only: bool = False,
                width: int | None = None) -> Text:
    """The line that always says where you are, whose memory, and how fresh it is. Wider
    than ``width``, the home's path gives way first (to its last folder, then to an
    ellipsis), so the review queue stays in sight."""
    short = home.replace(os.path.expanduser("~"), "~", 1)
    if width is None:
        return _header(snapshot, short, ascii_only)
    dots = "..." if ascii_only else "…"
    tail = short.rstrip("/").rsplit("/", 1)[-1]
    line = Text()
    for path in (short, f"{dots}/{tail}", dots):
        line = _header(snapshot, path, ascii_only)
        if line.cell_len <= width:
            break
    return line


def _header(snapshot: Snapshot | None, short: str, ascii_only: bool) -> Text:
    dot = sep(ascii_only=ascii_only)
    line = Text(" memtui", style="bold")
    line.append(f"{dot}{clean(short)}")
    if snapshot is None:
        line.append(f"{dot}reading...")
        return line
    who = (f"agent {snapshot.agent}" if snapshot.agent
           else f"all agents ({len(snapshot.agents)})")
    line.append(f"{dot}{clean(who)}{dot}{snapshot.read_at[11:16]}Z")
    if snapshot.last_extract:
        now = timeutil.parse(snapshot.read_at)
        line.append(f"{dot}extract {age(snapshot.last_extract, now)} ago")
    if snapshot.review_pending:
        more = "+" if snapshot.review_pending >= REVIEW_COUNT else ""
        line.append(f"{dot}review {snapshot.review_pending:,}{more}", style="bold")
    return line


class Header(Static):
    """One line: home, agent, clock of the last read, last extraction, review queue."""


class OverviewScreen(Screen[None]):
    """Active state, rejections, rules, flows and context, all visible at once."""

    BINDINGS = [
        *[Binding(str(n), f"focus_pane({n})", "pane" if n == 1 else f"pane {n}",
                  show=n == 1, key_display="1-5", id=f"overview.pane{n}")
          for n in range(1, 6)],
        Binding("enter", "open", "open", id="overview.open", show=True),
    ]

    def __init__(self, ascii_only: bool = False) -> None:
        super().__init__(id="overview")
        self.ascii_only = ascii_only

    def compose(self) -> ComposeResult:
        yield Header(header_text(None, str(self.app_home())), id="header")
        with VerticalScroll(id="panes", can_focus=False):
            with Horizontal(id="row1", classes="pane-row"):
                yield StatePane(ascii_only=self.ascii_only, id="state")
                yield RejectionsPane(ascii_only=self.ascii_only, id="rejections")
            yield RulesPane(ascii_only=self.ascii_only, id="rules")
            with Horizontal(id="row3", classes="pane-row"):
                yield FlowsPane(ascii_only=self.ascii_only, id="flows")
                yield ContextPane(ascii_only=self.ascii_only, id="context")
        yield Static("", id="jobline")
        yield Footer()

    def app_home(self) -> Any:
        app: Any = self.app
        return app.store.home.root

    def on_mount(self) -> None:
        self.query_one("#state", Pane).focus_rows()
        app: Any = self.app
        if app.last_snapshot is not None:
            self.show(app.last_snapshot)

    def show(self, snapshot: Snapshot) -> None:
        """A new snapshot: every pane keeps its cursor; only changed panes redraw rows.

        A snapshot can arrive while the screen is not composed yet or is being torn down
        (a worker's last refresh as the console quits): then there is nothing to draw,
        and ``on_mount`` draws the latest snapshot when it is."""
        headers = self.query(Header)
        if not headers:
            return
        with self.app.batch_update():
            self._draw_header(headers.first(), snapshot, self.size.width or None)
            for pane in self.query(Pane):
                pane.update(snapshot)

    def _draw_header(self, header: Header, snapshot: Snapshot, width: int | None) -> None:
        header.update(header_text(snapshot, str(self.app_home()), ascii_only=self.ascii_only,
                                  width=width))

    def on_resize(self, event: events.Resize) -> None:
        app: Any = self.app
        headers = self.query(Header)
        if app.last_snapshot is not None and headers:
            self._draw_header(headers.first(), app.last_snapshot, event.size.width)
        self.set_class(event.size.width < 70, "-narrow")
        self.set_class(event.size.height < 22, "-short")
        for pane in self.query(ContextPane):
            pane.refit()

    def action_focus_pane(self, number: int) -> None:
        self.query_one(f"#{PANES[number - 1]}", Pane).focus_rows()

    def focused_pane(self) -> Pane | None:
        node = self.focused
        while node is not None and not isinstance(node, Pane):
            node = node.parent  # type: ignore[assignment]
        return node

    def action_open(self) -> None:
        pane = self.focused_pane()
        if pane is not None:
            app: Any = self.app
            app.open_pane(pane.id, pane.rows.key)

    @on(RowList.Selected)
    def _selected(self, event: RowList.Selected) -> None:
        event.stop()
        self.action_open()
