"""Fixtures for the MCP server tests: a keyword-only home (no model load) and a client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from memtui.home import Home


@pytest.fixture
def kw_home(home: Home) -> Home:
    """The shared home with search set to keyword-only: these tests exercise the server,
    not the model (tests/test_forgetting.py covers vectors)."""
    with home.config_path.open("a", encoding="utf-8") as fh:
        fh.write('\n[search]\nprovider = "none"\n')
    return home


def payload(result: Any) -> dict[str, Any]:
    """A tool result's JSON (structured content when given, else the text)."""
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


def files_holding(root: Path, word: str) -> list[str]:
    needle = word.encode().lower()
    return [str(p.relative_to(root)) for p in root.rglob("*")
            if p.is_file() and needle in p.read_bytes().lower()]
