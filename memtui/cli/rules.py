"""`memtui rules`: list, add, reinforce, promote, demote, retire and revive scored rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from memtui.cli.common import ACTOR, console, emit_json, json_option, limit_option, opened
from memtui.stores import rules as store


def _table(rules: list[store.Rule]) -> None:
    from memtui.cli.listing import listing

    listing(("id", "score", "status", "viol", "agent", "domain", "reinforced", "rule"),
            [(r.id, f"{r.score:.1f}", r.status, r.violations, r.agent or "*", r.domain,
              r.last_reinforced[:10], r.rule) for r in rules])


@click.group()
def rules() -> None:
    """Rules: scored, decaying behavioural rules.

    Bands: 9-10 critical (never decays; only a human may retire it), 7-8 loaded at boot,
    5-6 on demand, 3-4 dormant, 1-2 retired (kept; can be revived).
    """


@rules.command("list")
@click.option("--status", type=click.Choice(store.STATUSES))
@click.option("--agent", help="Rules for this agent (including rules for every agent).")
@click.option("--domain")
@click.option("--min-score", type=float)
@click.option("--boot", is_flag=True, help="Only what the agent loads at boot (needs --agent).")
@limit_option(100)
@json_option
@click.pass_context
def list_(ctx: click.Context, status: str | None, agent: str | None, domain: str | None,
          min_score: float | None, boot: bool, limit: int, as_json: bool) -> None:
    """List rules, highest score first."""
    with opened(ctx) as (home, db):
        if boot:
            found = store.boot_rules(db, home.agent(agent, db), home.settings.boot.max_rules)
        else:
            found = store.list_rules(db, status=status, agent=agent, domain=domain,
                                     min_score=min_score, limit=limit)
    if as_json:
        emit_json(found)
    else:
        _table(found)


@rules.command("show")
@click.argument("rule_id", type=int)
@json_option
@click.pass_context
def show(ctx: click.Context, rule_id: int, as_json: bool) -> None:
    """Show one rule and its audit history."""
    from memtui.stores import audit

    with opened(ctx) as (_home, db):
        rule = store.get(db, rule_id)
        history = audit.recent(db, target=f"rule:{rule_id}")
    if as_json:
        emit_json({"rule": rule, "history": history})
        return
    from memtui.cli.listing import literal

    out = console()
    for key, value in rule.as_dict().items():
        out.print(literal(f"{key:>16} ", "bold") + literal(value))
    out.print("\n[bold]history[/]")
    for h in history:
        out.print(literal(f"  {h.at} {h.actor:<11} {h.action:<16} {h.before} -> {h.after}"))


@rules.command("add")
@click.argument("text")
@click.option("--score", type=click.FloatRange(1, 10), default=5.0, show_default=True)
@click.option("--domain", default="general", show_default=True)
@click.option("--agent", help="Only for this agent (default: every agent).")
@json_option
@click.pass_context
def add(ctx: click.Context, text: str, score: float, domain: str, agent: str | None,
        as_json: bool) -> None:
    """Add a rule by hand."""
    with opened(ctx) as (_home, db):
        rule = store.add(db, text, actor=ACTOR, score=score, domain=domain, agent=agent)
    if as_json:
        emit_json(rule)
    else:
        click.echo(f"added rule {rule.id} [{rule.score:.1f} {rule.status}]")


def _change(name: str, fn: Callable[..., store.Rule], doc: str, human_flag: bool = False,
            ) -> None:
    @click.argument("rule_ids", type=int, nargs=-1, required=True)
    @json_option
    @click.pass_context
    def command(ctx: click.Context, rule_ids: tuple[int, ...], as_json: bool,
                **kwargs: Any) -> None:
        with opened(ctx) as (_home, db), db.write():  # all of the ids, or none
            changed = [fn(db, rule_id, actor=ACTOR, **kwargs) for rule_id in rule_ids]
        if as_json:
            emit_json(changed)
            return
        for rule in changed:
            click.echo(f"rule {rule.id}: {rule.status}, score {rule.score:.1f}")

    command.__doc__ = doc
    if human_flag:
        command = click.option(
            "--human", is_flag=True,
            help="I am a human and I mean it: required for a critical rule.")(command)
    rules.command(name)(command)


_change("reinforce", store.reinforce, "Raise rules' scores and restart their decay clocks.")
_change("violate", store.violate, "Record that an agent broke these rules.")
_change("promote", store.promote, "Move rules up one band (two points).")
_change("demote", store.demote, "Move rules down one band.", human_flag=True)
_change("critical", store.make_critical, "Make rules critical: always loaded, never decaying.")
_change("retire", store.retire, "Retire rules (kept; can be revived).", human_flag=True)
_change("revive", store.revive, "Bring retired or dormant rules back as active.")
