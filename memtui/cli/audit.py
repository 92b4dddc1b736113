"""`memtui audit`: who changed what in memory.db, and when."""

from __future__ import annotations

import click

from memtui.cli.common import emit_json, json_option, limit_option, opened


@click.command()
@click.option("--target", help='Only one target, e.g. "rule:12" or "state:40".')
@limit_option(30)
@json_option
@click.pass_context
def audit(ctx: click.Context, target: str | None, limit: int, as_json: bool) -> None:
    """Show the latest audit log entries, newest first."""
    from memtui.stores import audit as store

    with opened(ctx) as (_home, db):
        entries = store.recent(db, target=target, limit=limit)
    if as_json:
        emit_json(entries)
        return
    from memtui.cli.listing import listing

    listing(("at", "actor", "action", "target", "after"),
            [(e.at, e.actor, e.action, e.target, str(e.after)[:80]) for e in entries])
