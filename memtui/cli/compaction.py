"""`memtui prune`, `memtui flush` and `memtui compact-session`: managing a full window."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from memtui.cli.common import console, emit_json, home_of, json_option

if TYPE_CHECKING:
    from memtui.context.pruning import PruningPlan
    from memtui.home import Home

agent_option = click.option("--agent", "agent", help="The agent (default: the configured one).")
session_option = click.option(
    "--session", type=click.Path(dir_okay=False, path_type=Path),
    help="A transcript file (default: the agent's newest).")


def resolve_agent(ctx: click.Context, agent: str | None) -> tuple[Home, str]:
    home = home_of(ctx)
    db = home.open_db()
    try:
        return home, home.agent(agent, db)
    finally:
        db.close()


def render_plan(plan: PruningPlan, preview: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    out = console()
    head = Text(f"Pruning plan for {plan.agent}", style="bold")
    head.append(f" ({plan.mode}; {plan.reason})", style="dim")
    out.print(head)
    out.print(Text(f"Session: {plan.session}"))
    if preview and (plan.trimmed or plan.cleared):
        table = Table(box=None)
        for col in ("action", "tool", "result of", "tokens before", "after"):
            table.add_column(col, justify="right" if col in ("tokens before", "after")
                             else "left")
        for a in sorted([*plan.trimmed, *plan.cleared], key=lambda a: a.index):
            table.add_row(Text(a.action, style="yellow" if a.action == "trim" else "red"),
                          Text(a.tool), Text(a.label), f"~{a.tokens_before:,}",
                          f"~{a.tokens_after:,}")
        out.print(table)
    out.print(Text(f"{len(plan.trimmed)} trimmed · {len(plan.cleared)} cleared · "
                   f"{plan.protected} protected (last assistant turns) · {plan.images} with "
                   f"images kept · {plan.excluded} excluded by tool globs"))
    out.print(Text(f"Tokens ~{plan.tokens_before:,} → ~{plan.tokens_after:,} "
                   f"({100 * plan.ratio(plan.tokens_before):.0f}% → "
                   f"{100 * plan.ratio(plan.tokens_after):.0f}% of {plan.window:,})",
                   style="bold"))


@click.command()
@agent_option
@session_option
@click.option("--preview", is_flag=True, help="List every result that would be trimmed or "
              "cleared.")
@click.option("--out", "out_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the pruned conversation to this file.")
@json_option
@click.pass_context
def prune(ctx: click.Context, agent: str | None, session: Path | None, preview: bool,
          out_file: Path | None, as_json: bool) -> None:
    """Show which tool results pruning would trim or clear. The transcript is never changed."""
    from memtui.context.pruning import plan_pruning, pruned_context
    from memtui.home import atomic_write

    home, name = resolve_agent(ctx, agent)
    if out_file is not None:
        plan, text = pruned_context(home, name, session)
        atomic_write(out_file, text)
    else:
        plan = plan_pruning(home, name, session)
    if as_json:
        emit_json({**plan.__dict__, "saved": plan.saved,
                   "out": str(out_file) if out_file else None})
        return
    render_plan(plan, preview)
    if out_file is not None:
        click.echo(f"Wrote the pruned conversation to {out_file}")
