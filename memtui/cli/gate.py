"""`memtui gate pre|post`: the checks an agent runs before and after an action."""

from __future__ import annotations

import click

from memtui.cli.common import ACTOR, agent_option, emit_json, json_option, one_agent, opened
from memtui.cli.render import dim, lines, safe, title


def _split(words: tuple[str, ...], names: tuple[str, ...],
           agent_opt: str | None) -> tuple[str | None, tuple[str, ...]]:
    """[AGENT] then ``names``: the agent word is optional, so --agent can stand for it."""
    if len(words) == len(names) + 1:
        return one_agent(words[0], agent_opt), words[1:]
    if len(words) == len(names):
        return agent_opt, words
    usage = " ".join(n.upper() for n in names)
    raise click.UsageError(f"expected [AGENT] {usage}, got {len(words)} argument(s)")


@click.group()
def gate() -> None:
    """Pre-/post-action gates."""


@gate.command("pre")
@click.argument("words", nargs=-1, required=True, metavar="[AGENT] ACTION")
@agent_option
@click.option("--budget", type=click.IntRange(50), help="Token budget (default: [gates]).")
@json_option
@click.pass_context
def pre(ctx: click.Context, words: tuple[str, ...], agent_opt: str | None, budget: int | None,
        as_json: bool) -> None:
    """What AGENT must know before ACTION: flow, rejections, rules, state, tools, health.

    The agent is the first word or --agent (default: the first of [agents] ids).
    """
    from memtui.serving.gates import pre_gate

    agent, (action,) = _split(words, ("action",), agent_opt)
    with opened(ctx) as (home, db):
        # On a read-only home the gate is still served, only not recorded for gate post.
        result = pre_gate(home, db, home.agent(agent, db), action, budget=budget,
                          record=not db.readonly)
    if as_json:
        emit_json(result.as_dict())
        return
    out = [title(f"Pre-action gate for {result.agent}: {safe(result.action)}")]
    for section in result.sections:
        if not section.items:
            continue
        out.append("")
        out.append(title(section.title) + dim(f" (~{section.tokens} tokens)"))
        out.extend(f"  {safe(item.text)}" for item in section.items)
    cut = ", ".join(f"{n} {name}" for name, n in result.cut.items())
    out.append("")
    out.append(dim(f"~{result.tokens} of {result.budget} tokens"
                   + (f"; cut to fit: {cut}" if cut else "")
                   + (f"; gate {result.gate_id}" if result.gate_id is not None
                      else "; not recorded: the home is read-only")))
    lines(out)


@gate.command("post")
@click.argument("words", nargs=-1, required=True, metavar="[AGENT] pass|fail SUMMARY")
@agent_option
@click.option("--flow", help="The flow that was followed (default: the pre-gate's).")
@click.option("--lesson", help="What was learned.")
@click.option("--changed", type=click.Choice(["script", "flow", "schema"]),
              help="What was changed to make the lesson permanent.")
@click.option("--violated", type=int, multiple=True, help="A rule id that was broken.")
@click.option("--gate", "gate_id", type=int,
              help="The pre-action gate this grades (default: the latest still open).")
@json_option
@click.pass_context
def post(ctx: click.Context, words: tuple[str, ...], agent_opt: str | None, flow: str | None,
         lesson: str | None, changed: str | None, violated: tuple[int, ...],
         gate_id: int | None, as_json: bool) -> None:
    """Grade a finished task; update flows, rules and state from it.

    The agent is the first word or --agent (default: the first of [agents] ids).
    """
    from memtui.serving.gates import post_gate

    agent, (outcome, summary) = _split(words, ("outcome", "summary"), agent_opt)
    if outcome not in ("pass", "fail"):
        raise click.UsageError(f"the outcome is pass or fail, not {outcome!r}")
    with opened(ctx) as (home, db):
        result = post_gate(home, db, home.agent(agent, db), outcome, summary, flow=flow,
                           lesson=lesson, changed=changed, violated=violated, actor=ACTOR,
                           gate_id=gate_id)
    if as_json:
        emit_json(result.as_dict())
        return
    click.echo(f"{outcome}: {safe(summary)}")
    if result.effectiveness:
        click.echo(f"flow {result.flow}: {result.effectiveness}")
    if result.reinforced:
        click.echo("reinforced rules: " + ", ".join(map(str, result.reinforced)))
    if result.violated:
        click.echo("violations recorded: " + ", ".join(map(str, result.violated)))
    verb = "updated" if result.state_updated else "logged"
    click.echo(f"{verb} state entry {result.state_id}")
    for line in result.advice:
        click.echo(f"note: {safe(line)}")
