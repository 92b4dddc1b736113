"""A full screen over a big table, read page by page (keyset) into a bounded window of rows.

The window holds at most ``WINDOW`` rows. When the cursor nears either end, the next page
that way is read in a worker and the far end is dropped, so moving through 100,000 rows
never holds more than a few hundred and a key press never waits for SQLite. When memory
changes, the window is read again from its first row, and the cursor stays on its row.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, ClassVar, Generic, TypeVar

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Input, Static

from memtui.db import Database
from memtui.stores.pages import Key, Page
from memtui.tui.glyphs import ascii_text
from memtui.tui.render import clean, lit
from memtui.tui.rowlist import Column, Row, RowList
from memtui.tui.store import Store

T = TypeVar("T")
PAGE = 100
WINDOW = 400


class PagedScreen(Screen[None], Generic[T]):
    """Subclasses say how to read a page, count, and draw a row."""

    TITLE: ClassVar[str] = ""
    COLUMNS: ClassVar[Sequence[Column]] = ()
    SORTS: ClassVar[Sequence[str]] = ()
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "filter", "filter", id="table.filter"),
        Binding("s", "sort", "sort", id="table.sort"),
        Binding("enter", "details", "details", id="table.details"),
        Binding("escape", "back", "back", id="table.back"),
    ]

    def __init__(self, store: Store, agent: str | None, key: str | None = None) -> None:
        super().__init__()
        self.store = store
        self.agent = agent
        self.start_key = key
        self.sort = self.SORTS[0] if self.SORTS else ""
        self.text = ""
        self.window: list[T] = []
        self.keys: list[Key] = []
        self.more_before = False
        self.more_after = False
        self.position: int | None = 0
        self.total = 0
        self.loading = False
        self.read_at = ""

    # -- what subclasses give ------------------------------------------------------------

    def fetch(self, db: Database, anchor: Key | None, forward: bool, limit: int,
              inclusive: bool) -> Page[T]:
        raise NotImplementedError

    def count(self, db: Database) -> int:
        raise NotImplementedError

    def cells(self, item: T) -> list[Text]:
        raise NotImplementedError

    def key_of(self, item: T) -> str:
        return str(getattr(item, "id"))  # noqa: B009

    def details(self, item: T) -> tuple[str, Text]:
        """Title and text shown for the row under the cursor (read in a worker)."""
        return self.key_of(item), lit(str(item))

    # -- layout -------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        yield Static(Text(f" {ascii_text(self.app, self.TITLE)}", style="bold"),
                     classes="full-title", id="title")
        yield RowList(self.COLUMNS, id="table", empty="nothing here (or still reading)")
        yield Static("", classes="full-status", id="status")
        yield Input(placeholder="filter: text to look for, enter to apply, esc to clear",
                    id="filter")
        yield Static("", id="jobline")
        yield Footer()

    @property
    def table(self) -> RowList:
        return self.query_one("#table", RowList)

    def on_mount(self) -> None:
        self.table.focus()
        self.load("reset")

    # -- reading ------------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="page")
    def load(self, mode: str) -> None:
        """Read a page: reset (from the top), append, prepend, end (the last page), or
        reread (the window again, from its first row)."""
        with self.store.reading() as db, db.read():
            if mode == "append":
                page = self.fetch(db, self.keys[-1], True, PAGE, False)
            elif mode == "prepend":
                page = self.fetch(db, self.keys[0], False, PAGE, False)
            elif mode == "end":
                page = self.fetch(db, None, False, PAGE, False)
            elif mode == "reread" and self.keys and self.more_before:
                page = self.fetch(db, self.keys[0], True, max(PAGE, len(self.window)), True)
            elif mode == "reread":
                # The window starts at the top: rows new at the top belong in it.
                page = self.fetch(db, None, True, max(PAGE, len(self.window)), False)
            else:
                page = self.fetch(db, None, True, PAGE, False)
            total = self.count(db)
        self.app.call_from_thread(self._apply, mode, page, total)

    def _apply(self, mode: str, page: Page[T], total: int) -> None:
        self.total = total
        rows, keys = list(page.rows), list(page.keys)
        shift = 0
        if mode == "append":
            self.window += rows
            self.keys += keys
            self.more_after = page.more_after
            drop = max(0, len(self.window) - WINDOW)
            if drop:
                self.window, self.keys = self.window[drop:], self.keys[drop:]
                self.more_before = True
                self.position = None if self.position is None else self.position + drop
                shift = -drop
        elif mode == "prepend":
            self.window = rows + self.window
            self.keys = keys + self.keys
            self.more_before = page.more_before
            self.position = None if self.position is None else max(0, self.position - len(rows))
            shift = len(rows)
            if len(self.window) > WINDOW:
                self.window, self.keys = self.window[:WINDOW], self.keys[:WINDOW]
                self.more_after = True
        elif mode == "reread":
            was_before = self.more_before
            self.window, self.keys = rows, keys
            self.more_after = page.more_after
            self.more_before = was_before
        else:
            self.window, self.keys = rows, keys
            self.more_before, self.more_after = page.more_before, page.more_after
            self.position = 0 if mode == "reset" else max(0, total - len(rows))
        keep = None
        if mode == "reset" and self.start_key is not None:
            keep, self.start_key = self.start_key, None
        elif mode == "end" and rows:
            keep = self.key_of(rows[-1])
        self.table.set_rows([self._row(item) for item in self.window], keep=keep, shift=shift)
        self.loading = False
        self.read_at = self.app_clock()
        self.show_status()

    def app_clock(self) -> str:
        return self.now().strftime("%H:%M:%S")

    def now(self) -> datetime:
        """The app's clock (fixed in tests), for ages and read times."""
        app: Any = self.app
        return app.clock()

    def _row(self, item: T) -> Row:
        return self.key_of(item), self.cells(item)

    def show_status(self) -> None:
        table = self.table
        where = "" if self.position is None else f"row {self.position + table.cursor + 1:,} of "
        parts = [f" {where}{self.total:,}"]
        if self.sort:
            parts.append(f"sort {self.sort}")
        if self.text:
            parts.append(f"filter “{clean(self.text)}”")
        if self.agent:
            parts.append(f"agent {clean(self.agent)}")
        parts.append(f"read {self.read_at}")
        # A line of fixed height: no layout pass on every cursor move.
        line = " · ".join(parts)
        self.query_one("#status", Static).update(Text(ascii_text(self.app, line)), layout=False)

    @on(RowList.NearEdge, "#table")
    def _near_edge(self, event: RowList.NearEdge) -> None:
        if self.loading:
            return
        if event.direction > 0 and self.more_after:
            last = self.table.cursor == len(self.window) - 1
            self.loading = True
            self.load("end" if last and self.total > WINDOW else "append")
        elif event.direction < 0 and self.more_before:
            self.loading = True
            self.load("reset" if self.table.cursor == 0 else "prepend")

    @on(RowList.Highlighted, "#table")
    def _highlighted(self, event: RowList.Highlighted) -> None:
        self.show_status()

    def memory_changed(self) -> None:
        """Another process (or this console) wrote: read the same window again."""
        self.load("reread")

    # -- keys ---------------------------------------------------------------------------

    def current(self) -> T | None:
        i = self.table.cursor
        return self.window[i] if 0 <= i < len(self.window) else None

    def action_sort(self) -> None:
        if not self.SORTS:
            return
        self.sort = self.SORTS[(list(self.SORTS).index(self.sort) + 1) % len(self.SORTS)]
        self.load("reset")

    def action_filter(self) -> None:
        box = self.query_one("#filter", Input)
        box.add_class("-shown")
        box.value = self.text
        box.focus()

    @on(Input.Submitted, "#filter")
    def _filter(self, event: Input.Submitted) -> None:
        self.text = event.value.strip()
        event.input.remove_class("-shown")
        self.table.focus()
        self.load("reset")

    def action_back(self) -> None:
        """Close the filter box, else clear the filter, else go back to the overview."""
        box = self.query_one("#filter", Input)
        if box.has_class("-shown"):
            box.remove_class("-shown")
            self.table.focus()
        elif self.text:
            self.text = ""
            self.load("reset")
        else:
            self.app.pop_screen()

    def action_details(self) -> None:
        item = self.current()
        if item is not None:
            self._details(item)

    @on(RowList.Selected, "#table")
    def _selected(self, event: RowList.Selected) -> None:
        event.stop()
        self.action_details()

    @work(thread=True, exit_on_error=False, group="details")
    def _details(self, item: T) -> None:
        title, body = self.details(item)
        app: Any = self.app
        self.app.call_from_thread(app.show_text, title, body)
