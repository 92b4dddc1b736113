"""`memtui health`: run the configured infrastructure checks and record their results."""

from __future__ import annotations

import click

from memtui.cli.common import emit_json, json_option, opened
from memtui.cli.render import safe
from memtui.errors import ExitCode


@click.command()
@click.argument("name", required=False)
@json_option
@click.pass_context
def health(ctx: click.Context, name: str | None, as_json: bool) -> None:
    """Run the [health] checks (or one of them); the pre-action gate shows the results.

    Exits 3 when a check fails.
    """
    from memtui.upkeep.health import run_checks

    with opened(ctx) as (home, db):
        results = run_checks(home, db, name)
    if as_json:
        emit_json(results)
    elif not results:
        click.echo("no health checks configured ([health] checks in memtui.toml)")
    for r in results if not as_json else []:
        click.echo(f"{'ok  ' if r.ok else 'FAIL'} {r.name}: {safe(r.message)}")
    if any(not r.ok for r in results):
        ctx.exit(ExitCode.NEGATIVE)
