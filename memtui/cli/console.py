"""`memtui console` and `memtui serve`: the Textual console, in a terminal or a browser tab."""

from __future__ import annotations

import sys

import click

from memtui.cli.common import home_of
from memtui.home import Home

LOCAL = ("127.0.0.1", "localhost", "::1")


def run_console(ctx: click.Context, agent: str | None) -> None:
    """Open the console on the home (the caller checked that there is a terminal)."""
    home = home_of(ctx)
    if agent:
        db = home.open_db()
        try:
            agent = home.agent(agent, db)
        finally:
            db.close()
    open_console(home, agent)


def open_console(home: Home, agent: str | None = None) -> None:
    """Run the console until it is quit. If its terminal hung up under it, exit at once
    with the hang-up status: there is no one left to print anything to."""
    from memtui.tui.app import MemtuiApp

    app = MemtuiApp(home, agent=agent)
    app.run()
    if app.terminal_lost:
        raise SystemExit(app.return_code)


@click.command()
@click.option("--agent", help="Show one agent's memory (default: all agents; `a` switches).")
@click.pass_context
def console(ctx: click.Context, agent: str | None) -> None:
    """Open the console: review, rules by hand, live context, run jobs (needs a terminal)."""
    if not sys.stdout.isatty():
        raise click.UsageError("the console needs a terminal; in scripts use the other "
                               "commands (memtui state list, memtui rules list ...)")
    run_console(ctx, agent)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on. Anything but this machine needs --public.")
@click.option("--port", default=8000, show_default=True, type=int)
@click.option("--public", is_flag=True,
              help="Allow a non-local --host: anyone who reaches it can change memory.")
@click.option("--agent", help="Show one agent's memory (default: all agents).")
@click.pass_context
def serve(ctx: click.Context, host: str, port: int, public: bool, agent: str | None) -> None:
    """Serve the console in a browser tab (textual-serve), on 127.0.0.1 by default."""
    import shlex

    from textual_serve.server import Server

    home = home_of(ctx)
    if host not in LOCAL:
        if not public:
            raise click.UsageError(f"--host {host} is reachable from other machines; add "
                                   "--public if that is what you mean")
        click.echo(f"warning: serving the console on {host}:{port} with no login: anyone "
                   "who can reach it can read and change this memory", err=True)
    command = [sys.executable, "-m", "memtui.cli.main", "--home", str(home.root), "console"]
    if agent:
        command += ["--agent", agent]
    Server(shlex.join(command), host=host, port=port, title="memtui").serve()
