"""How every MCP tool runs: in a worker thread, on its own connection, audited.

Tools run the engine in a worker thread (SQLite and the model block), each with its own
connection to memory.db, and every call leaves one audit row: the tool, its arguments
(redacted and cut short), the size of the result, and the client that asked.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio.to_thread
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError

from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.search.service import Warm

ACTOR = "mcp"
ARG_CHARS = 300
"""Audited argument values are cut to this many characters (after redaction)."""
T = TypeVar("T")
log = logging.getLogger("memtui.mcp")

@dataclass
class Served:
    """What every tool needs: the home, the default agent, whether to use the service,
    and this server's own warm searchers for when the service does not answer."""

    home: Home
    agent: str
    use_service: bool = True
    warm: Warm = field(init=False)

    def __post_init__(self) -> None:
        self.warm = Warm(self.home)

    def agent_of(self, agent: str | None) -> str:
        return self.home.agent(agent or self.agent)


def client_of(ctx: Context | None) -> str:
    """The client's name and version as it introduced itself, or "unknown"."""
    try:
        info = ctx.session.client_params.client_info  # type: ignore[union-attr]
        return f"{info.name} {info.version}".strip()
    except AttributeError:
        return "unknown"


def redacted_args(db: Database, agent: str, args: dict[str, Any]) -> dict[str, Any]:
    """Arguments as audited: secrets redacted, forgotten words kept out, long text cut."""
    from memtui.forgetting import mentions_forgotten
    from memtui.redact import redact

    out: dict[str, Any] = {}
    for key, value in args.items():
        if isinstance(value, str):
            text = redact(value).text
            if mentions_forgotten(db, agent, text):
                text = "[forgotten]"
            out[key] = text if len(text) <= ARG_CHARS else text[:ARG_CHARS] + "…"
        else:
            out[key] = value
    return out


def audit_call(db: Database, agent: str, tool: str, args: dict[str, Any], size: int,
               client: str, error: str | None = None) -> None:
    """One audit row per call (actor mcp), in its own transaction."""
    from memtui.stores import audit

    with db.write():
        audit.record(db, ACTOR, "mcp.call", f"mcp:{tool}", None,
                     {"client": client, "args": redacted_args(db, agent, args),
                      "result_bytes": size, **({"error": error} if error else {})})


async def run(served: Served, ctx: Context | None, tool: str, args: dict[str, Any],
              work: Callable[[Home, Database], T]) -> T:
    """Run ``work`` in a worker thread with a fresh memory.db connection, and audit it.

    Engine errors become tool errors with the engine's message (a model can read and fix
    its call); anything else is logged to stderr and reported without internals.
    """
    client = client_of(ctx)

    def job() -> T:
        db = served.home.open_db()
        try:
            try:
                agent = served.agent_of(args.get("agent"))
                result = work(served.home, db)
            except MemtuiError as exc:
                audit_call(db, served.agent, tool, args, 0, client, error=str(exc))
                raise
            size = len(json.dumps(result, default=str, ensure_ascii=False))
            audit_call(db, agent, tool, args, size, client)
            return result
        finally:
            db.close()

    try:
        return await anyio.to_thread.run_sync(job)
    except MemtuiError as exc:
        raise ToolError(str(exc)) from exc
    except Exception as exc:
        log.exception("memtui tool %s failed", tool)
        raise ToolError(f"{tool} failed inside memtui ({type(exc).__name__}); "
                        "the server log has the details") from exc


