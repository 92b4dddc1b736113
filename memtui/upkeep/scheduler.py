"""The scheduler behind `memtui daemon`: cron expressions from memtui.toml, one job at a time.

Three kinds of job, each with a cron expression in ``[schedule]`` (empty: off):
``extraction`` (the stenographer, default ``*/30 8-23 * * *``), ``maintenance`` (the
nightly cycle, ``0 3 * * *``) and ``heartbeat`` (off by default: one heartbeat per agent
of the home, delivered as ``[heartbeat] deliver`` says). Times are local time, as in
crontab.

The daemon runs due jobs one after another, so no kind ever runs twice at once, and
takes a per-kind lock file in the home so a manual run or a second daemon cannot
overlap it either. A slot missed while another job ran is run once, not once per missed
slot. Every run is logged in the jobs table; an extraction in which every file failed
is a failed run; a heartbeat run logs one row per agent (name = the agent), and is a
failed run when every agent's failed. SIGTERM or SIGINT stops the daemon cleanly:
a running extraction ends after its current batch (its watermark is consistent), then
the daemon exits 0.

``crontab_lines`` prints the same schedules for people who prefer cron or systemd timers.
"""

from __future__ import annotations

import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from memtui.config import cron_expression
from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.locks import LockTimeout, file_lock
from memtui.stores import jobs

KINDS = ("extraction", "maintenance", "heartbeat")
COMMANDS = {"extraction": "extract --wait", "maintenance": "maintain",
            "heartbeat": "daemon --once heartbeat"}
"""The CLI command each kind runs (for crontab lines): a scheduled heartbeat wakes every
agent, which ``memtui heartbeat`` (one agent) does not."""


def validate(expr: str, key: str = "schedule") -> str:
    """A cron expression croniter accepts (5 fields), normalised, or ConfigError."""
    return cron_expression(expr, "memtui.toml", key)


def next_after(expr: str, moment: datetime) -> datetime:
    """The first time after ``moment`` the expression fires (``moment``'s time zone)."""
    from croniter import croniter

    value: datetime = croniter(expr, moment).get_next(datetime)
    return value


@dataclass(frozen=True)
class Schedule:
    kind: str
    expr: str


def schedules(home: Home) -> list[Schedule]:
    """The enabled schedules of a home, validated."""
    cfg = home.settings.schedule
    out = []
    for kind in KINDS:
        expr = str(getattr(cfg, kind) or "").strip()
        if expr:
            out.append(Schedule(kind, validate(expr, f"schedule.{kind}")))
    return out


def crontab_lines(home: Home, executable: str | None = None) -> list[str]:
    """Equivalent crontab lines (one per enabled schedule), each logging to the home."""
    exe = executable or _memtui_executable()
    logs = home.root / "logs"
    lines = [f"# memtui schedules for {home.root} (from memtui.toml [schedule])",
             f"# mkdir -p {shlex.quote(str(logs))}"]
    for s in schedules(home):
        log = shlex.quote(str(logs / f"{s.kind}.log"))
        lines.append(f"{s.expr} {exe} --home {shlex.quote(str(home.root))} "
                     f"{COMMANDS[s.kind]} >> {log} 2>&1")
    return lines


def _memtui_executable() -> str:
    candidate = os.path.join(os.path.dirname(sys.executable), "memtui")
    return shlex.quote(candidate if os.path.exists(candidate) else "memtui")


@contextmanager
def kind_lock(home: Home, kind: str) -> Iterator[bool]:
    """A per-kind lock file; yields False when another process holds it."""
    with ExitStack() as held:
        try:
            held.enter_context(file_lock(home.root / f".{kind}.lock", timeout=0))
        except LockTimeout:
            yield False
            return
        yield True


@dataclass
class RunResult:
    kind: str
    status: str
    """ok, failed or skipped."""
    message: str = ""
    seconds: float = 0.0


def run_job(home: Home, db: Database, kind: str, *, stop: Callable[[], bool] | None = None
            ) -> RunResult:
    """Run one job of a kind now; never raises for a failing job (it is logged)."""
    started = time.perf_counter()
    with kind_lock(home, kind) as got:
        if not got:
            job = jobs.start(db, kind)
            jobs.finish(db, job, "skipped", message="another run of this kind is in progress")
            return RunResult(kind, "skipped", "another run of this kind is in progress")
        try:
            message = _run(home, db, kind, stop)
        except (MemtuiError, OSError, ValueError) as exc:
            from memtui.extract.stenographer import Busy

            if isinstance(exc, Busy | LockTimeout):  # another run holds a lock it needs
                return RunResult(kind, "skipped", str(exc))
            # The stenographer and the heartbeat log their own failed jobs.
            if kind == "maintenance":
                job = jobs.start(db, kind)
                jobs.finish(db, job, "failed", message=str(exc)[:500])
            return RunResult(kind, "failed", str(exc), time.perf_counter() - started)
    return RunResult(kind, "ok", message, time.perf_counter() - started)


