"""MCP tools around an agent's work: ``boot``, ``gate_pre``, ``gate_post``, ``active_state``."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations

from memtui.db import Database
from memtui.home import Home
from memtui.mcp.calls import ACTOR, Served, run
from memtui.serving.framing import NOTICE, frame


def active_state(home: Home, db: Database, agent: str, limit: int = 50) -> dict[str, Any]:
    """The agent's active state entries, framed, newest first (shared with the resource)."""
    from memtui.stores import state

    entries = state.recent(db, agent=agent, limit=limit)
    return frame("active-state", [
        {"id": f"state:{e.id}", "category": e.category, "domain": e.domain,
         "text": e.summary, "detail": e.detail, "updated_at": e.updated_at,
         "cite": e.cite}
        for e in entries], agent=agent)


def register(server: MCPServer, served: Served) -> None:
    async def boot(agent: str | None = None, ctx: Context | None = None) -> dict[str, Any]:
        """The boot context for the start of a session: rules, capabilities, lessons,
        flows and rejections, as markdown and as sections."""
        def work(home: Home, db: Database) -> dict[str, Any]:
            from memtui.serving.boot import build_boot

            result = build_boot(home, db, served.agent_of(agent))
            return {"notice": NOTICE, "markdown": result.as_markdown(), **result.as_dict()}

        return await run(served, ctx, "boot", {"agent": agent}, work)

    async def gate_pre(action: str, agent: str | None = None, budget: int | None = None,
                       ctx: Context | None = None) -> dict[str, Any]:
        """What to know before `action`: the matching flow, rejections, rules, state,
        tools and health, cut to a token budget. Opens a gate that gate_post grades."""
        def work(home: Home, db: Database) -> dict[str, Any]:
            from memtui.serving.gates import pre_gate

            result = pre_gate(home, db, served.agent_of(agent), action, budget=budget)
            return {"notice": NOTICE, **result.as_dict()}

        return await run(served, ctx, "gate_pre", {"action": action, "agent": agent,
                                                   "budget": budget}, work)

    async def gate_post(outcome: str, summary: str, flow: str | None = None,
                        lesson: str | None = None, agent: str | None = None,
                        ctx: Context | None = None) -> dict[str, Any]:
        """Grade the finished action: outcome "pass" or "fail", a one-line summary, the
        flow followed and the lesson learned; updates flows, rules and state."""
        def work(home: Home, db: Database) -> dict[str, Any]:
            from memtui.serving.gates import post_gate

            return post_gate(home, db, served.agent_of(agent), outcome, summary, flow=flow,
                             lesson=lesson, actor=ACTOR).as_dict()

        return await run(served, ctx, "gate_post", {"outcome": outcome, "summary": summary,
                                                    "flow": flow, "lesson": lesson,
                                                    "agent": agent}, work)

    async def active_state_tool(agent: str | None = None,
                                ctx: Context | None = None) -> dict[str, Any]:
        """What is going on now: the agent's active decisions, tasks, rejections and
        context, newest first, each with its id and source."""
        def work(home: Home, db: Database) -> dict[str, Any]:
            return active_state(home, db, served.agent_of(agent))

        return await run(served, ctx, "active_state", {"agent": agent}, work)

    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)
    server.add_tool(boot, annotations=read_only)
    server.add_tool(gate_pre, annotations=ToolAnnotations(read_only_hint=False))
    server.add_tool(gate_post, annotations=ToolAnnotations(read_only_hint=False))
    server.add_tool(active_state_tool, name="active_state", annotations=read_only)
