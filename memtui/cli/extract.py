"""`memtui extract` and `memtui backtest`: run the stenographer over the registered sources."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from memtui.cli.common import emit_json, json_option, opened
from memtui.cli.render import safe
from memtui.errors import ExitCode
from memtui.stores.sources import FORMATS

if TYPE_CHECKING:
    from memtui.db import Database
    from memtui.extract.stenographer import Progress as StenoProgress
    from memtui.extract.stenographer import RunReport
    from memtui.home import Home


@contextmanager
def progress_bar(enabled: bool) -> Iterator[Any]:
    """A transient rich progress bar fed by the stenographer's progress callback."""
    if not enabled:
        yield None
        return
    from rich.progress import (
        BarColumn,
        DownloadColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    bar = Progress(TextColumn("[bold]extracting[/]"), BarColumn(), DownloadColumn(),
                   TextColumn("{task.fields[turns]} turns"), TimeRemainingColumn(),
                   transient=True)
    task = bar.add_task("extract", total=None, turns=0)

    def update(p: StenoProgress) -> None:
        bar.update(task, total=p.bytes_total or None, completed=p.bytes_done, turns=p.turns)

    with bar:
        yield update


def _line(label: str, counts: dict[str, int]) -> str:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return f"  {label:<10} " + (" · ".join(f"{n} {k}" for k, n in items) if items else "none")


def render(report: RunReport) -> None:
    """The human summary: counts per category, what was skipped and why, failures."""
    c = report.counts()
    verb = "Would extract" if report.dry_run else "Extracted"
    files = c["files"]
    read = sum(n for k, n in files.items() if k in ("read", "reset"))
    click.echo(f"{verb} {c['turns_extracted']} of {c['turns_read']} new turns from {read} "
               f"file(s) ({files.get('unchanged', 0)} unchanged; {report.extractor} extractor, "
               f"{report.seconds:.2f} s)")
    o = report.outcome
    click.echo(_line("state", dict(o.added)))
    merged = {"updated": sum(o.updated.values()), "superseded": sum(o.superseded.values()),
              "near-duplicates": o.duplicates, "rejections already known": o.rejections_seen,
              "tombstoned": o.tombstoned}
    merged = {k: v for k, v in merged.items() if v}
    if merged:
        click.echo(_line("merged", merged))
    click.echo(_line("episodes", dict(o.episodes)))
    click.echo(_line("facts", dict(o.facts)))
    if report.skipped:
        click.echo(_line("skipped", dict(report.skipped)))
    if report.unknown:
        click.echo(_line("unknown", {f"{kind!r} lines": n for kind, n in report.unknown.items()}))
    if report.redacted:
        click.echo(_line("redacted", dict(report.redacted)))
    for f in report.files:
        if f.status in ("reset", "read") and f.message:
            click.echo(f"  note       {f.path}: {safe(f.message)}")
    for problem in report.problems[:10]:
        click.echo(f"  problem    {safe(problem)}", err=True)
    if len(report.problems) > 10:
        click.echo(f"  problem    … and {len(report.problems) - 10} more", err=True)
    for path in report.daily_logs:
        click.echo(f"  daily log  {path}")
    if report.failed:
        # One line per file, on stderr; the watermarks stay, the next run retries.
        for f in report.failed:
            click.echo(f"error: {f.path}: {safe(f.message)}", err=True)
        click.echo(f"{len(report.failed)} file(s) failed; their watermarks stay where they "
                   "were and the next run retries them", err=True)


def run_warnings(home: Home, db: Database, agent: str | None, source: str | None) -> list[str]:
    """What the run would otherwise do without a word: no policy.yaml, sources with no files."""
    from memtui.extract.choose import select_sources

    out = []
    if not home.policy_path.exists():
        out.append(f"{home.policy_path} is missing: using the built-in default policy "
                   f"(memtui init --home {home.root} writes it back)")
    for s in select_sources(db, agent, source):
        if not s.files():
            out.append(f"source {s.id} ({s.pattern}, agent {s.agent}) names no files now: "
                       "moved or deleted? (memtui sources remove " + str(s.id) + " if gone)")
    return out


def as_json_report(report: RunReport) -> dict[str, Any]:
    """`extract --json`: the run's counts, with ``problems`` the list and a count beside it."""
    out = report.counts()
    out["problem_count"] = len(report.problems)
    out["problems"] = list(report.problems)
    out["daily_logs"] = report.daily_logs
    return out


def _since(value: str | None) -> Any:
    if not value:
        return None
    from memtui import timeutil

    try:
        return timeutil.parse(value)
    except ValueError as exc:
        raise click.BadParameter(f"{value!r} is not a date (YYYY-MM-DD) or ISO time") from exc


@click.command()
@click.option("--agent", help="Only this agent's sources.")
@click.option("--source", help="Only this source (id, pattern or one of its files).")
@click.option("--since", help="Only extract turns from this date on (YYYY-MM-DD or ISO time); "
              "older ones are left for a later run without --since.")
@click.option("--dry-run", is_flag=True, help="Show what would be captured; write nothing "
              "(works on a scratch copy of memory.db).")
@click.option("--extractor", type=click.Choice(["local", "llm"]),
              help="Override [extract] extractor (llm needs ANTHROPIC_API_KEY).")
@click.option("--wait", is_flag=True, help="Wait for a running extraction instead of failing.")
@json_option
@click.pass_context
def extract(ctx: click.Context, agent: str | None, source: str | None, since: str | None,
            dry_run: bool, extractor: str | None, wait: bool, as_json: bool) -> None:
    """Extract memory from new transcript turns (from each file's watermark).

    Exits 1 when every file it tried to read failed (one error line per file).
    """
    from memtui.extract import stenographer as steno
    from memtui.extract.choose import choose_extractor

    with opened(ctx) as (home, db):
        name, warning = choose_extractor(home, extractor)
        who = home.agent(agent, db) if agent else None
        warnings = [warning] if warning else []
        warnings += run_warnings(home, db, who, source)
        for line in warnings:
            click.echo(f"warning: {line}", err=True)
        options = steno.Options(agent=who, source=source, since=_since(since),
                                dry_run=dry_run, extractor=name, wait_for_lock=wait)
        with progress_bar(not as_json and sys.stderr.isatty()) as update:
            options.progress = update
            report = steno.run(home, db, options)
    if as_json:
        emit_json(as_json_report(report) | {"warnings": warnings})
    else:
        render(report)
    if report.all_failed:
        ctx.exit(ExitCode.BAD_INPUT)


@click.command()
@click.argument("paths", nargs=-1, required=True)
@click.option("--agent", help="The agent these sessions belong to (default agent if unset).")
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Transcript format.")
@click.option("--dry-run", is_flag=True, help="Show what would be seeded; write nothing.")
@json_option
@click.pass_context
def backtest(ctx: click.Context, paths: tuple[str, ...], agent: str | None, fmt: str,
             dry_run: bool, as_json: bool) -> None:
    """Replay historical sessions, oldest first, to seed a home; proposes flows and lessons.

    Each PATH (file or quoted glob) becomes a source of the agent. Running it twice
    changes nothing.
    """
    from memtui.extract import backtest as engine

    with opened(ctx) as (home, db):
        result = engine.backtest(home, db, list(paths), agent=home.agent(agent), fmt=fmt,
                                 dry_run=dry_run)
    if as_json:
        emit_json(result.as_dict())
        return
    render(result.report)
    verb = "would propose" if dry_run else "proposed"
    click.echo(f"Backtest {verb} {len(result.flows)} flow(s) and {len(result.lessons)} "
               f"lesson(s) for review ({result.already_known} already known):")
    for flow in result.flows:
        click.echo(f"  flow    {flow.name}: {safe(' → '.join(flow.steps))}  "
                   f"(seen {flow.support}×, draft)")
    for lesson in result.lessons:
        click.echo(f"  lesson  {safe(lesson.summary)}")
