"""`memtui state`: list, add, supersede, complete and archive state entries."""

from __future__ import annotations

from collections.abc import Callable

import click

from memtui.cli.common import ACTOR, console, emit_json, json_option, limit_option, opened
from memtui.stores import state as store


def _table(entries: list[store.StateEntry]) -> None:
    from memtui.cli.listing import listing

    listing(("id", "date", "agent", "category", "domain", "status", "summary"),
            [(e.id, e.created_at[:10], e.agent, e.category, e.domain, e.status, e.summary)
             for e in entries])


@click.group()
def state() -> None:
    """State: decisions, tasks, rejections, discoveries, learnings and context."""


@state.command("list")
@click.option("--agent")
@click.option("--domain")
@click.option("--category", type=click.Choice(store.CATEGORIES))
@click.option("--status", type=click.Choice([*store.STATUSES, "any"]), default="active",
              show_default=True)
@click.option("--since", help="ISO date or time.")
@click.option("--until", help="ISO date or time.")
@click.option("--text", "text_", help="Only entries whose summary or detail contains this.")
@limit_option(50)
@json_option
@click.pass_context
def list_(ctx: click.Context, agent: str | None, domain: str | None, category: str | None,
          status: str, since: str | None, until: str | None, text_: str | None, limit: int,
          as_json: bool) -> None:
    """List entries, newest first."""
    flt = store.StateFilter(agent, domain, category, None if status == "any" else status,
                            since, until, text_, limit)
    with opened(ctx) as (_home, db):
        entries = store.list_entries(db, flt)
    if as_json:
        emit_json(entries)
    else:
        _table(entries)


@state.command("show")
@click.argument("entry_id", type=int)
@json_option
@click.pass_context
def show(ctx: click.Context, entry_id: int, as_json: bool) -> None:
    """Show one entry and its supersede chain (oldest first)."""
    with opened(ctx) as (_home, db):
        entry = store.get(db, entry_id)
        chain = store.chain(db, entry_id)
    if as_json:
        emit_json({"entry": entry, "chain": chain})
        return
    from memtui.cli.listing import literal

    out = console()
    for key, value in entry.as_dict().items():
        out.print(literal(f"{key:>14} ", "bold") + literal(value))
    if len(chain) > 1:
        out.print("\n[bold]supersede chain[/] (oldest first)")
        for e in chain:
            mark = "->" if e.id == entry_id else "  "
            out.print(literal(f" {mark} {e.id} {e.created_at[:10]} [{e.status}] {e.summary}"))


def _new(agent: str, category: str, summary: str, domain: str, detail: str,
         confidence: float) -> store.NewState:
    return store.NewState(agent=agent, category=category, summary=summary, domain=domain,
                          detail=detail, confidence=confidence)


_add_options = [
    click.option("--agent"),
    click.option("--domain", default="general", show_default=True),
    click.option("--detail", default=""),
    click.option("--confidence", type=float, default=1.0, show_default=True),
    json_option,
]


def _with_add_options(fn):  # type: ignore[no-untyped-def]
    for option in reversed(_add_options):
        fn = option(fn)
    return fn


@state.command("add")
@click.argument("category", type=click.Choice(store.CATEGORIES))
@click.argument("summary")
@_with_add_options
@click.pass_context
def add(ctx: click.Context, category: str, summary: str, agent: str | None, domain: str,
        detail: str, confidence: float, as_json: bool) -> None:
    """Add an entry: memtui state add decision "Stay on nginx" --domain infra."""
    with opened(ctx) as (home, db):
        entry = store.add(db, _new(home.agent(agent), category, summary, domain, detail,
                                   confidence), actor=ACTOR)
    if as_json:
        emit_json(entry)
    else:
        click.echo(f"added state entry {entry.id}")


@state.command("supersede")
@click.argument("old_id", type=int)
@click.argument("summary")
@click.option("--category", type=click.Choice(store.CATEGORIES),
              help="Default: the old entry's category.")
@_with_add_options
@click.pass_context
def supersede(ctx: click.Context, old_id: int, summary: str, category: str | None,
              agent: str | None, domain: str, detail: str, confidence: float,
              as_json: bool) -> None:
    """Replace an entry with a newer one; the old one stays in the chain."""
    with opened(ctx) as (_home, db):
        old = store.get(db, old_id)
        entry = store.supersede(db, old_id, _new(
            agent or old.agent, category or old.category, summary,
            domain if domain != "general" else old.domain, detail, confidence), actor=ACTOR)
    if as_json:
        emit_json(entry)
    else:
        click.echo(f"state entry {entry.id} supersedes {old_id}")


def _status_command(
    name: str, fn: Callable[..., store.StateEntry], help_text: str
) -> click.Command:
    @click.argument("entry_id", type=int)
    @json_option
    @click.pass_context
    def command(ctx: click.Context, entry_id: int, as_json: bool) -> None:
        with opened(ctx) as (_home, db):
            entry = fn(db, entry_id, actor=ACTOR)
        if as_json:
            emit_json(entry)
        else:
            click.echo(f"state entry {entry.id} is {entry.status}")

    command.__doc__ = help_text
    return state.command(name)(command)


_status_command("complete", store.complete, "Mark an active entry completed.")
_status_command("archive", store.archive, "Archive an entry.")
_status_command("reopen", store.reopen, "Make a completed or archived entry active again.")


@state.command("update")
@click.argument("entry_id", type=int)
@click.option("--summary")
@click.option("--detail")
@click.option("--domain")
@click.option("--confidence", type=float)
@json_option
@click.pass_context
def update(ctx: click.Context, entry_id: int, summary: str | None, detail: str | None,
           domain: str | None, confidence: float | None, as_json: bool) -> None:
    """Correct an entry's words in place."""
    with opened(ctx) as (_home, db):
        entry = store.update(db, entry_id, actor=ACTOR, summary=summary, detail=detail,
                             domain=domain, confidence=confidence)
    if as_json:
        emit_json(entry)
    else:
        click.echo(f"updated state entry {entry.id}")
