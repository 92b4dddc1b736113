"""MCP tools that read memory: ``recall``, ``memory_search`` and ``memory_get``."""

from __future__ import annotations

import inspect
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

from memtui.db import Database
from memtui.home import Home
from memtui.mcp.calls import Served, run
from memtui.serving.framing import frame

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)


def register(server: MCPServer, served: Served) -> None:
    async def recall(query: str, layer: str | None = None, since: str | None = None,
                     limit: int = 10, agent: str | None = None,
                     ctx: Context | None = None) -> dict[str, Any]:
        """Recall memories about `query`, each citing its source.

        layer: "episodic" (what happened, with timestamps), "semantic" (facts with their
        source message, notes with file and lines) or "state" (what is going on now);
        all three when omitted. since: an ISO date or time. limit: most hits (10).
        """
        def work(home: Home, _db: Database) -> dict[str, Any]:
            from memtui.search import service

            answer = service.recall(home, served.agent_of(agent), query, layer=layer,
                                    since=since, limit=limit, use_service=served.use_service,
                                    local=served.warm)
            return frame("recall", answer.pop("hits"), **answer)

        return await run(served, ctx, "recall", {"query": query, "layer": layer,
                                                 "since": since, "limit": limit,
                                                 "agent": agent}, work)

    async def memory_search(query: str, maxResults: int | None = None,  # noqa: N803
                            minScore: float | None = None, agent: str | None = None,  # noqa: N803
                            ctx: Context | None = None) -> dict[str, Any]:
        """Hybrid search over MEMORY.md, memory/*.md, transcripts, episodes and facts.

        The same results as `memtui search --json`: path, lines, score, snippet, source.
        """
        def work(home: Home, _db: Database) -> dict[str, Any]:
            from memtui.search import engine, service

            opts = engine.options(home, max_results=maxResults, min_score=minScore)
            answer = service.search(home, served.agent_of(agent), query, opts,
                                    use_service=served.use_service, local=served.warm)
            return frame("search", answer.pop("results"), **answer)

        return await run(served, ctx, "memory_search",
                         {"query": query, "maxResults": maxResults, "minScore": minScore,
                          "agent": agent}, work)

    async def memory_get(path: str, lines: int | None = None, agent: str | None = None,
                         ctx: Context | None = None, **named: Any) -> dict[str, Any]:
        """Lines of MEMORY.md or memory/**/*.md (relative to the agent's workspace).

        from: the first line (1-based, default 1); lines: how many (default all). The
        same boundary as `memtui get`: no absolute paths, no '..', no symbolic links.
        """
        from_ = int(named.get("from") or 1)

        def work(home: Home, _db: Database) -> dict[str, Any]:
            from memtui.workspace.memoryfiles import get

            found = get(home, served.agent_of(agent), path, start=from_, lines=lines)
            return frame("memory-file", [{"text": found.text,
                                          "cite": f"{found.path}:{found.start_line}-"
                                                  f"{found.end_line}"}],
                         path=found.path, start_line=found.start_line,
                         end_line=found.end_line, total_lines=found.total_lines)

        return await run(served, ctx, "memory_get",
                         {"path": path, "from": from_, "lines": lines, "agent": agent}, work)

    server.add_tool(recall, annotations=READ_ONLY)
    server.add_tool(memory_search, annotations=READ_ONLY)
    memory_get.__signature__ = _with_from(memory_get)  # type: ignore[attr-defined]
    server.add_tool(memory_get, annotations=READ_ONLY)


def _with_from(fn: Any) -> inspect.Signature:
    """The tool's signature with a ``from`` argument (a Python keyword, so it travels in
    ``**named``), as OpenClaw's memory_get names it."""
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
    start = inspect.Parameter("start", inspect.Parameter.KEYWORD_ONLY, default=1,
                              annotation=Annotated[int, Field(alias="from", ge=1)])
    return sig.replace(parameters=[*params, start], return_annotation=dict[str, Any])
