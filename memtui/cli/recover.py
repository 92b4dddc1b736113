"""`memtui recover` and `memtui heartbeat`: reloading context, and waking a stalled agent."""

from __future__ import annotations

import click

from memtui.cli.common import (
    agent_option,
    console,
    emit_json,
    home_and_agent,
    json_option,
    one_agent,
)
from memtui.errors import ExitCode


@click.command()
@click.argument("agent", required=False)
@agent_option
@click.option("--tier", type=click.IntRange(0, 3), default=0, show_default=True,
              help="0 state + rejections, 1 + last 30 messages, 2 + today's recap, 3 + the "
                   "full log.")
@click.option("--budget", type=click.IntRange(min=0), help="Most tokens to print (default: "
              "[context] recovery_budget_tokens).")
@click.option("--group", "group", flag_value=True, default=None,
              help="Assemble for a group or shared session (no private memory).")
@click.option("--markdown", is_flag=True, help="Print the context as markdown for an agent.")
@json_option
@click.pass_context
def recover(ctx: click.Context, agent: str | None, agent_opt: str | None, tier: int,
            budget: int | None, group: bool | None, markdown: bool, as_json: bool) -> None:
    """Print AGENT's recovery context for a tier, within a token budget.

    A tier that would push the window past the flush threshold is refused (exit 3)."""
    from rich.text import Text

    from memtui.context.recovery import recover as run

    home, name = home_and_agent(ctx, one_agent(agent, agent_opt))
    result = run(home, name, tier, budget=budget, group=group)
    if as_json:
        emit_json(result)
    elif markdown and not result.refused:
        click.echo(result.as_markdown(), nl=False)
    else:
        out = console()
        head = Text(f"Recovery for {result.agent}, tier {result.tier}", style="bold")
        head.append(f" (~{result.tokens:,} tokens of {result.budget:,}"
                    + (", group session" if result.group else "") + ")", style="dim")
        out.print(head)
        for title, lines in result.sections:
            out.print(Text(f"\n{title}", style="bold"))
            for line in lines:
                out.print(Text(f"  {line}"))
        for note in result.cut:
            out.print(Text(f"note: {note}", style="dim"))
        if result.refused:
            out.print(Text(result.reason, style="red"))
    if result.refused:
        ctx.exit(ExitCode.NEGATIVE)


@click.command()
@click.option("--agent", "agent", help="The agent (default: the configured one).")
@click.option("--deliver", type=click.Choice(["dry-run", "command", "anthropic"]),
              help="dry-run shows what would be sent (default: [heartbeat] deliver).")
@click.option("--costs", is_flag=True, help="Show heartbeat runs, tokens and cost per day.")
@json_option
@click.pass_context
def heartbeat(ctx: click.Context, agent: str | None, deliver: str | None, costs: bool,
              as_json: bool) -> None:
    """Wake the agent with its HEARTBEAT.md and where it left off, or stay quiet."""
    from rich.text import Text

    from memtui.context.heartbeat import heartbeat_costs, run_heartbeat

    home, name = home_and_agent(ctx, agent)
    out = console()
    if costs:
        days = heartbeat_costs(home, name)
        if as_json:
            emit_json(days)
            return
        for d in days:
            out.print(Text(f"{d.day}  {d.runs:>3} runs  ~{d.tokens:,} tokens  "
                           f"${d.cost_usd:.4f}"))
        if not days:
            out.print(Text(f"No heartbeat runs for {name} in the last 7 days."))
        return
    result = run_heartbeat(home, name, deliver or home.settings.heartbeat.deliver)
    if as_json:
        emit_json(result)
    else:
        head = Text(f"Heartbeat for {result.agent} ({result.deliver}): {result.outcome}",
                    style="bold")
        head.append(f" — {result.reason}", style="dim")
        out.print(head)
        if result.decision:
            out.print(Text(f"Decision: {result.decision}"))
        if result.outcome == "dry-run":
            out.print(Text(result.prompt))
        if result.shown:
            out.print(Text(result.shown, style="yellow"))
        if result.tokens_in or result.tokens_out:
            mark = "" if result.exact_tokens else "~"
            out.print(Text(f"Tokens {mark}{result.tokens_in:,} in, {mark}{result.tokens_out:,} "
                           f"out · est. ${result.cost_usd:.4f}", style="dim"))
    if result.outcome == "failed":
        ctx.exit(1)