def _run(home: Home, db: Database, kind: str, stop: Callable[[], bool] | None) -> str:
    if kind == "extraction":
        from memtui.extract import stenographer as steno
        from memtui.extract.choose import choose_extractor

        name, warning = choose_extractor(home, None)
        report = steno.run(home, db, steno.Options(extractor=name, stop=stop,
                                                   wait_for_lock=False))
        if report.all_failed:
            # Logged as failed by the stenographer itself; the daemon says so too.
            raise MemtuiError("every file failed: " + "; ".join(
                f"{f.path}: {f.message}" for f in report.failed))
        c = report.counts()
        note = f"{c['turns_extracted']} turns, {sum(c['state_added'].values())} entries"
        if report.failed:
            note += f"; {len(report.failed)} file(s) failed"
        return f"{note}; {warning}" if warning else note
    if kind == "maintenance":
        from memtui.upkeep.maintenance import run_maintenance

        run_maintenance(home, db, dry_run=False)
        return "cycle done"
    return _heartbeats(home)


def _heartbeats(home: Home) -> str:
    """One heartbeat per agent of the home (each logs its own jobs row, name = agent);
    one agent's failure does not keep the others from theirs."""
    from memtui.context.heartbeat import run_heartbeat

    deliver = home.settings.heartbeat.deliver
    notes, failed = [], []
    for agent in home.agents():
        try:
            result = run_heartbeat(home, agent, deliver)
        except (MemtuiError, OSError, ValueError) as exc:
            notes.append(f"{agent}: failed ({exc})")
            failed.append(agent)
            continue
        notes.append(f"{agent}: {result.outcome}")
        if result.outcome == "failed":
            failed.append(agent)
    if not notes:
        return "no agents configured ([agents] ids in memtui.toml)"
    if len(failed) == len(notes):
        raise MemtuiError("every heartbeat failed: " + "; ".join(notes))
    return "; ".join(notes)


@dataclass
class Daemon:
    """Runs a home's schedules until stopped. ``clock`` and ``wait`` are injectable."""

    home: Home
    db: Database
    clock: Callable[[], datetime] = field(default=lambda: datetime.now().astimezone())
    log: Callable[[str], None] = field(default=lambda line: print(line, flush=True))
    stopping: threading.Event = field(default_factory=threading.Event)
    history: list[RunResult] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.plan = schedules(self.home)
        now = self.clock()
        self.due: dict[str, datetime] = {s.kind: next_after(s.expr, now) for s in self.plan}

    def stop(self, *_: object) -> None:
        self.stopping.set()

    def install_signal_handlers(self) -> None:
        signal.signal(signal.SIGTERM, self.stop)
        signal.signal(signal.SIGINT, self.stop)

    def next_due(self) -> tuple[str, datetime] | None:
        if not self.due:
            return None
        kind = min(self.due, key=lambda k: (self.due[k], KINDS.index(k)))
        return kind, self.due[kind]

    def tick(self) -> list[RunResult]:
        """Run every job that is due now, one at a time; schedule each one's next slot."""
        ran: list[RunResult] = []
        for s in self.plan:
            if self.stopping.is_set():
                break
            if self.due[s.kind] <= self.clock():
                result = run_job(self.home, self.db, s.kind, stop=self.stopping.is_set)
                self.log(f"{self.clock().isoformat(timespec='seconds')} {s.kind}: "
                         f"{result.status} {result.message}".rstrip())
                ran.append(result)
                # After the run, not after the slot: missed slots are not piled up.
                self.due[s.kind] = next_after(s.expr, self.clock())
        self.history += ran
        return ran

    def run_forever(self) -> None:
        if not self.plan:
            self.log("no schedules enabled in memtui.toml [schedule]; nothing to do")
            return
        for s in self.plan:
            self.log(f"{s.kind}: {s.expr} (next {self.due[s.kind].isoformat(timespec='minutes')})")
        while not self.stopping.is_set():
            nxt = self.next_due()
            assert nxt is not None
            delay = (nxt[1] - self.clock()).total_seconds()
            if delay > 0 and self.stopping.wait(min(delay, 60.0)):
                break
            if delay <= 0 or nxt[1] <= self.clock():
                self.tick()
        self.log("stopped")
