"""RowList: a fast table of one-line rows drawn line by line, holding only the rows it is given.

A DataTable lays out every row it holds; this draws only the visible lines, so moving the
cursor repaints two lines whatever the table holds. Screens over big tables give it a
window of rows read page by page (keyset) and are told when the cursor nears either edge.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


@dataclass(frozen=True)
class Column:
    """A column: fixed ``width`` cells, or ``None`` to take what the others leave."""

    name: str
    width: int | None = None
    right: bool = False
    min_width: int = 0
    """Below this many free cells the column is left out (narrow terminals)."""


Row = tuple[str, Sequence[Text]]
"""(key, cells): the key is what selection and cursor tracking use."""


class RowList(ScrollView, can_focus=True):
    """A keyboard-driven list of rows with a cursor that keeps its row across updates."""

    BINDINGS = [
        Binding("up,k", "cursor(-1)", "up", show=False, id="rows.up"),
        Binding("down,j", "cursor(1)", "down", show=False, id="rows.down"),
        Binding("pageup", "page(-1)", "page up", show=False, id="rows.page_up"),
        Binding("pagedown", "page(1)", "page down", show=False, id="rows.page_down"),
        Binding("home,g", "edge(-1)", "first", show=False, id="rows.first"),
        Binding("end,G", "edge(1)", "last", show=False, id="rows.last"),
    ]
    COMPONENT_CLASSES = {"rowlist--cursor", "rowlist--header", "rowlist--blurred"}
    DEFAULT_CSS = """
    RowList { height: 1fr; scrollbar-size-vertical: 1; overflow-x: hidden; }
    RowList > .rowlist--cursor { background: $accent 40%; text-style: bold; }
    RowList:focus > .rowlist--cursor { background: $accent; color: $text; }
    RowList > .rowlist--header { text-style: bold; color: $text-muted; }
    """

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)

    @dataclass
    class Highlighted(Message):
        rowlist: RowList
        key: str | None

        @property
        def control(self) -> RowList:
            return self.rowlist

    @dataclass
    class Selected(Message):
        rowlist: RowList
        key: str

        @property
        def control(self) -> RowList:
            return self.rowlist

    @dataclass
    class NearEdge(Message):
        """The cursor came within a page of the first (-1) or last (+1) row held."""

        rowlist: RowList
        direction: int

        @property
        def control(self) -> RowList:
            return self.rowlist

    def __init__(self, columns: Sequence[Column], *, header: bool = True,
                 empty: str = "nothing here", name: str | None = None, id: str | None = None,
                 classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.columns = list(columns)
        self.header = header
        self.empty = empty
        self.rows: list[Row] = []
        self._index: dict[str, int] = {}
        self._strips: dict[tuple[int, int, bool, bool], Strip] = {}
        """Drawn lines by (row, width, under the cursor, focused): scrolling redraws none."""

    # -- data -----------------------------------------------------------------------------

    @property
    def key(self) -> str | None:
        """The key of the row under the cursor."""
        return self.rows[self.cursor][0] if 0 <= self.cursor < len(self.rows) else None

    def set_rows(self, rows: Sequence[Row], *, keep: str | None = None,
                 shift: int = 0) -> None:
        """Replace the rows. The cursor stays on its row (``keep``, default the current
        key), else on its position; ``shift`` moves the scroll with rows added above."""
        wanted = keep if keep is not None else self.key
        old_cursor, old_top = self.cursor, self.scroll_offset.y
        self.rows = list(rows)
        self._strips.clear()
        self._index = {k: i for i, (k, _) in enumerate(self.rows)}
        self.virtual_size = Size(self.scrollable_content_region.width,
                                 len(self.rows) + self._head())
        new = self._index.get(wanted, old_cursor) if wanted is not None else old_cursor
        self.set_reactive(RowList.cursor, max(0, min(new, len(self.rows) - 1)))
        # At the top, the view stays at the top: rows new at the top come into sight and
        # the cursor's row moves down. Scrolled into the list, the view moves with the
        # cursor's row, so what is read does not jump.
        top = 0 if old_top == 0 and shift == 0 else max(0, old_top + (new - old_cursor) + shift)
        self.scroll_to(y=top, animate=False, immediate=True)
        self._scroll_cursor_into_view()
        self.refresh()
        if self.key != wanted:
            self.post_message(self.Highlighted(self, self.key))

    def _head(self) -> int:
        return 1 if self.header else 0

    # -- keys -----------------------------------------------------------------------------

    def action_cursor(self, delta: int) -> None:
        self.move_to(self.cursor + delta)

    def action_page(self, direction: int) -> None:
        self.move_to(self.cursor + direction * max(1, self.size.height - self._head() - 1))

    def action_edge(self, direction: int) -> None:
        self.move_to(0 if direction < 0 else len(self.rows) - 1)
        self.post_message(self.NearEdge(self, direction))

    def move_to(self, index: int) -> None:
        if not self.rows:
            return
        index = max(0, min(index, len(self.rows) - 1))
        previous = self.cursor
        if index == previous:
            if index in (0, len(self.rows) - 1):
                self.post_message(self.NearEdge(self, -1 if index == 0 else 1))
            return
        self.cursor = index
        self._refresh_row(previous)
        self._refresh_row(index)
        self._scroll_cursor_into_view()
        self.post_message(self.Highlighted(self, self.key))
        page = max(1, self.size.height)
        if index >= len(self.rows) - page:
            self.post_message(self.NearEdge(self, 1))
        elif index < page:
            self.post_message(self.NearEdge(self, -1))

    def key_enter(self, event: events.Key) -> None:
        if self.key is not None:
            event.stop()
            self.post_message(self.Selected(self, self.key))

    async def _on_click(self, event: events.Click) -> None:
        row = event.y + self.scroll_offset.y - self._head()
        if 0 <= row < len(self.rows):
            if row == self.cursor and event.chain >= 2:
                self.post_message(self.Selected(self, self.rows[row][0]))
            self.move_to(row)

    def _refresh_row(self, index: int) -> None:
        y = index + self._head() - self.scroll_offset.y
        self.refresh(Region(0, y, self.size.width, 1))

    def _scroll_cursor_into_view(self) -> None:
        body = max(1, self.size.height - self._head())
        top = self.scroll_offset.y
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + body:
            self.scroll_to(y=self.cursor - body + 1, animate=False, immediate=True)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._strips.clear()  # a theme or focus change redraws every line

    def on_resize(self, event: events.Resize) -> None:
        self._strips.clear()
        self.virtual_size = Size(self.scrollable_content_region.width,
                                 len(self.rows) + self._head())
        self._scroll_cursor_into_view()

    # -- drawing --------------------------------------------------------------------------

    def _widths(self, total: int) -> list[int]:
        fixed = [c.width or 0 for c in self.columns]
        flex = [i for i, c in enumerate(self.columns) if c.width is None]
        free = total - sum(fixed) - (len(self.columns) - 1)
        widths = list(fixed)
        for i in flex:
            widths[i] = max(0, free // max(1, len(flex)))
        # Too narrow: fixed columns with a min_width drop out, rightmost first.
        for i in reversed(range(len(self.columns))):
            if free >= 24 or not flex:
                break
            if self.columns[i].min_width and widths[i]:
                free += widths[i] + 1
                widths[i] = 0
                for j in flex:
                    widths[j] = max(0, free // len(flex))
        return widths

    @property
    def ascii_only(self) -> bool:
        return bool(getattr(self.app, "ascii_only", False))

    def _line(self, cells: Sequence[Text], widths: list[int]) -> Text:
        line = Text(no_wrap=True, end="")
        first = True
        for column, cell, width in zip(self.columns, cells, widths, strict=False):
            if width <= 0:
                continue
            if not first:
                line.append(" ")
            first = False
            piece = cell.copy() if isinstance(cell, Text) else Text(str(cell))
            if piece.cell_len > width and self.ascii_only:
                piece.truncate(max(0, width - 1), overflow="crop")
                piece.append("~")
            else:
                piece.truncate(width, overflow="ellipsis")
            pad = width - piece.cell_len
            if column.right:
                line.append(" " * pad)
                line.append_text(piece)
            else:
                line.append_text(piece)
                line.append(" " * pad)
        return line

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width
        base = self.rich_style
        if self.header and y == 0:
            style = self.get_component_rich_style("rowlist--header")
            heads = [Text(c.name) for c in self.columns]
            return self._strip(self._line(heads, self._widths(width)), width, base + style)
        index = y - self._head() + self.scroll_offset.y
        if not self.rows:
            if index == 0:
                return self._strip(Text(self.empty, style="italic"), width, base)
            return Strip.blank(width, base)
        if not 0 <= index < len(self.rows):
            return Strip.blank(width, base)
        under = index == self.cursor
        key = (index, width, under, self.has_focus)
        cached = self._strips.get(key)
        if cached is None:
            style = base + self.get_component_rich_style("rowlist--cursor") if under else base
            cached = self._strip(self._line(self.rows[index][1], self._widths(width)), width,
                                 style)
            if len(self._strips) > 4096:
                self._strips.clear()
            self._strips[key] = cached
        return cached

    def _strip(self, text: Text, width: int, style: object) -> Strip:
        segments = list(text.render(self.app.console))
        strip = Strip(segments).adjust_cell_length(width)
        return strip.apply_style(style)  # type: ignore[arg-type]
