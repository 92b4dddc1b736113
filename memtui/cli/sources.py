"""`memtui sources`: register the transcript files (or globs) the stenographer reads."""

from __future__ import annotations

import click

from memtui.cli.common import ACTOR, emit_json, json_option, opened
from memtui.stores import sources as store


@click.group()
def sources() -> None:
    """Transcript files and globs the stenographer reads, per agent."""


@sources.command("add")
@click.argument("pattern")
@click.option("--format", "fmt", type=click.Choice(store.FORMATS), default="auto",
              show_default=True, help="Transcript format (auto-detected per file).")
@click.option("--agent", help="The agent whose transcripts these are (default agent if unset).")
@json_option
@click.pass_context
def add(ctx: click.Context, pattern: str, fmt: str, agent: str | None, as_json: bool) -> None:
    """Add a transcript file or glob (quote globs so the shell leaves them alone)."""
    with opened(ctx) as (home, db):
        source = store.add(db, pattern, agent=home.agent(agent), fmt=fmt, actor=ACTOR)
        files = source.files()
    if as_json:
        emit_json({"source": source, "files": [str(f) for f in files]})
    else:
        click.echo(f"added source {source.id}: {source.pattern} ({source.format}, agent "
                   f"{source.agent}; {len(files)} file(s) now)")


@sources.command("list")
@click.option("--agent", help="Only this agent's sources.")
@json_option
@click.pass_context
def list_(ctx: click.Context, agent: str | None, as_json: bool) -> None:
    """List sources with the number of files each names now."""
    with opened(ctx) as (_home, db):
        rows = [(s, s.files()) for s in store.list_sources(db, agent)]
    if as_json:
        emit_json([{"source": s, "files": [str(f) for f in files]} for s, files in rows])
        return
    from rich.table import Table

    from memtui.cli.common import console

    table = Table("id", "agent", "format", "files", "pattern")
    for s, files in rows:
        table.add_row(str(s.id), s.agent, s.format, str(len(files)), s.pattern)
    console().print(table)


@sources.command("remove")
@click.argument("source")
@click.pass_context
def remove(ctx: click.Context, source: str) -> None:
    """Remove a source (by id or pattern); what was extracted from it stays."""
    with opened(ctx) as (_home, db):
        removed = store.remove(db, store.find(db, source).id, actor=ACTOR)
    click.echo(f"removed source {removed.id}: {removed.pattern}")
