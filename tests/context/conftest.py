"""Fixtures for the context engine: a home whose agents have the sample transcripts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from memtui.home import Home
from memtui.stores import sources as source_store

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "sample-data" / "transcripts"
CLAUDE = REPO / "tests" / "data" / "claude-code"
OPS_COMPACTED = SAMPLES / "openclaw" / "ops" / "7a11005a-772a-46b9-a05e-50b67def9ca3.jsonl"
OPS_PLAIN = SAMPLES / "openclaw" / "ops" / "d2fe5187-7f88-485e-ac9f-2b36d62fbcbf.jsonl"
CC_SAMPLE = SAMPLES / "claude-code" / "-home-dana-src-lumen" / (
    "b6e4f126-c4cf-4efe-bdc2-6a4f64a070a2.jsonl")
SUBAGENT = CLAUDE / "subagent-a2898e3.jsonl"
SHORT = CLAUDE / "short.jsonl"


def lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def register(home: Home, agent: str, *files: Path) -> list[Path]:
    """Copy transcripts into the home and register them as the agent's sources."""
    folder = home.root / "transcripts" / agent
    folder.mkdir(parents=True, exist_ok=True)
    copies = []
    db = home.open_db()
    try:
        for f in files:
            target = folder / f.name
            shutil.copy(f, target)
            source_store.add(db, str(target), agent=agent, actor="cli")
            copies.append(target)
    finally:
        db.close()
    return copies


def configure(home: Home, text: str) -> None:
    """Append settings to the home's memtui.toml and drop the cached settings."""
    with home.config_path.open("a", encoding="utf-8") as fh:
        fh.write("\n" + text + "\n")
    home._settings = None


@pytest.fixture
def ops_home(home: Home) -> Home:
    register(home, "ops", OPS_COMPACTED, OPS_PLAIN)
    return home
