"""Listings of stored text for people: shown literally, never obeyed, never cut.

Stored text may hold anything an agent or a transcript said: rich markup (``[bold]``,
``[link=…]``) is shown as written, control characters as visible symbols
(:func:`memtui.text.show_controls`), and at any terminal width every character is
printed: the free-text column folds long words, and when the fixed columns leave it too
little room the listing puts each entry's text on its own lines below its fields.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from memtui.text import show_controls

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

MIN_TEXT_WIDTH = 30
"""Below this width for the free-text column, entries are stacked instead of tabled."""


def literal(value: object, style: str = "") -> Text:
    """A rich Text of stored text: markup stays literal, control characters visible."""
    from rich.text import Text

    return Text(show_controls(str(value)), style=style)


def listing(headers: Sequence[str], rows: Sequence[Sequence[object]],
            out: Console | None = None) -> None:
    """Print rows whose last column is free text, losing nothing at any width."""
    from rich.padding import Padding
    from rich.table import Table
    from rich.text import Text

    if out is None:
        from memtui.cli.common import console

        out = console()
    cells = [[literal(v) for v in row] for row in rows]
    fixed = [max([len(name), *(c[i].cell_len for c in cells)])
             for i, name in enumerate(headers[:-1])]
    gaps = 2 * (len(headers) - 1)
    if sum(fixed) + gaps + MIN_TEXT_WIDTH <= out.width:
        table = Table(box=None, pad_edge=False, header_style="bold", padding=(0, 2, 0, 0))
        for name in headers[:-1]:
            table.add_column(name, no_wrap=True)
        table.add_column(headers[-1], overflow="fold")
        for row_cells in cells:
            table.add_row(*row_cells)
        out.print(table)
        return
    # Too narrow for a table: the fields in aligned columns, the text folded below them.
    def line(parts: Sequence[Text]) -> Text:
        padded = [p.copy() for p in parts]
        for part, width in zip(padded, fixed, strict=True):
            part.pad_right(width - part.cell_len)
        joined = Text("  ").join(padded)
        joined.rstrip()  # in place
        return joined

    header = line([Text(name) for name in headers[:-1]])
    header.append(f"\n    {headers[-1]}")
    header.stylize("bold")
    out.print(header, overflow="fold")
    for row_cells in cells:
        out.print(line(row_cells[:-1]), overflow="fold")
        out.print(Padding(row_cells[-1], (0, 0, 0, 4)), overflow="fold")
