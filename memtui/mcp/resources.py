"""MCP resources: the agent's MEMORY.md and its active state."""

from __future__ import annotations

import json

import anyio.to_thread
from mcp.server.mcpserver import MCPServer

from memtui.mcp.calls import Served


def register(server: MCPServer, served: Served) -> None:
    agent = served.agent

    def memory_md() -> str:
        from memtui.errors import NotFound
        from memtui.workspace.memoryfiles import get

        try:
            return get(served.home, agent, "MEMORY.md").text
        except NotFound:
            return ""

    def state_json() -> str:
        from memtui.mcp.tools.gates import active_state

        db = served.home.open_db()
        try:
            return json.dumps(active_state(served.home, db, agent), ensure_ascii=False)
        finally:
            db.close()

    async def read_memory() -> str:
        return await anyio.to_thread.run_sync(memory_md)

    async def read_state() -> str:
        return await anyio.to_thread.run_sync(state_json)

    server.resource(f"memtui://{agent}/MEMORY.md", name="MEMORY.md",
                    description=f"{agent}'s curated long-term memory (markdown).",
                    mime_type="text/markdown")(read_memory)
    server.resource(f"memtui://{agent}/active-state", name="active-state",
                    description=f"{agent}'s active state entries (JSON, framed as data).",
                    mime_type="application/json")(read_state)
