"""`memtui search`, `memtui index`, `memtui recall`: thin commands over memtui.search."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from memtui.cli.common import console, emit_json, home_of, json_option, limit_option
from memtui.errors import MemtuiError, NotFound

SOURCE_CHOICES = ("memory", "sessions", "episodes", "facts")


def _read_batch(path: str) -> list[Any]:
    from memtui.search.engine import BatchQuery

    source = sys.stdin if path == "-" else None
    if source is None:
        file = Path(path)
        if not file.is_file():
            raise NotFound(f"no batch file at {file}")
        lines = file.read_text(encoding="utf-8").splitlines()
    else:
        lines = source.read().splitlines()
    out = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise MemtuiError(f"{path}:{number}: not JSON ({exc.msg})") from exc
        if not isinstance(row, dict) or not isinstance(row.get("query"), str):
            raise MemtuiError(f"{path}:{number}: expected an object with a string 'query'")
        out.append(BatchQuery(id=str(row.get("id", number)), query=row["query"]))
    return out


@click.command()
@click.argument("query", required=False)
@click.option("--agent", help="Whose memory to search (default agent if unset).")
@click.option("--in", "parts", multiple=True, type=click.Choice(SOURCE_CHOICES),
              help="Search only this part of the index (repeat for several).")
@click.option("--source", "old_parts", multiple=True, type=click.Choice(SOURCE_CHOICES),
              hidden=True)  # the spelling before --in; the LoCoMo eval contract uses it
@limit_option(None, "Most hits to return ([search] max_results).")
@click.option("--min-score", type=float, help="Drop hits below this ([search] min_score).")
@click.option("--batch", "batch", type=str,
              help="JSONL file of {\"id\", \"query\"} lines ('-' for stdin); one answer each.")
@click.option("--explain", is_flag=True, help="Show vector score, keyword score and weights.")
@json_option
@click.pass_context
def search(ctx: click.Context, query: str | None, agent: str | None, parts: tuple[str, ...],
           old_parts: tuple[str, ...], limit: int | None, min_score: float | None,
           batch: str | None, explain: bool, as_json: bool) -> None:
    """Search the agent's memory files, transcripts, episodes and facts."""
    from memtui.search import engine

    home = home_of(ctx)
    name = home.agent(agent)
    sources = (*parts, *old_parts)
    opts = engine.options(home, sources=sources or None, max_results=limit,
                          min_score=min_score)
    if batch is not None:
        if query is not None:
            raise MemtuiError("give a QUERY or --batch FILE, not both")
        queries = _read_batch(batch)
        for item, response in engine.search_batch(home, name, queries, opts):
            if as_json:
                sys.stdout.write(json.dumps(response.as_dict(explain, id=item.id),
                                            ensure_ascii=False) + "\n")
            else:
                _render(response, explain, title=f"[{item.id}] {item.query}")
        return
    if query is None:
        raise MemtuiError("give a QUERY to search for (or --batch FILE)")
    from memtui.search.service import search_response

    # Through `memtui daemon`'s warm searcher when it answers; "served_by" says which.
    response, served = search_response(home, name, query, opts)
    if as_json:
        emit_json({**response.as_dict(explain), **served})
    else:
        _render(response, explain)


def _escape(text: str) -> str:
    """Stored text inside markup: tags shown literally, control characters visible."""
    from rich.markup import escape

    from memtui.text import show_controls

    return escape(show_controls(text))


def _render(response: Any, explain: bool, title: str | None = None) -> None:
    escape = _escape

    out = console()
    if title:
        out.print(f"[bold]{escape(title)}[/bold]")
    if response.fallback:
        out.print(f"[yellow]fallback: {response.fallback}[/yellow]")
    if not response.results:
        out.print("no results")
        return
    for n, hit in enumerate(response.results, start=1):
        where = hit.path if not hit.start_line else f"{hit.path}:{hit.start_line}-{hit.end_line}"
        line = f"[bold]{n}.[/bold] {escape(where)}  [dim]{hit.source} {hit.score:.3f}[/dim]"
        if hit.message_ids:
            line += f"  [dim]messages {escape(', '.join(hit.message_ids[:6]))}[/dim]"
        out.print(line)
        if explain:
            w = response.weights
            v = "-" if hit.vector_score is None else f"{hit.vector_score:.3f}"
            t = "-" if hit.text_score is None else f"{hit.text_score:.3f}"
            out.print(f"   [dim]vector {v} × {w['vector']:.2f} + keyword {t} × "
                      f"{w['text']:.2f} ({response.fusion})[/dim]")
        out.print("   " + escape(hit.snippet.replace("\n", "\n   ")))


