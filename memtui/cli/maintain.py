"""`memtui maintain`: run the nightly maintenance cycle (or show what it would change)."""

from __future__ import annotations

from collections.abc import Sequence

import click

from memtui.cli.common import emit_json, json_option, opened

SHOWN = 15
"""Items listed per step in human output; --json lists them all."""


def _listing(items: Sequence[str]) -> list[str]:
    out = [f"      {item}" for item in items[:SHOWN]]
    if len(items) > SHOWN:
        out.append(f"      ... and {len(items) - SHOWN} more (--json lists all)")
    return out


@click.command()
@click.option("--dry-run", is_flag=True, help="Print exactly what would change; change nothing.")
@json_option
@click.pass_context
def maintain(ctx: click.Context, dry_run: bool, as_json: bool) -> None:
    """Decay unreinforced rules, apply score bands, merge near-duplicates, archive old
    completed state, promote new rejections and learnings to rules, and drop episodes past
    their retention. Decay runs once a day."""
    from memtui.upkeep.maintenance import run_maintenance

    with opened(ctx) as (home, db):
        report = run_maintenance(home, db, dry_run=dry_run)
    if as_json:
        emit_json(report.as_dict())
        return
    verb = (lambda would, did: would) if dry_run else (lambda would, did: did)
    out = [f"maintenance {report.day}" + (" (dry run: nothing changed)" if dry_run else "")]
    if not report.decay_ran:
        out.append("  decay: already ran today (one cycle per day)")
    else:
        out.append(f"  decay: {len(report.decayed)} rule(s) "
                   f"{verb('would lose', 'lost')} score")
        out += _listing([f"rule {d.id}: {d.score + 0.0:.2f}"
                         + (f", {d.was} -> {d.status}" if d.was != d.status else "")
                         + f"  {d.rule[:70]}" for d in report.decayed])
    for survivor, losers in report.merged:
        out.append(f"  merge: rule(s) {', '.join(map(str, losers))} "
                   f"{verb('would merge', 'merged')} into {survivor}")
    out.append(f"  archive: {len(report.archived)} completed state entr(ies) "
               f"{verb('would be', 'were')} archived")
    out += _listing([f"state {i}" for i in report.archived])
    out.append(f"  promote: {len(report.promoted_rejections)} rejection(s) -> critical rules, "
               f"{len(report.promoted_learnings)} learning(s) -> rules"
               + (f", {len(report.reinforced_by_promotion)} existing rule(s) reinforced"
                  if report.reinforced_by_promotion else ""))
    if report.skipped_low_confidence:
        out.append("  not promoted (low confidence): state "
                   + ", ".join(map(str, report.skipped_low_confidence[:SHOWN])))
    if report.retention:
        out.append("  retention: " + ", ".join(f"{n} {k} episode(s)"
                                               for k, n in sorted(report.retention.items()))
                   + f" {verb('would be', 'were')} deleted")
    out.append(f"  job {report.job_id}")
    from memtui.cli.render import safe

    click.echo(safe("\n".join(out)))  # rule texts are stored text
