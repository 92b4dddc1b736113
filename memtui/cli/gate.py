"""`memtui gate pre|post`: the checks an agent runs before and after an action."""

from __future__ import annotations

import click

from memtui.cli.common import ACTOR, emit_json, json_option, opened
from memtui.cli.render import dim, lines, title


@click.group()
def gate() -> None:
    """Pre-/post-action gates (layer 3)."""


@gate.command("pre")
@click.argument("agent")
@click.argument("action")
@click.option("--budget", type=click.IntRange(50), help="Token budget (default: [gates]).")
@json_option
@click.pass_context
def pre(ctx: click.Context, agent: str, action: str, budget: int | None, as_json: bool) -> None:
    """What AGENT must know before ACTION: flow, rejections, rules, state, tools, health."""
    from memtui.serving.gates import pre_gate

    with opened(ctx) as (home, db):
        result = pre_gate(home, db, home.agent(agent, db), action, budget=budget)
    if as_json:
        emit_json(result.as_dict())
        return
    out = [title(f"Pre-action gate for {result.agent}: {result.action}")]
    for section in result.sections:
        if not section.items:
            continue
        out.append("")
        out.append(title(section.title) + dim(f" (~{section.tokens} tokens)"))
        out.extend(f"  {item.text}" for item in section.items)
    cut = ", ".join(f"{n} {name}" for name, n in result.cut.items())
    out.append("")
    out.append(dim(f"~{result.tokens} of {result.budget} tokens"
                   + (f"; cut to fit: {cut}" if cut else "") + f"; gate {result.gate_id}"))
    lines(out)


@gate.command("post")
@click.argument("agent")
@click.argument("outcome", type=click.Choice(["pass", "fail"]))
@click.argument("summary")
@click.option("--flow", help="The flow that was followed (default: the pre-gate's).")
@click.option("--lesson", help="What was learned.")
@click.option("--changed", type=click.Choice(["script", "flow", "schema"]),
              help="What was changed to make the lesson permanent.")
@click.option("--violated", type=int, multiple=True, help="A rule id that was broken.")
@click.option("--gate", "gate_id", type=int,
              help="The pre-action gate this grades (default: the latest still open).")
@json_option
@click.pass_context
def post(ctx: click.Context, agent: str, outcome: str, summary: str, flow: str | None,
         lesson: str | None, changed: str | None, violated: tuple[int, ...],
         gate_id: int | None, as_json: bool) -> None:
    """Grade a finished task; update flows, rules and state from it."""
    from memtui.serving.gates import post_gate

    with opened(ctx) as (home, db):
        result = post_gate(home, db, home.agent(agent, db), outcome, summary, flow=flow,
                           lesson=lesson, changed=changed, violated=violated, actor=ACTOR,
                           gate_id=gate_id)
    if as_json:
        emit_json(result.as_dict())
        return
    click.echo(f"{outcome}: {summary}")
    if result.effectiveness:
        click.echo(f"flow {result.flow}: {result.effectiveness}")
    if result.reinforced:
        click.echo("reinforced rules: " + ", ".join(map(str, result.reinforced)))
    if result.violated:
        click.echo("violations recorded: " + ", ".join(map(str, result.violated)))
    verb = "updated" if result.state_updated else "logged"
    click.echo(f"{verb} state entry {result.state_id}")
    for line in result.advice:
        click.echo(f"note: {line}")
