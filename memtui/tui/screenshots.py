"""Screenshots of every console screen on the sample data, and the table of every binding.

    python -m memtui.tui.screenshots docs/console     (writes docs/console/<screen>.svg)

The demo home is built in a temporary folder on a fixed day with a fixed clock, so the
pictures change only when the console or the sample data does.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import shutil
import sys
import tempfile
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any
from unittest import mock

SCREENS: dict[str, tuple[str, ...]] = {
    "overview": (), "state": ("1", "enter"), "rejections": ("2", "enter"),
    "rules": ("3", "enter"), "flows": ("4", "enter"), "context": ("5", "enter"),
    "search": ("slash",), "facts": ("v",), "review": ("r",), "jobs": ("J",), "audit": ("A",),
    "help": ("3", "question_mark"),
}
FIXED = datetime(2026, 11, 25, 9, 30, tzinfo=UTC)


def bindings_table() -> str:
    """Every binding the console declares, as a markdown table (id, keys, what it does)."""
    from textual.binding import Binding

    import memtui.tui

    rows: dict[str, tuple[str, str, str]] = {}
    for info in pkgutil.walk_packages(memtui.tui.__path__, "memtui.tui."):
        module = importlib.import_module(info.name)
        for _name, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != info.name:
                continue
            for b in cls.__dict__.get("BINDINGS", []):
                if isinstance(b, Binding) and b.id and b.id not in rows:
                    what = b.description + (f": {b.tooltip}" if b.tooltip else "")
                    rows[b.id] = (b.key, what, cls.__name__)
    lines = ["| id | keys | does | where |", "|---|---|---|---|"]
    for ident, (keys, what, where) in sorted(rows.items()):
        lines.append(f"| `{ident}` | `{keys}` | {what} | {where} |")
    return "\n".join(lines)


def shoot(folder: Path) -> list[Path]:
    """Build the demo home and save one SVG per screen at 100x30 into ``folder``."""
    from memtui.demo import build_demo_home
    from memtui.extract.stenographer import run as extract
    from memtui.tui.app import MemtuiApp

    folder.mkdir(parents=True, exist_ok=True)
    # a fixed path, as the header shows it: a random folder would change every picture
    scratch = Path(tempfile.gettempdir()) / "memtui-screenshots"
    shutil.rmtree(scratch, ignore_errors=True)
    root = scratch / "demo"
    with mock.patch("memtui.timeutil.now", lambda: FIXED):
        home, _ = build_demo_home(root, today=date(2026, 11, 25))
        db = home.open_db()
        try:
            extract(home, db)
        finally:
            db.close()
    written = []
    for name, keys in SCREENS.items():
        app = MemtuiApp(home, clock=lambda: FIXED, refresh_seconds=0, ascii_only=False)
        target = folder / f"{name}.svg"

        async def drive(pilot: Any, app: Any = app, keys: tuple[str, ...] = keys,
                        target: Path = target) -> None:
            while app.last_snapshot is None:
                await pilot.pause(0.05)
            await pilot.pause(0.2)
            for key in keys:
                await pilot.press(key)
                await pilot.pause(0.1)
            await app.workers.wait_for_complete()
            await pilot.pause(0.3)
            app.save_screenshot(target.name, str(target.parent))
            app.exit()

        app.run(headless=True, size=(100, 30), auto_pilot=drive)
        written.append(target)
    shutil.rmtree(scratch, ignore_errors=True)
    return written


if __name__ == "__main__":
    out = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/console")
    for path in shoot(out):
        print(path)
    print(bindings_table())
