"""`memtui forget`: remove a memory from every file of the home and bury it (sealed)."""

from __future__ import annotations

import click

from memtui.cli.common import ACTOR, emit_json, json_option, opened

STORES = ("state", "fact", "episode")


@click.command()
@click.argument("store", type=click.Choice(STORES), required=False)
@click.argument("item_id", metavar="[ID]", type=int, required=False)
@click.option("--query", help="Forget everything holding these words (shows a plan first).")
@click.option("--agent", help="With --query: only this agent's memory.")
@click.option("--confirm", "token", help="With --query: the token the plan printed.")
@click.option("--dry-run", is_flag=True, help="Show what would be deleted; delete nothing.")
@click.option("--reason", default="", help="Why (kept with the tombstone and in the audit).")
@json_option
@click.pass_context
def forget(ctx: click.Context, store: str | None, item_id: int | None, query: str | None,
           agent: str | None, token: str | None, dry_run: bool, reason: str,
           as_json: bool) -> None:
    """Forget a state entry, a fact or an episode (STORE ID), or everything matching --query.

    The words leave memory.db (rows, audit detail; secure_delete, VACUUM, WAL truncated),
    MEMORY.md and the daily logs, and the search index; transcripts are never edited, the
    index keeps forgotten messages out of them. A sealed tombstone (no text) stops
    extraction from recreating it. --query deletes only with the plan's --confirm token.
    """
    from memtui import forgetting
    from memtui.stores import tombstones

    if (store is None) == (query is None) or (store is not None and item_id is None):
        raise click.UsageError("give STORE ID, or --query TEXT")
    with opened(ctx) as (home, db):
        if query is not None:
            plan = forgetting.plan_query(home, db, query, agent=home.agent(agent, db)
                                         if agent else None)
        else:
            assert store is not None and item_id is not None
            plan = forgetting.plan_item(home, db, store, item_id)
        if dry_run or (query is not None and token is None) or plan.empty:
            _show_plan(plan, as_json, asked=query is not None and not dry_run)
            return
        done = forgetting.forget(home, db, plan, token or plan.token, actor=ACTOR, reason=reason)
        stone = tombstones.get(db, done.tombstones[0]) if done.tombstones else None
    if as_json:
        # "layer" is the key scripts already read; the value is the store.
        emit_json({"forgot": {"layer": store, "id": item_id} if store else plan.request,
                   "tombstone": stone, "erased": done.as_dict()})
        return
    chunks = sum(done.index_chunks.values())
    what = f"{store} {item_id}" if store else ", ".join(done.rows) or "nothing in memory.db"
    click.echo(f"forgot {what}: "
               f"{done.markdown_lines} markdown line(s), {chunks} index chunk(s), "
               f"{done.audit_rows_scrubbed} audit row(s) scrubbed; sealed tombstone(s) "
               f"{', '.join(map(str, done.tombstones)) or '-'} keep extraction from "
               "recreating it")
    if "busy" in done.checkpoints.values():
        click.echo("note: another process held a read open, so a write-ahead log could not be "
                   "truncated yet; run the forget again later to truncate it", err=True)


def visible(text: str) -> str:
    """Control characters shown as escapes: stored text never drives the terminal."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def _show_plan(plan: object, as_json: bool, *, asked: bool) -> None:
    from memtui.forgetting import Plan

    assert isinstance(plan, Plan)
    if as_json:
        emit_json({"plan": plan.as_dict()})
        return
    if plan.empty:
        click.echo(f"nothing to forget for {plan.request}")
        return
    click.echo(f"would forget ({plan.request}):")
    for r in plan.rows:
        click.echo(f"  {r.layer} {r.id} [{r.agent}]: {visible(r.text)}")
    for m in plan.lines:
        click.echo(f"  {m.agent}/{m.path}:{m.line}: {visible(m.text)}")
    for agent, n in plan.index_chunks.items():
        if n:
            click.echo(f"  index/{agent}: {n} chunk(s)")
    if asked:
        click.echo(f"to delete all of this, run again with --confirm {plan.token}")
