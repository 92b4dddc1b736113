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


@click.command()
@agent_option
@session_option
@click.option("--force", is_flag=True, help="Flush now, even below the threshold or when this "
              "compaction cycle was flushed already.")
@json_option
@click.pass_context
def flush(ctx: click.Context, agent: str | None, session: Path | None, force: bool,
          as_json: bool) -> None:
    """Extract the region about to be compacted into memory, and prove nothing was left."""
    from rich.text import Text

    from memtui.context.flush import flush as run_flush

    home, name = resolve_agent(ctx, agent)
    report = run_flush(home, name, session, force=force)
    if as_json:
        emit_json({**report.__dict__, "all_below": report.all_below})
        return
    out = console()
    head = Text(f"Flush for {report.agent}: {report.status}", style="bold")
    head.append(f" — {report.reason}", style="dim")
    out.print(head)
    out.print(Text(f"Session: {report.session} · cycle {report.cycle} · ~{report.tokens:,} "
                   f"tokens (flush at {report.flush_at:,})"))
    for m in report.region:
        line = Text(f"  line {m.line:>5} {m.role:<9} {m.id:<12} ")
        line.append("below the watermark" if m.below_watermark else "ABOVE the watermark",
                    style="green" if m.below_watermark else "red")
        if m.captured:
            line.append(" · " + ", ".join(m.captured), style="cyan")
        out.print(line)
    for title, items in (("Decisions captured", report.decisions),
                         ("Rejections captured", report.rejections)):
        if items:
            out.print(Text(title, style="bold"))
            for c in items:
                out.print(Text(f"  {c.ref}: {c.summary}"))


@click.command("compact-session")
@click.argument("file", type=click.Path(dir_okay=False, exists=True, path_type=Path))
@click.option("--apply", is_flag=True, help="Write it: append a compaction entry (OpenClaw) "
              "after a backup, or write the compacted context to a file (other formats).")
@agent_option
@json_option
@click.pass_context
def compact_session(ctx: click.Context, file: Path, apply: bool, agent: str | None,
                    as_json: bool) -> None:
    """Compact a session: flush first, then summarise the older region."""
    from rich.text import Text

    from memtui.context.compaction import compact_session as run

    home = home_of(ctx)
    name = resolve_agent(ctx, agent)[1] if agent else None
    result = run(home, file, apply=apply, agent=name)
    if as_json:
        emit_json(result)
        return
    out = console()
    out.print(Text(f"Compaction of {result.session.name} ({result.agent}): {result.status}",
                   style="bold"))
    out.print(Text(result.message))
    if result.flush is not None:
        out.print(Text(f"Flush: {result.flush.status} — {result.flush.reason}", style="dim"))
    if result.summary:
        out.print(Text(f"Tokens ~{result.tokens_before:,} → ~{result.tokens_after:,}; "
                       f"{result.summarised_messages} messages summarised; first kept: "
                       f"{result.first_kept}"))
        out.print(Text(result.summary))
    if not apply and result.status == "preview":
        out.print(Text("Preview only: add --apply to write it.", style="dim"))
