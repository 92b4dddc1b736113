"""`memtui init`, `memtui doctor` and `memtui demo`: create, check and try a memory home."""

from __future__ import annotations

import click

from memtui.cli.common import emit_json, json_option
from memtui.db import Database
from memtui.errors import ExitCode
from memtui.home import Home


def _root_home(ctx: click.Context) -> Home:
    return Home.resolve((ctx.find_root().obj or {}).get("home"))


@click.command()
@click.option("--agent", "agents", multiple=True, help="Agent id (repeatable; default: main).")
@json_option
@click.pass_context
def init(ctx: click.Context, agents: tuple[str, ...], as_json: bool) -> None:
    """Create a memory home: memtui.toml, policy.yaml, memory.db and agent workspaces.

    Running it again on an existing home changes nothing and says so.
    """
    home = _root_home(ctx)
    report = home.init(list(agents) or None)
    if as_json:
        emit_json({"home": home.root, "created": report.created, "existing": report.existing})
        return
    if not report.created:
        click.echo(f"memory home at {home.root} exists already; nothing changed")
        return
    click.echo(f"memory home at {home.root}")
    for path in report.created:
        shown = path.relative_to(home.root) if path.is_relative_to(home.root) else path
        click.echo(f"  created  {shown}")
    if report.existing:
        click.echo(f"  ({len(report.existing)} existing path(s) left as they were)")


@click.command()
@json_option
@click.pass_context
def doctor(ctx: click.Context, as_json: bool) -> None:
    """Check the home: SQLite, sqlite-vec, FTS5, schema, integrity, WAL, settings, paths.

    Exits non-zero when something is broken, with the fix in words.
    """
    from memtui.upkeep.doctor import diagnose

    report = diagnose(_root_home(ctx))
    if as_json:
        emit_json(report)
    else:
        from rich.markup import escape

        from memtui.cli.common import console
        from memtui.text import show_controls

        out = console()
        marks = {"ok": "[green]ok[/]", "warn": "[yellow]warn[/]", "fail": "[red]FAIL[/]"}
        for check in report.checks:
            detail = escape(show_controls(check.detail))
            out.print(f"{marks[check.status]:>14}  {check.name}: {detail}")
            if check.fix:
                out.print(f"{'':>6}fix: {escape(check.fix)}")
    if not report.ok:
        ctx.exit(ExitCode.NEGATIVE)


@click.command()
@click.option("--keep", type=click.Path(file_okay=False),
              help="Build the demo home in this folder instead of a temporary one.")
@click.option("--agent", default="coordinator", show_default=True,
              help="Whose boot context to print when there is no terminal.")
@json_option
@click.pass_context
def demo(ctx: click.Context, keep: str | None, agent: str, as_json: bool) -> None:
    """Build a fresh home from the bundled sample data and open the console on it.

    Without a terminal (a script, CI) or with --json it prints today's summary, the
    agent's boot context and the command that opens the console, and exits 0. The
    packaged sample data is never changed.
    """
    import sys
    import tempfile
    from pathlib import Path

    from memtui.cli.boot import render_boot
    from memtui.demo import build_demo_home
    from memtui.extract.stenographer import run as extract
    from memtui.serving.boot import build_boot

    root = Path(keep) if keep else Path(tempfile.mkdtemp(prefix="memtui-demo-"))
    home, summary = build_demo_home(root)
    interactive = sys.stdout.isatty() and sys.stdin.isatty() and not as_json
    db = home.open_db()
    try:
        report = extract(home, db)
        if as_json:
            from memtui.cli.extract import as_json_report

            emit_json({"home": home.root, "sample": summary, "extract": as_json_report(report),
                       "boot": build_boot(home, db, agent).as_dict()})
            return
        if interactive:
            db.close()
            from memtui.cli.console import open_console

            open_console(home)
            click.echo(f"demo home kept at {home.root} "
                       f"(open it again: memtui --home {home.root} console)")
            return
        click.echo(f"demo home: {home.root}")
        click.echo("  " + ", ".join(f"{v} {k}" for k, v in summary.items()))
        click.echo(f"  the stenographer read {report.turns_read} transcript turns: "
                   f"{sum(report.outcome.added.values())} state entries, "
                   f"{sum(report.outcome.episodes.values())} episodes, "
                   f"{report.outcome.facts['added']} facts\n")
        _today(db)
        render_boot(build_boot(home, db, agent))
    finally:
        db.close()
    click.echo(f"\nOpen the console: memtui --home {home.root} console")
    click.echo(f"Try: memtui --home {home.root} gate pre ops \"deploy to production\"")
    click.echo(f"     memtui --home {home.root} search --agent {agent} \"why not Redis\"  "
               f"(the first search indexes the home: ~20 s)")


def _today(db: Database) -> None:
    """What the console's overview shows first, as lines: the day's summary."""
    from memtui.stores import pages, review

    live = pages.state_count(db, categories=("decision", "task", "agent_state", "context",
                                             "discovery", "learning"))
    rejected = pages.state_count(db, categories=("rejected",), statuses=("active", "completed"))
    critical = pages.rule_count(db, statuses=("critical",))
    rules = pages.rule_count(db, statuses=("critical", "active"))
    waiting = review.pending(db, limit=1).total
    click.echo(f"Today: {live} active state entries, {rejected} rejections, {rules} live rules "
               f"({critical} critical), {waiting} entries waiting for review\n")
