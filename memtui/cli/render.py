"""Plain-text rendering for the agent-hook commands (gate, boot): fast, no rich import.

Agents read this output, so it is plain text; on a terminal, titles are bold.
"""

from __future__ import annotations

import sys

import click

from memtui.text import show_controls

safe = show_controls
"""Stored text for plain output: control characters shown, never sent to the terminal."""


def title(text: str) -> str:
    return click.style(text, bold=True) if sys.stdout.isatty() else text


def dim(text: str) -> str:
    return click.style(text, dim=True) if sys.stdout.isatty() else text


def lines(out: list[str]) -> None:
    click.echo("\n".join(out))
