"""`memtui boot AGENT`: the boot context an agent loads at start."""

from __future__ import annotations

import click

from memtui.cli.common import agent_option, emit_json, json_option, one_agent, opened
from memtui.cli.render import dim, lines, safe, title
from memtui.serving.boot import Boot


def render_boot(boot: Boot) -> None:
    out = [title(f"Boot context for {boot.agent}") + dim(f" (~{boot.tokens} tokens)")]
    for section in boot.sections:
        out.append("")
        out.append(title(section.title) + dim(f" (~{section.tokens} tokens)"))
        out.extend(f"  {safe(line)}" for line in section.lines or ["(none)"])
    lines(out)


@click.command()
@click.argument("agent", required=False)
@agent_option
@json_option
@click.option("--markdown", is_flag=True, help="Print the context as markdown for an agent.")
@click.pass_context
def boot(ctx: click.Context, agent: str | None, agent_opt: str | None, as_json: bool,
         markdown: bool) -> None:
    """Print AGENT's boot context: rules, capabilities, lessons, flows, rejections.

    The agent is positional or --agent (default: the first of [agents] ids).
    """
    from memtui.serving.boot import build_boot

    agent = one_agent(agent, agent_opt)
    with opened(ctx) as (home, db):
        result = build_boot(home, db, home.agent(agent, db))
    if as_json:
        emit_json(result.as_dict())
    elif markdown:
        click.echo(safe(result.as_markdown()), nl=False)
    else:
        render_boot(result)
