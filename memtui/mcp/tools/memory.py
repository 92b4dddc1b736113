"""MCP tools that change memory: ``remember`` and the two-step ``forget``."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.mcp.calls import ACTOR, Served, run
from memtui.serving.framing import frame


def register(server: MCPServer, served: Served) -> None:
    async def remember(content: str, layer: str = "daily", tags: list[str] | None = None,
                       agent: str | None = None, key: str | None = None,
                       ctx: Context | None = None) -> dict[str, Any]:
        """Keep `content` in memory; returns its id (state:12, fact:3, memory/2026-05-01.md:7).

        layer: "daily" (today's log), "long-term" (MEMORY.md), a state category:
        decision, task, discovery, learning, context, rejected; or "fact": the current
        value of `key` (or content written as "key: value"), which supersedes the old
        value and keeps its history. Secrets are redacted, the capture policy may refuse
        it, and state entries and facts are consolidated like extraction does (a
        restatement updates, a change supersedes, a forgotten one stays out).
        """
        def work(home: Home, db: Database) -> dict[str, Any]:
            from dataclasses import asdict

            from memtui.serving.remember import remember as keep

            return asdict(keep(home, db, served.agent_of(agent), content, layer,
                               tags=tags or (), actor=ACTOR, key=key))

        return await run(served, ctx, "remember", {"content": content, "layer": layer,
                                                   "tags": tags, "agent": agent, "key": key},
                         work)

    async def forget(query: str | None = None, id: str | None = None,  # noqa: A002
                     confirm: str | None = None, agent: str | None = None,
                     ctx: Context | None = None) -> dict[str, Any]:
        """Delete a memory everywhere, in two steps.

        Give `query` (every memory holding these words) or `id` (state:12, fact:3,
        episode:7). Without `confirm` nothing is deleted: the answer lists exactly what
        would be and gives a `confirm` token. Call again with that token to delete: rows,
        search index entries, vectors and markdown lines; a tombstone keeps it from
        coming back.
        """
        def work(home: Home, db: Database) -> dict[str, Any]:
            from memtui import forgetting

            if (query is None) == (id is None):
                raise MemtuiError("give exactly one of query or id")
            if id is not None:
                layer, _, number = id.partition(":")
                if not number.isdigit():
                    raise MemtuiError(f"id looks like state:12, fact:3 or episode:7, not {id!r}")
                plan = forgetting.plan_item(home, db, layer, int(number))
            else:
                assert query is not None
                plan = forgetting.plan_query(home, db, query, agent=served.agent_of(agent))
            if confirm is None or plan.empty:
                listing = plan.as_dict()
                items = listing.pop("rows") + listing.pop("markdown")
                return frame("forget-plan", items, deleted=False,
                             confirm=None if plan.empty else plan.token,
                             index_chunks=listing["index_chunks"],
                             next=None if plan.empty else
                             "call forget again with the same arguments and this confirm "
                             "token to delete all of it")
            done = forgetting.forget(home, db, plan, confirm, actor=ACTOR)
            return {"deleted": True, **done.as_dict()}

        return await run(served, ctx, "forget", {"query": query, "id": id,
                                                 "confirm": confirm, "agent": agent}, work)

    server.add_tool(remember, annotations=ToolAnnotations(read_only_hint=False,
                                                          destructive_hint=False))
    server.add_tool(forget, annotations=ToolAnnotations(read_only_hint=False,
                                                        destructive_hint=True))
