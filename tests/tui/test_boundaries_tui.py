"""The console never talks to SQLite itself: no SQL in any string of memtui/tui (issue 11)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import memtui.tui

SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE|PRAGMA)\b")
TUI = Path(memtui.tui.__file__).parent


def _docstrings(tree: ast.AST) -> set[int]:
    """Ids of the docstring nodes: prose about the engine may name a pragma; code may not."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def sql_strings(source: str, filename: str) -> list[str]:
    """Where a string constant (f-string parts included) of ``source`` holds SQL."""
    tree = ast.parse(source, filename)
    skip = _docstrings(tree)
    return [f"{filename}:{node.lineno}: {node.value[:60]!r}" for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in skip and SQL.search(node.value)]


def test_the_check_sees_sql_in_plain_and_f_strings() -> None:
    source = ('"""A PRAGMA in the docstring is prose."""\n'
              'a = "SELECT * FROM rules"\n'
              'b = f"DELETE FROM {t} WHERE id = ?"\n'
              'c = "select the rule under the cursor"\n')
    found = sql_strings(source, "x.py")
    assert [f.split(":")[1] for f in found] == ["2", "3"]


def test_no_sql_in_the_console() -> None:
    files = sorted(TUI.rglob("*.py"))
    assert len(files) > 20  # the whole package, screens and panes included
    found = [hit for path in files
             for hit in sql_strings(path.read_text(encoding="utf-8"), str(path.relative_to(TUI)))]
    assert found == [], "the console runs SQL; move it into a memtui/stores function:\n" + \
        "\n".join(found)
