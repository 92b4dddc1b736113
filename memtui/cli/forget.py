"""`memtui forget`: delete a memory and bury it, so extraction never recreates it."""

from __future__ import annotations

import click

from memtui.cli.common import ACTOR, emit_json, json_option, opened

STORES = ("state", "fact", "episode")


@click.command()
@click.argument("store", type=click.Choice(STORES))
@click.argument("item_id", metavar="ID", type=int)
@click.option("--reason", default="", help="Why (kept with the tombstone and in the audit).")
@json_option
@click.pass_context
def forget(ctx: click.Context, store: str, item_id: int, reason: str, as_json: bool) -> None:
    """Forget a state entry, a fact or an episode, and leave a tombstone.

    A state entry is archived, a fact is closed, an episode is deleted. Extraction then
    never recreates it: not from the same message, nor from a lightly reworded one
    (see docs/stenographer.md, "Tombstones").
    """
    from memtui.stores import tombstones

    bury = {"state": tombstones.bury_state, "fact": tombstones.bury_fact,
            "episode": tombstones.bury_episode}[store]
    with opened(ctx) as (_home, db):
        stone = bury(db, item_id, actor=ACTOR, reason=reason)
    if as_json:
        # "layer" is the key scripts already read; the value is the store.
        emit_json({"forgot": {"layer": store, "id": item_id}, "tombstone": stone})
        return
    click.echo(f"forgot {store} {item_id}: {stone.text} (tombstone {stone.id}; extraction "
               "will not recreate it)")
