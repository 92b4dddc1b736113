"""Fixtures for the transcript reader tests: the shared real files and a JSONL writer."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

SHARED_CC = Path(__file__).resolve().parents[1] / "data"
# The synthetic OpenClaw cases (openclaw_cases.py) are shared by several test modules.
sys.path.insert(0, str(Path(__file__).resolve().parent))


def _shared(name: str) -> Path:
    path = SHARED_CC / "claude-code" / name
    if not path.exists():
        pytest.skip(f"shared sample {path} is not available")
    return path


@pytest.fixture
def short_jsonl() -> Path:
    """Real 15-line Claude Code session with a refused tool use."""
    return _shared("short.jsonl")


@pytest.fixture
def subagent_jsonl() -> Path:
    """Real 144-line Claude Code sub-agent session with streamed tool calls."""
    return _shared("subagent-a2898e3.jsonl")


def encode(line: dict[str, Any] | str | bytes) -> bytes:
    """One JSONL line: objects as compact UTF-8 JSON, str/bytes verbatim, plus the newline."""
    if isinstance(line, bytes):
        return line + b"\n"
    if isinstance(line, str):
        return line.encode("utf-8") + b"\n"
    return json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n"


@pytest.fixture
def write_lines(tmp_path: Path) -> Callable[..., Path]:
    """Write a JSONL file from objects (or raw lines), plus an optional unterminated tail."""

    def write(name: str, lines: list[Any], tail: bytes = b"") -> Path:
        path = tmp_path / name
        path.write_bytes(b"".join(encode(line) for line in lines) + tail)
        return path

    return write
