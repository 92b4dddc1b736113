"""memtui: memory for long-running AI agents, kept by an independent stenographer."""

from __future__ import annotations

__version__ = "0.1.0"
