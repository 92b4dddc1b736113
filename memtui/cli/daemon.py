"""`memtui daemon` and `memtui schedule`: run the schedules of memtui.toml, or print them."""

from __future__ import annotations

from typing import Any

import click

from memtui.cli.common import emit_json, home_of, json_option
from memtui.errors import ExitCode


@click.command()
@click.option("--once", "once", type=click.Choice(["extraction", "maintenance", "heartbeat"]),
              help="Run one job of this kind now and exit (logged like a scheduled run).")
@click.option("--search-service/--no-search-service", default=True, show_default=True,
              help="Serve warm search on <home>/search.sock for the CLI, hooks and MCP.")
@json_option
@click.pass_context
def daemon(ctx: click.Context, once: str | None, search_service: bool, as_json: bool) -> None:
    """Run the schedules in memtui.toml until SIGTERM (one job at a time, each logged),
    and serve warm search on a Unix socket in the home (mode 0600)."""
    from memtui.upkeep import scheduler

    home = home_of(ctx)
    db = home.open_db()
    try:
        if once:
            result = scheduler.run_job(home, db, once)
            if as_json:
                emit_json(result)
            else:
                click.echo(f"{once}: {result.status} {result.message}".rstrip())
            if result.status == "failed":
                ctx.exit(ExitCode.BAD_INPUT)
            return
        if as_json:
            raise click.UsageError("--json goes with --once (the daemon itself runs until "
                                   "stopped)")
        d = scheduler.Daemon(home, db)
        d.install_signal_handlers()
        click.echo(f"memtui daemon started for {home.root} (pid {__import__('os').getpid()})",
                   err=False)
        service = _start_search_service(home) if search_service else None
        try:
            d.run_forever()
        finally:
            if service is not None:
                service.stop()
    finally:
        db.close()


def _start_search_service(home: Any) -> Any:
    """The warm search service in a thread; when it cannot start, say why and go on."""
    from memtui.errors import MemtuiError
    from memtui.search.service import Service

    try:
        service = Service(home)
    except (OSError, MemtuiError) as exc:
        click.echo(f"search service off: {exc} (searches run in each process instead)",
                   err=True)
        return None
    service.serve_in_thread()
    click.echo(f"search service on {service.path}")
    return service


@click.command()
@click.option("--crontab", is_flag=True, help="Print equivalent crontab lines instead.")
@json_option
@click.pass_context
def schedule(ctx: click.Context, crontab: bool, as_json: bool) -> None:
    """Show the schedules and when each runs next (or print them as crontab lines)."""
    from datetime import datetime

    from memtui.upkeep import scheduler

    home = home_of(ctx)
    if crontab:
        click.echo("\n".join(scheduler.crontab_lines(home)))
        return
    now = datetime.now().astimezone()
    rows = [{"kind": s.kind, "cron": s.expr,
             "next": scheduler.next_after(s.expr, now).isoformat(timespec="minutes")}
            for s in scheduler.schedules(home)]
    if as_json:
        emit_json(rows)
        return
    enabled = {r["kind"] for r in rows}
    for r in rows:
        click.echo(f"{r['kind']:<12} {r['cron']:<18} next {r['next']}")
    for kind in scheduler.KINDS:
        if kind not in enabled:
            click.echo(f"{kind:<12} off")
