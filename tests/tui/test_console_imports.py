"""Opening the console loads no model, no ML runtime and no API SDK: it must start fast."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from memtui.home import Home

REPO = Path(__file__).resolve().parents[2]
HEAVY = {"torch", "sentence_transformers", "onnxruntime", "anthropic", "transformers"}

SCRIPT = """
import sys
from memtui.home import Home
from memtui.tui.app import MemtuiApp

app = MemtuiApp(Home(sys.argv[1]), refresh_seconds=0)

async def drive(pilot):
    while app.last_snapshot is None:
        await pilot.pause(0.05)
    for key in ("3", "down", "2", "5", "enter"):
        await pilot.press(key)
    await pilot.pause(0.2)
    app.exit()

app.run(headless=True, size=(80, 24), auto_pilot=drive)
print("LOADED", " ".join(sorted(sys.modules)))
"""


def test_opening_the_console_imports_nothing_heavy(demo_home: Home) -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(demo_home.root)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(done.stdout.split("LOADED", 1)[1].split())
    assert "memtui.tui.screens.context" in loaded  # the Context screen did open
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}
