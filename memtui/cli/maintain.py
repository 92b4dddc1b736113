"""`memtui maintain`: run the nightly maintenance cycle (or show what it would change)."""

from __future__ import annotations

import click

from memtui.cli.common import emit_json, json_option, opened


@click.command()
@click.option("--dry-run", is_flag=True, help="Print exactly what would change; change nothing.")
@json_option
@click.pass_context
def maintain(ctx: click.Context, dry_run: bool, as_json: bool) -> None:
    """Decay unreinforced rules, apply score bands, merge near-duplicates, archive old
    completed state, promote new rejections and learnings to rules. Decay runs once a day."""
    from memtui.maintenance import run_maintenance

    with opened(ctx) as (home, db):
        report = run_maintenance(home, db, dry_run=dry_run)
    if as_json:
        emit_json(report.as_dict())
        return
    would = "would " if dry_run else ""
    click.echo(f"maintenance {report.day}" + (" (dry run: nothing changed)" if dry_run else ""))
    if report.decay_ran:
        moved = ", ".join(f"{n} {would}become {s}" for s, n in sorted(report.became.items()))
        click.echo(f"  decay: {report.decayed} rule(s) {would}lose score"
                   + (f"; {moved}" if moved else ""))
    else:
        click.echo("  decay: already ran today (one cycle per day)")
    for survivor, losers in report.merged:
        click.echo(f"  merge: rule(s) {', '.join(map(str, losers))} {would}merge into {survivor}")
    click.echo(f"  archive: {report.archived} completed state entr(ies) {would}be archived")
    click.echo(f"  promote: {len(report.promoted_rejections)} rejection(s) -> critical rules, "
               f"{len(report.promoted_learnings)} learning(s) -> rules"
               + (f", {len(report.reinforced_by_promotion)} existing rule(s) reinforced"
                  if report.reinforced_by_promotion else ""))
    click.echo(f"  job {report.job_id}")
