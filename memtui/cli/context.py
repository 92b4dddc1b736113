"""`memtui context list|detail|json|status`: what fills an agent's context window."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

import click

from memtui.cli.common import (
    console,
    emit_json,
    home_and_agent,
    json_option,
    limit_option,
)

if TYPE_CHECKING:
    from rich.console import Console

    from memtui.context.report import ContextReport, TopItem

agent_option = click.option("--agent", "agent", help="The agent (default: the configured one).")
session_option = click.option(
    "--session", type=click.Path(dir_okay=False, path_type=Path),
    help="A transcript file (default: the agent's newest).")


def tok(n: int, exact: bool = False) -> str:
    return f"{n:,} tok" if exact else f"~{n:,} tok"


def _report(ctx: click.Context, agent: str | None, session: Path | None) -> ContextReport:
    from memtui.context.report import context_report

    home, name = home_and_agent(ctx, agent)
    return context_report(home, name, session)


def render(out: Console, report: ContextReport, *, detail: bool) -> None:
    from rich.table import Table
    from rich.text import Text

    title = Text("Context breakdown", style="bold")
    title.append(f" — {report.agent}", style="bold")
    if report.group:
        title.append("  (group session: private memory excluded)", style="yellow")
    out.print(title)
    out.print(Text(f"Session: {report.session} ({report.format}, {report.messages} messages"
                   + (f", {report.problems} unreadable lines" if report.problems else "") + ")"))
    out.print(Text(f"Model: {report.model or 'not named'} · window {report.window:,} tokens"))
    out.print(Text(f"Workspace: {report.workspace}"))
    out.print(Text(f"Bootstrap max/file: {report.bootstrap_max_chars:,} chars"))
    out.print(Text(f"System prompt: {tok(report.system_prompt_tokens)} "
                   "(workspace files, skills, tool schemas and the rest measured from usage)"))
    files = Table(title="Injected workspace files", title_justify="left", box=None)
    for col in ("file", "status", "raw chars", "injected chars", "tokens"):
        files.add_column(col, justify="right" if "chars" in col or col == "tokens" else "left")
    style = {"OK": "green", "TRUNCATED": "yellow", "MISSING": "dim", "EXCLUDED": "magenta"}
    for f in report.files:
        files.add_row(Text(f.name), Text(f.status, style=style.get(f.status, "")),
                      f"{f.raw_chars:,}", f"{f.injected_chars:,}", f"~{f.tokens:,}")
    out.print(files)
    if report.skills:
        out.print(Text(f"Skills list: {len(report.skills)} skills, "
                       f"{tok(sum(s.tokens for s in report.skills))}"))
    if report.tools:
        out.print(Text(f"Tool schemas: {len(report.tools)} tools, "
                       f"{tok(sum(t.tokens for t in report.tools))}"))
    if report.tools_used:
        out.print(Text("Tools used: " + ", ".join(name for name, _ in report.tools_used[:12])))
    kinds = Table(title="By kind", title_justify="left", box=None)
    kinds.add_column("kind")
    kinds.add_column("tokens", justify="right")
    for kind, n in report.by_kind:
        kinds.add_row(Text(kind), f"~{n:,}")
    out.print(kinds)
    _items(out, "Largest consumers", report.top)
    if detail:
        for kind, items in report.detail:
            _items(out, f"Top {kind}", items)
        if report.skills:
            _named(out, "Top skills (prompt entry size)", [(s.name, s.tokens)
                                                           for s in report.skills])
        if report.tools:
            _named(out, "Top tools (schema size)", [(t.name, t.tokens) for t in report.tools])
    for note in report.notes:
        out.print(Text(f"note: {note}", style="dim"))
    line = Text(report.status_line(), style="bold")
    line.append(f"  [{report.counted_by}]", style="dim")
    out.print(line)
    out.print(Text(f"Flush at {report.flush_at:,} · compaction at {report.compact_at:,} "
                   f"· now {report.state}", style="dim"))


def _items(out: Console, title: str, items: list[TopItem]) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, title_justify="left", box=None)
    for col in ("kind", "item", "tokens"):
        table.add_column(col, justify="right" if col == "tokens" else "left")
    for item in items:
        table.add_row(Text(item.kind), Text(item.label), f"~{item.tokens:,}")
    out.print(table)


def _named(out: Console, title: str, rows: list[tuple[str, int]]) -> None:
    from rich.text import Text

    out.print(Text(title, style="bold"))
    for name, n in sorted(rows, key=lambda r: -r[1])[:30]:
        out.print(Text(f"- {name}: ~{n:,} tok"))


@click.group()
def context() -> None:
    """Inspect an agent's context window (like OpenClaw's /context)."""


@context.command("list")
@agent_option
@session_option
@json_option
@click.pass_context
def list_cmd(ctx: click.Context, agent: str | None, session: Path | None,
             as_json: bool) -> None:
    """What is injected and what fills the window, with sizes."""
    report = _report(ctx, agent, session)
    if as_json:
        emit_json(report.as_dict())
    else:
        render(console(), report, detail=False)


@context.command()
@agent_option
@session_option
@json_option
@click.pass_context
def detail(ctx: click.Context, agent: str | None, session: Path | None, as_json: bool) -> None:
    """The list, plus the top 30 items of each kind."""
    report = _report(ctx, agent, session)
    if as_json:
        emit_json(report.as_dict())
    else:
        render(console(), report, detail=True)


@context.command("json")
@agent_option
@session_option
@click.pass_context
def json_cmd(ctx: click.Context, agent: str | None, session: Path | None) -> None:
    """The full report as JSON."""
    emit_json(_report(ctx, agent, session).as_dict())


@context.command()
@agent_option
@session_option
@click.option("--follow", is_flag=True, help="Keep the line current as the transcript grows.")
@click.option("--interval", type=float, default=1.0, show_default=True,
              help="Seconds between checks with --follow.")
@json_option
@click.pass_context
def status(ctx: click.Context, agent: str | None, session: Path | None, follow: bool,
           interval: float, as_json: bool) -> None:
    """One line: tokens against the window, compactions, where the flush starts."""
    if not follow:
        report = _report(ctx, agent, session)
        if as_json:
            emit_json({"status": report.status_line(), "used": report.used,
                       "window": report.window, "exact": report.exact,
                       "compactions": report.compactions, "flush_at": report.flush_at,
                       "compact_at": report.compact_at, "state": report.state})
        else:
            click.echo(report.status_line())
        return
    from memtui.context.follow import ContextFollower

    home, name = home_and_agent(ctx, agent)
    follower = ContextFollower(home, name, session)
    while True:
        update = follower.poll()
        if update is not None:
            click.echo(update.status_line())
        time.sleep(interval)


@context.command()
@agent_option
@limit_option(20, "Most compactions to list.")
@json_option
@click.pass_context
def compactions(ctx: click.Context, agent: str | None, limit: int, as_json: bool) -> None:
    """The flight recorder: every compaction, the agent's own and memtui's."""
    from rich.text import Text

    from memtui.context.compaction import flight_recorder

    home, name = home_and_agent(ctx, agent)
    records = flight_recorder(home, name, limit=limit)
    if as_json:
        emit_json(records)
        return
    out = console()
    if not records:
        out.print(Text(f"No compactions recorded for {name}."))
    for r in records:
        before = f"~{r.tokens_before:,}" if r.tokens_before is not None else "?"
        after = f"~{r.tokens_after:,}" if r.tokens_after is not None else "?"
        line = Text(f"{r.at}  {r.by:<6} {Path(r.session).name} #{r.entry}  {before} → {after}",
                    style="bold")
        out.print(line)
        if r.flushed:
            out.print(Text(f"  flushed: {r.flushed.get('status')} "
                           f"{r.flushed.get('reason', '')}", style="dim"))
        for item in r.items:
            mark = "in memory" if item["in_memory"] else "NOT in memory"
            out.print(Text(f"  {item['category']:<8} {item['ref']:<14} {mark}: "
                           f"{item['summary']}"))
