"""A full screen of a small list with a detail panel for the row under the cursor."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from memtui.tui.glyphs import ascii_text
from memtui.tui.rowlist import Column, Row, RowList
from memtui.tui.store import Store


class ListScreen(Screen[None]):
    """Rows read in a worker (``read``), a detail panel filled in a worker (``detail``)."""

    TITLE: ClassVar[str] = ""
    COLUMNS: ClassVar[list[Column]] = []
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "app.go_back", "back", id="list.back"),
    ]

    def __init__(self, store: Store, agent: str | None, key: str | None = None) -> None:
        super().__init__()
        self.store = store
        self.agent = agent
        self.start_key = key

    def compose(self) -> ComposeResult:
        yield Static(Text(f" {ascii_text(self.app, self.TITLE)}", style="bold"),
                     classes="full-title", id="title")
        yield RowList(self.COLUMNS, id="table")
        with VerticalScroll(classes="full-detail"):
            yield Static("", id="detail")
        yield Static("", id="jobline")
        yield Footer()

    @property
    def table(self) -> RowList:
        return self.query_one("#table", RowList)

    def on_mount(self) -> None:
        self.table.focus()
        self.refresh_rows()

    def memory_changed(self) -> None:
        self.refresh_rows()

    @work(thread=True, exclusive=True, exit_on_error=False, group="list")
    def refresh_rows(self) -> None:
        rows = self.read()
        self.app.call_from_thread(self._show, rows)

    def _show(self, rows: list[Row]) -> None:
        keep, self.start_key = self.start_key, None
        self.table.set_rows(rows, keep=keep)
        self._detail_for(self.table.key)

    def read(self) -> list[Row]:
        raise NotImplementedError

    def detail(self, key: str) -> Text:
        return Text(key)

    @on(RowList.Highlighted, "#table")
    def _highlighted(self, event: RowList.Highlighted) -> None:
        self._detail_for(event.key)

    def _detail_for(self, key: str | None) -> None:
        if key is None:
            self.query_one("#detail", Static).update("")
        else:
            self._read_detail(key)

    @work(thread=True, exclusive=True, exit_on_error=False, group="detail")
    def _read_detail(self, key: str) -> None:
        text = self.detail(key)
        app: Any = self.app
        app.call_from_thread(self.query_one("#detail", Static).update, text)
