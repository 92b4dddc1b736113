"""`memtui mcp`: serve the agent's memory to MCP clients over stdio or local HTTP."""

from __future__ import annotations

import logging
import sys

import click

from memtui.cli.common import home_of


@click.command()
@click.option("--transport", type=click.Choice(["stdio", "http"]), default="stdio",
              show_default=True, help="stdio for a client that starts memtui; http to serve.")
@click.option("--agent", help="The agent whose memory tools use by default.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="http: address to bind (loopback unless --allow-remote).")
@click.option("--port", type=int, help="http: port (default: [mcp] port).")
@click.option("--allow-remote", is_flag=True,
              help="http: allow an address other than loopback (prints a warning).")
@click.option("--no-service", is_flag=True,
              help="Search in this process even when `memtui daemon` serves search.")
@click.option("--log-file", type=click.Path(dir_okay=False),
              help="Write the server log here (default: stderr; stdout is the protocol's).")
@click.pass_context
def mcp(ctx: click.Context, transport: str, agent: str | None, host: str, port: int | None,
        allow_remote: bool, no_service: bool, log_file: str | None) -> None:
    """Run the MCP server: recall, remember, forget, memory_search, memory_get, boot,
    gate_pre, gate_post and active_state, plus MEMORY.md and active state as resources."""
    from memtui.errors import MemtuiError
    from memtui.mcp import http
    from memtui.mcp.server import build

    home = home_of(ctx)
    handler: logging.Handler = (logging.FileHandler(log_file) if log_file
                                else logging.StreamHandler(sys.stderr))
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logging.getLogger("memtui").addHandler(handler)
    server = build(home, agent, use_service=not no_service)
    if transport == "stdio":
        server.run("stdio")
        return
    warning = http.check_bind(host, allow_remote)
    if warning:
        click.echo(warning, err=True)
    settings = home.settings.mcp
    if not settings.token:
        raise MemtuiError(f"the HTTP transport needs a token: set [mcp] token in "
                          f"{home.config_path} (e.g. the output of: openssl rand -hex 32)")
    chosen = port or settings.port
    click.echo(f"memtui MCP on http://{host}:{chosen}/mcp (bearer token from [mcp] token)",
               err=True)
    http.serve(server, host=host, port=chosen, token=settings.token)
