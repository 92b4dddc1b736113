"""`memtui hooks install|uninstall claude-code` and `memtui hook claude-code EVENT`."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from memtui.cli.common import emit_json, home_of, json_option

TARGETS = ("claude-code",)


def _where(project: str | None, user: bool) -> Path:
    from memtui.integrations.claude_settings import settings_path

    if project is None and not user:
        project = "."
    return settings_path(Path(project) if project else None, user)


@click.group()
def hooks() -> None:
    """Put memtui into an agent's hooks (Claude Code), or take it out again."""


@hooks.command("install")
@click.argument("target", type=click.Choice(TARGETS))
@click.option("--project", type=click.Path(file_okay=False),
              help="The project folder (its .claude/settings.json); default: here.")
@click.option("--user", is_flag=True, help="The user's ~/.claude/settings.json instead.")
@click.option("--agent", help="The memtui agent these sessions belong to.")
@json_option
@click.pass_context
def install(ctx: click.Context, target: str, project: str | None, user: bool,
            agent: str | None, as_json: bool) -> None:
    """Merge memtui's hooks into Claude Code's settings.json (a backup is made first)."""
    from memtui.integrations import claude_settings

    home = home_of(ctx)
    change = claude_settings.install(home, home.agent(agent), _where(project, user))
    if as_json:
        emit_json(change)
    elif change.changed:
        click.echo(f"installed memtui hooks for {', '.join(change.events)} in {change.path}"
                   + (f" (backup: {change.backup})" if change.backup else ""))
    else:
        click.echo(f"memtui hooks are already installed in {change.path}")


@hooks.command("uninstall")
@click.argument("target", type=click.Choice(TARGETS))
@click.option("--project", type=click.Path(file_okay=False),
              help="The project folder (its .claude/settings.json); default: here.")
@click.option("--user", is_flag=True, help="The user's ~/.claude/settings.json instead.")
@json_option
@click.pass_context
def uninstall(ctx: click.Context, target: str, project: str | None, user: bool,
              as_json: bool) -> None:
    """Remove exactly the hooks memtui added; the file is left as it was."""
    from memtui.integrations import claude_settings

    change = claude_settings.uninstall(home_of(ctx), _where(project, user))
    if as_json:
        emit_json(change)
    elif not change.changed:
        click.echo(f"no memtui hooks recorded for {change.path}")
    else:
        how = ("restored byte for byte" if change.restored else
               "removed (memtui had created it)" if change.removed_file else
               "other changes kept")
        click.echo(f"removed memtui hooks from {change.path}: {how}")


@click.command()
@click.argument("target", type=click.Choice(TARGETS))
@click.argument("event")
@click.option("--agent", help="The memtui agent of this session.")
@click.pass_context
def hook(ctx: click.Context, target: str, event: str, agent: str | None) -> None:
    """Run one Claude Code hook event (the payload on stdin); always exits 0.

    What it injects goes to stdout in the shape Claude Code reads for the event; on any
    failure nothing is injected and the reason goes to <home>/hooks.log.
    """
    from memtui.home import Home
    from memtui.integrations.claude_hooks import render, run, write_log

    root = ctx.find_root().obj or {}
    home = Home.resolve(root.get("home"))
    try:
        payload = json.loads(sys.stdin.read() or "{}")
        if not isinstance(payload, dict):
            raise ValueError("the payload is not a JSON object")
        home.require()
        result = run(home, home.agent(agent), event, payload)
    except Exception as exc:  # never block the agent: log why, inject nothing
        write_log(home, f"{event}: failed before it ran: {type(exc).__name__}: {exc}")
        return
    write_log(home, result.log)
    text = render(result)
    if text:
        sys.stdout.write(text + "\n")
