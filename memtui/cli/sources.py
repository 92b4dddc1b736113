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
    from memtui.cli.listing import listing

    listing(("id", "agent", "format", "files", "pattern"),
            [(s.id, s.agent, s.format, len(files), s.pattern) for s, files in rows])


@sources.command("remove")
@click.argument("source")
@json_option
@click.pass_context
def remove(ctx: click.Context, source: str, as_json: bool) -> None:
    """Remove a source (by id or pattern); what was extracted from it stays."""
    with opened(ctx) as (_home, db):
        removed = store.remove(db, store.find(db, source).id, actor=ACTOR)
    if as_json:
        emit_json({"removed": removed})
    else:
        click.echo(f"removed source {removed.id}: {removed.pattern}")


@sources.command("discover")
@click.option("--agent", help="Add everything for this agent (default: OpenClaw's own agent "
              "ids; Claude Code goes to the default agent).")
@click.option("--openclaw", "openclaw_root", type=click.Path(file_okay=False),
              help="OpenClaw's state folder (default ~/.openclaw).")
@click.option("--claude", "claude_root", type=click.Path(file_okay=False),
              help="Claude Code's folder (default $CLAUDE_CONFIG_DIR or ~/.claude).")
@click.option("--yes", "-y", is_flag=True, help="Add every new source without asking.")
@json_option
@click.pass_context
def discover(ctx: click.Context, agent: str | None, openclaw_root: str | None,
             claude_root: str | None, yes: bool, as_json: bool) -> None:
    """Find OpenClaw and Claude Code transcripts on this machine and offer to add them."""
    import sys
    from pathlib import Path

    from memtui.extract.discover import discover as find

    with opened(ctx) as (home, db):
        found = find(store.list_sources(db), default_agent=home.agent(None),
                     agent=home.agent(agent) if agent else None,
                     openclaw_root=Path(openclaw_root) if openclaw_root else None,
                     claude_root=Path(claude_root) if claude_root else None)
        if as_json and not yes:
            emit_json(found)
            return
        if not found:
            click.echo("no OpenClaw (~/.openclaw/agents/*/sessions) or Claude Code "
                       "(~/.claude/projects) transcripts found")
            return
        added = []
        for f in found:
            label = f"{f.pattern} ({f.format}, agent {f.agent}, {f.files} file(s))"
            if f.known:
                click.echo(f"already a source: {label}" + (f": {f.note}" if f.note else ""))
                continue
            if f.note:
                click.echo(f"skipped: {label}: {f.note}")
                continue
            if f.agent not in home.agents():
                click.echo(f"note: agent {f.agent} is not in memtui.toml [agents] ids")
            if yes or (sys.stdin.isatty() and click.confirm(f"add {label}?", default=True)):
                source = store.add(db, f.pattern, agent=f.agent, fmt=f.format, actor=ACTOR)
                added.append(source)
                click.echo(f"added source {source.id}: {label}")
            else:
                click.echo(f"found: {label}")
        if not added and not yes and not sys.stdin.isatty():
            click.echo("run again with --yes to add them")
        if as_json:
            emit_json({"added": added})
