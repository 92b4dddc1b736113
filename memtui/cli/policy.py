"""`memtui policy`: check policy.yaml and see, turn by turn, what it captures and refuses."""

from __future__ import annotations

import click

from memtui.cli.common import emit_json, home_of, json_option
from memtui.cli.render import safe
from memtui.errors import ConfigError, ExitCode, MemtuiError
from memtui.stores.sources import FORMATS


def _missing(home_path: object) -> MemtuiError:
    return MemtuiError(f"{home_path} does not exist; run `memtui init` to write the default "
                       "policy (it keeps the files that are already there)")


@click.group()
def policy() -> None:
    """The capture policy (policy.yaml): what may be stored, what never is."""


@policy.command("check")
@json_option
@click.pass_context
def check(ctx: click.Context, as_json: bool) -> None:
    """Validate the home's policy.yaml (errors name the key and the line)."""
    from memtui.extract.policy import validate_policy

    home = home_of(ctx)
    try:
        text = home.policy_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise _missing(home.policy_path) from None
    except UnicodeDecodeError:
        raise ConfigError(home.policy_path, "(encoding)", "UTF-8 text") from None
    errors = validate_policy(text, home.policy_path)
    if as_json:
        emit_json({"path": home.policy_path, "valid": not errors,
                   "errors": [str(e) for e in errors]})
    else:
        for error in errors:
            click.echo(f"error: {error}", err=True)
        if not errors:
            click.echo(f"{home.policy_path}: valid")
    if errors:
        ctx.exit(ExitCode.BAD_INPUT)


@policy.command("test")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--format", "fmt", type=click.Choice(FORMATS), default="auto", show_default=True,
              help="Transcript format.")
@click.option("--quiet", "-q", is_flag=True, help="Only turns that capture or refuse something.")
@json_option
@click.pass_context
def test(ctx: click.Context, file: str, fmt: str, quiet: bool, as_json: bool) -> None:
    """Show what each turn of FILE would put where, and what is refused and why.

    Uses the home's policy.yaml and its local extractor (with the classifier, unless
    [extract] classifier = false), as `memtui extract` does; writes nothing.
    """
    from memtui.extract.choose import load_capture_policy, make_extractor
    from memtui.extract.explain import explain

    home = home_of(ctx)
    if not home.policy_path.exists():
        raise _missing(home.policy_path)
    turns = explain(file, load_capture_policy(home), make_extractor(home, "local"), fmt=fmt)
    if as_json:
        emit_json(turns)
        return
    shown = 0
    for t in turns:
        busy = t.refused or t.state or t.episodes or t.facts or t.dropped or t.redacted
        if quiet and not busy:
            continue
        shown += 1
        click.secho(f"{t.at or '-'}  {t.role:<9} {t.id}", bold=True)
        if t.text:
            click.echo(f"    “{safe(t.text)}”")
        if t.redacted:
            click.echo(f"    redacted   {', '.join(t.redacted)}")
        if t.refused:
            click.secho(f"    REFUSED    {t.refused}", fg="red")
        elif t.skipped:
            click.echo(f"    skipped    {t.skipped}")
        for line in t.captures:
            click.echo(f"    policy     {line}")
        for line in [*t.state, *t.facts, *t.episodes]:
            click.secho(f"    → {safe(line)}", fg="green")
        for line in t.dropped:
            click.secho(f"    ✗ {safe(line)} (switched off in policy.yaml)", fg="yellow")
        if not busy and not t.skipped:
            click.echo("    (nothing captured)")
    refused = sum(1 for t in turns if t.refused)
    captured = sum(1 for t in turns if t.state or t.episodes or t.facts)
    click.echo(f"\n{len(turns)} turns: {captured} capture something, {refused} refused"
               + (f" ({len(turns) - shown} quiet turns hidden)" if quiet else ""))