@click.group(invoke_without_command=True)
@click.option("--agent", help="Whose index (default agent if unset).")
@click.option("--rebuild", is_flag=True, help="Rebuild from scratch (cached embeddings reused).")
@json_option
@click.pass_context
def index(ctx: click.Context, agent: str | None, rebuild: bool, as_json: bool) -> None:
    """Bring the agent's search index up to date; `memtui index status` reports on it."""
    if ctx.invoked_subcommand is not None:
        return
    from memtui.search import engine

    home = home_of(ctx)
    name = home.agent(agent)
    if as_json or not sys.stderr.isatty():
        report = engine.sync(home, name, rebuild=rebuild)
    else:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                      console=console(), transient=True) as bar:
            tasks: dict[str, Any] = {}

            def progress(stage: str, done: int, total: int) -> None:
                if stage not in tasks:
                    label = "reading inputs" if stage == "read" else "embedding chunks"
                    tasks[stage] = bar.add_task(label, total=total)
                bar.update(tasks[stage], completed=done, total=total)

            report = engine.sync(home, name, rebuild=rebuild, progress=progress)
    if as_json:
        emit_json(report)
        return
    kind = "rebuilt" if report.rebuilt else "synced"
    click.echo(f"{kind} index of {name}: {report.files_changed} input(s) changed, "
               f"{report.files_removed} removed, +{report.chunks_added}/-{report.chunks_removed} "
               f"chunks, {report.embedded} embedded, {report.cached} from cache "
               f"({report.seconds:.1f} s)")
    if report.fallback:
        click.echo(f"fallback: {', '.join(report.fallback)}")
    for problem in report.problems:
        click.echo(f"warning: {problem}", err=True)


@index.command("status")
@click.option("--agent", help="Whose index (default agent if unset).")
@json_option
@click.pass_context
def index_status(ctx: click.Context, agent: str | None, as_json: bool) -> None:
    """Files, chunks, dirty flag, fingerprint, model and fallbacks of the index."""
    from memtui.search import engine

    home = home_of(ctx)
    agent = agent or (ctx.parent.params.get("agent") if ctx.parent else None)
    st = engine.status(home, home.agent(agent))
    if as_json:
        emit_json(st)
        return
    from rich.table import Table

    table = Table("source", "files", "chunks", title=_escape(f"index of {st.agent}: {st.path}"))
    for source in st.chunks:
        table.add_row(source, str(st.files.get(source, 0)), str(st.chunks[source]))
    out = console()
    out.print(table)
    out.print(f"dirty: {'yes' if st.dirty else 'no'}   pending vectors: {st.pending_vectors}   "
              f"last sync: {st.last_sync or 'never'}   size: {st.size_bytes / 1e6:.1f} MB")
    out.print(f"provider: {st.provider}   model: {st.model}   vectors: {st.vector_store}   "
              f"queries: {st.query_encoder}")
    out.print(f"fallbacks: {', '.join(st.fallbacks) or 'none'}"
              + ("   [yellow]fingerprint changed: next sync rebuilds[/yellow]"
                 if st.stale_fingerprint else ""))
    out.print("fingerprint: " + json.dumps(st.fingerprint, sort_keys=True))


@click.command()
@click.argument("query")
@click.option("--agent", help="Whose memory (default agent if unset).")
@click.option("--layer", type=click.Choice(("episodic", "semantic", "state")),
              help="Search only this memory layer: episodic (what happened), semantic (what "
                   "is known) or state (what is current). Default: all.")
@click.option("--since", help="Only what happened on or after this date (YYYY-MM-DD).")
@limit_option(10, "Most hits to return.")
@click.option("--history", is_flag=True, help="Include superseded facts and closed state.")
@json_option
@click.pass_context
def recall(ctx: click.Context, query: str, agent: str | None, layer: str | None,
           since: str | None, limit: int, history: bool, as_json: bool) -> None:
    """Recall episodes, facts and state about QUERY, each with what to cite."""
    from memtui.search.recall import RecallHit, RecallResponse
    from memtui.search.service import recall as run

    home = home_of(ctx)
    # Through `memtui daemon`'s warm searcher when it answers; "served_by" says which.
    answer = run(home, home.agent(agent), query, layer=layer, since=since, limit=limit,
                 history=history)
    if as_json:
        emit_json(answer)
        return
    response = RecallResponse(query=answer["query"], layers=tuple(answer["layers"]),
                              hits=[RecallHit(**h) for h in answer["hits"]],
                              fallback=answer["fallback"])
    escape = _escape
    out = console()
    if response.fallback:
        out.print(f"[yellow]fallback: {response.fallback}[/yellow]")
    if not response.hits:
        out.print("nothing recalled")
    for hit in response.hits:
        when = f" {hit.when[:16]}" if hit.when else ""
        stale = "" if hit.current else " [yellow](superseded)[/yellow]"
        out.print(f"[bold]{hit.layer}[/bold]{escape(when)} [dim]{hit.score:.2f} "
                  f"{escape(hit.cite)}[/dim]{stale}")
        out.print("   " + escape(hit.text.replace("\n", "\n   ")))
