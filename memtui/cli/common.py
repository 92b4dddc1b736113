"""Helpers every command module shares: the home, the database, JSON and rich output."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from memtui.db import Database
from memtui.home import Home

if TYPE_CHECKING:
    from rich.console import Console

ACTOR = "cli"


def home_of(ctx: click.Context) -> Home:
    """The memory home named by --home / MEMTUI_HOME / the default; must exist, and its
    memtui.toml must be valid: every command stops on a broken one, naming file and key."""
    root = ctx.find_root()
    home = Home.resolve((root.obj or {}).get("home")).require()
    home.settings  # noqa: B018  (loading validates)
    return home


@contextmanager
def opened(ctx: click.Context) -> Iterator[tuple[Home, Database]]:
    """The home and an open memory.db, closed afterwards."""
    home = home_of(ctx)
    db = home.open_db()
    try:
        yield home, db
    finally:
        db.close()


def home_and_agent(ctx: click.Context, agent: str | None) -> tuple[Home, str]:
    """The home and the agent a command is about (``agent``, or the home's default),
    checked against memory.db, which is closed again before the command's work starts."""
    with opened(ctx) as (home, db):
        return home, home.agent(agent, db)


def emit_json(value: Any) -> None:
    """Print one JSON document (dataclasses and paths become plain values)."""
    sys.stdout.write(json.dumps(value, default=_plain, ensure_ascii=False, indent=2) + "\n")


def _plain(value: Any) -> Any:
    import dataclasses

    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return str(value)


def console() -> Console:
    """A rich console for human output (imported lazily: JSON paths never pay for rich)."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False)


json_option = click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")

agent_option = click.option("--agent", "agent_opt", metavar="AGENT",
                            help="The agent (default: the first of [agents] ids).")
"""--agent for the commands whose agent is also positional (boot, gate pre, gate post)."""


def limit_option(default: int | None, help_text: str = "Most results to return.") -> Any:
    """A result count spelt --limit or --max-results: every listing accepts both."""
    return click.option("--limit", "--max-results", "limit", type=click.IntRange(1),
                        default=default, show_default=default is not None, help=help_text)


def one_agent(positional: str | None, option: str | None) -> str | None:
    """The agent named positionally or by --agent; naming two different ones is a usage error."""
    if positional and option and positional != option:
        raise click.UsageError(f"two agents given: {positional!r} and --agent {option!r}; "
                               "name one")
    return option or positional
