"""`memtui remember` and `memtui get`: write and read an agent's markdown memory."""

from __future__ import annotations

import sys

import click

from memtui.cli.common import emit_json, home_of, json_option, opened


@click.command()
@click.argument("text")
@click.option("--agent", help="Whose memory (default agent if unset).")
@click.option("--long-term", is_flag=True, help="Append to MEMORY.md, not today's daily log.")
@click.option("--fact", "key", metavar="KEY",
              help="Set the fact KEY to TEXT; a new value supersedes the old one.")
@json_option
@click.pass_context
def remember(ctx: click.Context, text: str, agent: str | None, long_term: bool,
             key: str | None, as_json: bool) -> None:
    """Write TEXT to memory now: memory/YYYY-MM-DD.md, MEMORY.md with --long-term, or
    the current value of a fact with --fact KEY (its old values kept as history).

    TEXT '-' reads the text from standard input.
    """
    from memtui.workspace.memoryfiles import remember as write

    if text == "-":
        text = sys.stdin.read()
    if key is not None:
        if long_term:
            raise click.UsageError("--fact and --long-term do not go together")
        _fact(ctx, agent, key, text, as_json)
        return
    home = home_of(ctx)
    done = write(home, home.agent(agent), text, long_term=long_term)
    if as_json:
        emit_json(done)
    else:
        click.echo(f"remembered in {done.path}:{done.line}")


def _fact(ctx: click.Context, agent: str | None, key: str, text: str, as_json: bool) -> None:
    from memtui.serving.remember import remember as keep

    with opened(ctx) as (home, db):
        kept = keep(home, db, home.agent(agent, db), text, "fact", key=key, actor="cli")
    if as_json:
        emit_json(kept)
    else:
        if kept.stored:
            click.echo(f"remembered as {kept.id}: {kept.reason}")
        else:
            click.echo(f"not written{f' ({kept.id})' if kept.id else ''}: {kept.reason}")
        if kept.redacted:
            click.echo(f"redacted: {', '.join(kept.redacted)}")


@click.command()
@click.argument("path")
@click.option("--agent", help="Whose workspace (default agent if unset).")
@click.option("--from", "start", type=int, default=1, show_default=True,
              help="First line to show (1-based).")
@click.option("--lines", type=int, help="How many lines to show (default: to the end).")
@json_option
@click.pass_context
def get(ctx: click.Context, path: str, agent: str | None, start: int, lines: int | None,
        as_json: bool) -> None:
    """Print lines of MEMORY.md or memory/**/*.md from the agent's workspace."""
    from memtui.workspace.memoryfiles import get as read

    home = home_of(ctx)
    found = read(home, home.agent(agent), path, start=start, lines=lines)
    if as_json:
        emit_json(found)
    elif found.text:
        from memtui.text import show_controls

        click.echo(show_controls(found.text))  # an agent's file may hold anything
