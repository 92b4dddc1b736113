"""The `memtui` entry point: global options, lazily loaded command groups, exit codes.

Command modules are imported only when their command runs, so `memtui gate pre` and
`memtui boot` never pay for search, models or the console.
"""

from __future__ import annotations

import errno
import importlib
import sys
from typing import Any

import apsw
import click

from memtui.errors import ExitCode, MemtuiError

COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("memtui.cli.home", "init"),
    "doctor": ("memtui.cli.home", "doctor"),
    "demo": ("memtui.cli.home", "demo"),
    "state": ("memtui.cli.state", "state"),
    "rules": ("memtui.cli.rules", "rules"),
    "flows": ("memtui.cli.flows", "flows"),
    "gate": ("memtui.cli.gate", "gate"),
    "boot": ("memtui.cli.boot", "boot"),
    "maintain": ("memtui.cli.maintain", "maintain"),
    "health": ("memtui.cli.health", "health"),
    "audit": ("memtui.cli.audit", "audit"),
    "sources": ("memtui.cli.sources", "sources"),
    "extract": ("memtui.cli.extract", "extract"),
    "backtest": ("memtui.cli.extract", "backtest"),
    "policy": ("memtui.cli.policy", "policy"),
    "daemon": ("memtui.cli.daemon", "daemon"),
    "schedule": ("memtui.cli.daemon", "schedule"),
    "search": ("memtui.cli.search", "search"),
    "index": ("memtui.cli.search", "index"),
    "recall": ("memtui.cli.search", "recall"),
    "get": ("memtui.cli.memory", "get"),
    "remember": ("memtui.cli.memory", "remember"),
    "forget": ("memtui.cli.forget", "forget"),
    "context": ("memtui.cli.context", "context"),
    "prune": ("memtui.cli.compaction", "prune"),
    "flush": ("memtui.cli.compaction", "flush"),
    "compact-session": ("memtui.cli.compaction", "compact_session"),
    "recover": ("memtui.cli.recover", "recover"),
    "heartbeat": ("memtui.cli.recover", "heartbeat"),
    "console": ("memtui.cli.console", "console"),
    "serve": ("memtui.cli.console", "serve"),
    "mcp": ("memtui.cli.mcp", "mcp"),
    "hooks": ("memtui.cli.hooks", "hooks"),
    "hook": ("memtui.cli.hooks", "hook"),
}
"""Command name -> (module, attribute). Add a line here to add a command group."""


class LazyGroup(click.Group):
    """A group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module = importlib.import_module(target[0])
        command: click.Command = getattr(module, target[1])
        return command


@click.group(cls=LazyGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--home", type=click.Path(file_okay=False), envvar="MEMTUI_HOME",
              help="The memory home (default: $MEMTUI_HOME, else the platform data folder).")
@click.version_option(package_name="memtui")
@click.pass_context
def cli(ctx: click.Context, home: str | None) -> None:
    """memtui: memory for long-running AI agents, kept by an independent stenographer."""
    ctx.obj = {"home": home}
    if ctx.invoked_subcommand is None:
        # No command: the console on a terminal, the usage anywhere else.
        if sys.stdin.isatty() and sys.stdout.isatty():
            from memtui.cli.console import run_console

            run_console(ctx, None)
        else:
            click.echo(ctx.get_help())


def main(argv: list[str] | None = None) -> Any:
    """Run the CLI with memtui's exit codes (``memtui.errors.ExitCode``; README: Exit codes)."""
    try:
        code = cli.main(args=argv, prog_name="memtui", standalone_mode=False)
        if isinstance(code, int) and code:  # ctx.exit(n) comes back as a return value here
            sys.exit(code)
        return code
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        click.echo("Aborted.", err=True)
        sys.exit(ExitCode.BAD_INPUT)
    except click.ClickException as exc:
        exc.show()
        sys.exit(ExitCode.BAD_INPUT)
    except MemtuiError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(exc.exit_code)
    except apsw.Error as exc:
        # The database itself is unreadable (corrupt, not a database, unwritable).
        click.echo(f"error: memory.db could not be used: {type(exc).__name__}: {exc}\n"
                   "run `memtui doctor` for what is wrong and how to fix it", err=True)
        sys.exit(ExitCode.BAD_INPUT)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:
        if exc.errno not in (errno.EACCES, errno.EPERM, errno.EROFS):
            raise
        # A read-only home or file: one line naming the path, never a traceback.
        click.echo(f"error: {exc.filename or 'a file of the home'}: {exc.strerror}: this "
                   "command writes there, which needs write permission for this user "
                   "(reading commands still work)", err=True)
        sys.exit(ExitCode.BAD_INPUT)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
