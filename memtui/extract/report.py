"""What a stenographer run reports: progress while it runs, and per file and in total after."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from memtui.extract.consolidate import Outcome
from memtui.extract.prepare import Preparation


@dataclass(frozen=True)
class Progress:
    """Where a run is: files and bytes done of the totals known at the start."""

    files_done: int
    files_total: int
    bytes_done: int
    bytes_total: int
    turns: int
    path: str


@dataclass
class FileReport:
    """What a run did with one file."""

    path: str
    agent: str
    format: str = ""
    status: str = "unchanged"
    """unchanged, read, reset (read again from the start), failed or skipped."""
    turns: int = 0
    start_offset: int = 0
    end_offset: int = 0
    message: str = ""


@dataclass
class RunReport:
    """What a run read, wrote and skipped, and why."""

    dry_run: bool = False
    extractor: str = "local"
    files: list[FileReport] = field(default_factory=list)
    turns_read: int = 0
    turns_extracted: int = 0
    outcome: Outcome = field(default_factory=Outcome)
    skipped: Counter[str] = field(default_factory=Counter)
    """Turns or lines not extracted, per reason."""
    unknown: Counter[str] = field(default_factory=Counter)
    """Lines of entry types the reader does not know, per type (counted, then ignored)."""
    redacted: Counter[str] = field(default_factory=Counter)
    """Secrets redacted, per kind."""
    problems: list[str] = field(default_factory=list)
    refusals: list[str] = field(default_factory=list)
    """Why the policy refused a turn's text: "<message id>: <reason>"."""
    daily_logs: list[str] = field(default_factory=list)
    seconds: float = 0.0
    job_id: int | None = None
    stopped: bool = False
    """The run was asked to stop and ended between batches."""

    def tally(self, turn_id: str, prep: Preparation) -> None:
        """Count what preparing a turn took out: secrets, refused text, skipped turns."""
        if prep.redacted:
            self.redacted.update(prep.redacted)
        if prep.skipped is not None:
            self.skipped[prep.skipped] += 1
        if prep.refusal is not None:
            self.refusals.append(f"{turn_id}: {prep.refusal}")

    @property
    def failed(self) -> list[FileReport]:
        return [f for f in self.files if f.status == "failed"]

    @property
    def all_failed(self) -> bool:
        """Every file this run tried to read failed (so it extracted nothing)."""
        tried = [f for f in self.files if f.status != "unchanged"]
        return bool(tried) and all(f.status == "failed" for f in tried)

    def counts(self) -> dict[str, Any]:
        """A JSON-ready summary (the job's counts and ``--json`` output)."""
        o = self.outcome
        return {
            "files": dict(Counter(f.status for f in self.files)),
            "turns_read": self.turns_read,
            "turns_extracted": self.turns_extracted,
            "state_added": dict(o.added),
            "state_updated": dict(o.updated),
            "duplicates": o.duplicates,
            "rejections_already_known": o.rejections_seen,
            "tombstoned": o.tombstoned,
            "episodes": dict(o.episodes),
            "facts": dict(o.facts),
            "tool_outcomes": o.outcomes,
            "skipped": dict(self.skipped),
            "unknown_types": dict(self.unknown),
            "state_superseded": dict(o.superseded),
            "redacted": dict(self.redacted),
            "problems": len(self.problems),
            "failed": [f"{f.path}: {f.message}" for f in self.failed],
            "dry_run": self.dry_run,
            "extractor": self.extractor,
            "seconds": round(self.seconds, 3),
        }
