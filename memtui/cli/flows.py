"""`memtui flows`: procedural flows, matching an action to a flow, recording runs."""

from __future__ import annotations

import click

from memtui.cli.common import ACTOR, console, emit_json, json_option, opened
from memtui.errors import ExitCode
from memtui.stores import flows as store


@click.group()
def flows() -> None:
    """Flows: procedural flows with trigger phrases, steps and measured effectiveness."""


@flows.command("list")
@click.option("--agent")
@click.option("--status", type=click.Choice(["active", "draft", "retired", "any"]),
              default="active", show_default=True)
@json_option
@click.pass_context
def list_(ctx: click.Context, agent: str | None, status: str, as_json: bool) -> None:
    """List flows with their effectiveness."""
    with opened(ctx) as (_home, db):
        found = store.list_flows(db, agent=agent, status=None if status == "any" else status)
    if as_json:
        emit_json(found)
        return
    from memtui.cli.listing import listing

    listing(("name", "agent", "domain", "runs", "effectiveness", "triggers"),
            [(f.name, f.agent or "*", f.domain, f.times_used,
              f"{round(f.effectiveness * 100)}%" if f.effectiveness is not None else "-",
              "; ".join(f.trigger_phrases)) for f in found])


@flows.command("check")
@click.argument("action")
@click.option("--agent")
@json_option
@click.pass_context
def check(ctx: click.Context, action: str, agent: str | None, as_json: bool) -> None:
    """Find the flow for an action: memtui flows check "deploy to production".

    Exits 3 when no flow matches.
    """
    from memtui.serving.flowmatch import rank_flows

    with opened(ctx) as (_home, db):
        matches = rank_flows(store.list_flows(db, agent=agent), action)
    if as_json:
        emit_json([{"flow": m.flow, "score": m.score, "trigger": m.trigger,
                    "matched": m.matched} for m in matches])
        if not matches:
            ctx.exit(ExitCode.NEGATIVE)
        return
    if not matches:
        click.echo(f"no flow matches {action!r}")
        ctx.exit(ExitCode.NEGATIVE)
    from memtui.cli.render import dim, lines, safe, title

    best = matches[0].flow
    approval = " (needs human approval)" if best.needs_approval else ""
    out = [title(best.name) + approval + f"  matched trigger: {safe(repr(matches[0].trigger))}"]
    out += [f"  {n}. {safe(step)}" for n, step in enumerate(best.steps, 1)]
    out.append(best.effectiveness_line())
    out += [dim(f"also: {m.flow.name} (score {m.score:.2f})") for m in matches[1:]]
    lines(out)


@flows.command("show")
@click.argument("name")
@json_option
@click.pass_context
def show(ctx: click.Context, name: str, as_json: bool) -> None:
    """Show a flow, its steps and its run history."""
    with opened(ctx) as (_home, db):
        flow = store.get(db, name)
        runs = store.runs(db, name)
    if as_json:
        emit_json({"flow": flow, "runs": runs})
        return
    from memtui.cli.listing import literal

    out = console()
    out.print(literal(flow.name, "bold") + literal(f" ({flow.domain}, agent {flow.agent or '*'})"))
    out.print(literal("triggers: " + "; ".join(flow.trigger_phrases)))
    for n, step in enumerate(flow.steps, 1):
        out.print(literal(f"  {n}. {step}"))
    out.print(literal(flow.effectiveness_line()))
    for run in runs[-15:]:
        out.print(literal(f"  {run.at} {run.outcome:<4} {run.agent or ''} {run.note}"))


@flows.command("record")
@click.argument("name")
@click.argument("outcome", type=click.Choice(["pass", "fail"]))
@click.option("--agent")
@click.option("--note", default="")
@json_option
@click.pass_context
def record(ctx: click.Context, name: str, outcome: str, agent: str | None, note: str,
           as_json: bool) -> None:
    """Record one run of a flow: memtui flows record deploy-production pass."""
    with opened(ctx) as (_home, db):
        flow = store.record(db, name, outcome, actor=ACTOR, agent=agent, note=note)
    if as_json:
        emit_json(flow)
    else:
        click.echo(f"{flow.name}: {flow.effectiveness_line()}")


@flows.command("add")
@click.argument("name")
@click.option("--step", "steps", multiple=True, required=True, help="A step (repeat, in order).")
@click.option("--trigger", "triggers", multiple=True, help="A trigger phrase (repeatable).")
@click.option("--domain", default="general", show_default=True)
@click.option("--agent")
@click.option("--needs-approval", is_flag=True)
@json_option
@click.pass_context
def add(ctx: click.Context, name: str, steps: tuple[str, ...], triggers: tuple[str, ...],
        domain: str, agent: str | None, needs_approval: bool, as_json: bool) -> None:
    """Add a flow."""
    with opened(ctx) as (_home, db):
        flow = store.add(db, name, actor=ACTOR, steps=steps, trigger_phrases=triggers,
                         domain=domain, agent=agent, needs_approval=needs_approval)
    if as_json:
        emit_json(flow)
    else:
        click.echo(f"added flow {flow.name} ({len(flow.steps)} steps)")
