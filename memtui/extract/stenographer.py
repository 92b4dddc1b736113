"""The stenographer: reads transcripts from per-file watermarks and writes structured memory.

One run walks every registered source (or one), oldest file first. For each file it

1. checks the watermark against the file (``extract.files``): same device/inode, not
   shorter than the offset, the same first bytes (``head_hash``). A truncated, replaced
   or rewritten file is read again from the start; the ledger of extracted turns
   (``stores.ledger``, keyed by agent, session and message id) keeps that from
   duplicating anything.
2. reads the new turns (``memtui.transcripts.read_transcript``) and cuts them into
   batches at points where no earlier turn extends past the cut.
3. per batch, first without any lock: skips turns the ledger already has, redacts
   every text (``memtui.redact``) and applies the capture policy (``extract.prepare``),
   runs the extractor and enforces the policy on its output (``extract.enforce``). Then
   in ONE short write transaction: consolidates the candidates (``extract.consolidate``),
   records the turns in the ledger, queues the daily-log section and advances the
   watermark to the cut. A crash, a kill or an extractor error writes nothing of the
   batch: the watermark never passes unwritten data. Between batches the run pauses
   ``BATCH_PAUSE`` seconds, so other writers (``gate post``, ``state add``) get the
   write lock without waiting for the whole run.
4. after each commit, appends the queued sections to memory/YYYY-MM-DD.md.

A dry run does all of this in a scratch copy of memory.db (``extract.scratch``), so it
never holds the real database's write lock and reports exactly what a real run would do.

An extractor failure stops that file for this run, counts ``failures`` on its watermark
and leaves the offset where it was, so the next run retries the same turns (three
failed runs in a row are backfilled by the fourth). With the llm extractor, a batch
that failed ``[extract] fallback_after_failures`` runs in a row is extracted by the
local extractor instead, so one poisoned batch cannot stall a source forever.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from memtui import timeutil
from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.extract.candidates import Extraction, Extractor, ExtractorError, PreparedTurn
from memtui.extract.capture import Policy
from memtui.extract.choose import load_capture_policy, make_extractor, select_sources
from memtui.extract.consolidate import Consolidator
from memtui.extract.enforce import enforce
from memtui.extract.files import HEAD_BYTES, batches, head_hash, resume_point, unchanged
from memtui.extract.local import LocalExtractor
from memtui.extract.prepare import FileContext, Preparer
from memtui.extract.report import FileReport, Progress, RunReport
from memtui.extract.scratch import scratch_copy
from memtui.home import Home
from memtui.locks import LockTimeout, file_lock
from memtui.stores import jobs, ledger
from memtui.stores.ledger import LedgerEntry, Watermark
from memtui.stores.sources import Source
from memtui.transcripts import StaleOffset, Turn, UnknownFormat, read_transcript
from memtui.workspace import dailylog

ACTOR = "extractor"
JOB_KIND = "extraction"
DAILY_LOG_EVERY = 1.0
"""Seconds between two appends of the queued daily-log sections during a run, which also
appends once at its end. The queue is durable (``workspace.dailylog``); appending after
every file rewrote the day's file once per file, a tenth of a run over 200 short
sessions."""
BATCH_PAUSE = 0.01
"""Seconds the run sleeps after each committed batch (at most as long as the batch held
the write lock), so waiting writers get the lock."""


@dataclass
class Options:
    """How to run the stenographer; the defaults come from memtui.toml."""

    agent: str | None = None
    source: str | None = None
    """A source id, a source pattern, or a file one of the sources names."""
    source_ids: Sequence[int] | None = None
    """Only these sources (backtest uses it)."""
    since: datetime | None = None
    """Turns older than this are not extracted now. The watermark stops before the first
    of them, so a later run without ``since`` still extracts them."""
    dry_run: bool = False
    """Write nothing: the run works in a scratch copy of memory.db and writes no markdown."""
    scratch: bool = False
    """The database is already a throwaway copy (backtest --dry-run): write into it."""
    extractor: str | None = None
    """"local" or "llm"; None: memtui.toml's [extract] extractor."""
    batch_turns: int | None = None
    progress: Callable[[Progress], None] | None = None
    job: bool = True
    """Log the run in the jobs table."""
    wait_for_lock: bool = False
    """Wait for another run to finish instead of failing at once."""
    stop: Callable[[], bool] | None = None
    """Asked between batches: True ends the run early, cleanly (the daemon's SIGTERM)."""


class Busy(MemtuiError):
    """Another extraction holds the home's extraction lock."""


@contextmanager
def run_lock(home: Home, *, wait: bool = False) -> Iterator[None]:
    """One extraction at a time per home (``memtui.locks``: a killed run releases it)."""
    with ExitStack() as held:
        try:
            held.enter_context(file_lock(home.root / ".extract.lock",
                                         timeout=None if wait else 0))
        except LockTimeout:
            raise Busy("another extraction is running in this home; try again when it "
                       "ends") from None
        yield


class Stenographer:
    """One run over a home's sources; ``run()`` does the work and returns the report."""

    def __init__(self, home: Home, db: Database, options: Options | None = None, *,
                 extractor: Extractor | None = None, policy: Policy | None | bool = True
                 ) -> None:
        self.home = home
        self.db = db
        self.options = options or Options()
        settings = home.settings.extract
        self.settings = settings
        name = self.options.extractor or settings.extractor
        self.extractor = extractor or make_extractor(home, name)
        self.fallback: Extractor | None = (
            LocalExtractor() if self.extractor.name != "local" else None)
        self._policy_arg = policy
        self._policy_loaded = False
        self._policy: Policy | None = None
        self.report = RunReport(dry_run=self.options.dry_run, extractor=self.extractor.name)
        self._preparer: Preparer | None = None
        self._log_flushed = time.monotonic()
        self._consolidators: dict[str, Consolidator] = {}
        self.batch_turns = self.options.batch_turns or settings.batch_turns
        self.since = timeutil.iso(self.options.since) if self.options.since else None

    # -- public --------------------------------------------------------------------------

    def run(self) -> RunReport:
        started = time.perf_counter()
        with run_lock(self.home, wait=self.options.wait_for_lock):
            job = None
            if self.options.job:
                job = jobs.start(self.db, JOB_KIND, self.options.agent or "",
                                 dry_run=self.options.dry_run)
                self.report.job_id = job
            try:
                if self.options.dry_run and not self.options.scratch:
                    if self.db.conn.in_transaction:
                        # Inside the caller's transaction, which the caller rolls back.
                        self._run_all()
                    else:
                        real = self.db
                        with scratch_copy(self.home, real) as copy:
                            self.db = copy
                            try:
                                self._run_all()
                            finally:
                                self.db = real
                                self._consolidators.clear()
                else:
                    self._run_all()
            except BaseException as exc:
                if job is not None:
                    jobs.finish(self.db, job, "failed", self.report.counts(), str(exc)[:500])
                raise
            self.report.seconds = time.perf_counter() - started
            if job is not None:
                status = "failed" if self.report.failed else "ok"
                message = "; ".join(f"{f.path}: {f.message}" for f in self.report.failed)[:500]
                jobs.finish(self.db, job, status, self.report.counts(), message)
        return self.report

    # -- internals -----------------------------------------------------------------------

    @property
    def policy(self) -> Policy | None:
        """The capture policy, parsed on first use (an idle run never pays for the YAML)."""
        if not self._policy_loaded:
            arg = self._policy_arg
            self._policy = load_capture_policy(self.home) if arg is True else (arg or None)
            self._policy_loaded = True
        return self._policy

    @property
    def preparer(self) -> Preparer:
        if self._preparer is None:
            self._preparer = Preparer(self.policy)
        return self._preparer

    def _stopping(self) -> bool:
        return self.options.stop is not None and self.options.stop()

    def _consolidator(self, agent: str) -> Consolidator:
        cons = self._consolidators.get(agent)
        if cons is None:
            cons = Consolidator(self.db, agent, threshold=self.settings.similarity, actor=ACTOR)
            self._consolidators[agent] = cons
        return cons

    def _plan(self) -> list[tuple[Source, Path, os.stat_result, Watermark | None, bool]]:
        sources = select_sources(self.db, self.options.agent, self.options.source)
        if self.options.source_ids is not None:
            sources = [s for s in sources if s.id in self.options.source_ids]
        marks = ledger.watermarks(self.db)
        now = time.time()
        idle_after = self.settings.final_after_minutes * 60
        planned: dict[str, tuple[Source, Path, os.stat_result, Watermark | None, bool]] = {}
        for source in sources:
            for path in source.files():
                key = str(path)
                if key in planned:
                    continue
                wm = marks.get(key)
                if wm is not None and wm.source_id != source.id and any(
                        s.id == wm.source_id for s in sources):
                    continue
                try:
                    st = path.stat()
                except OSError:
                    continue
                idle = now - st.st_mtime >= idle_after
                report = FileReport(key, source.agent, start_offset=wm.offset if wm else 0,
                                    end_offset=wm.offset if wm else 0)
                if unchanged(st, wm, idle):
                    self.report.files.append(report)
                    continue
                planned[key] = (source, path, st, wm, idle)
        # Oldest first: a later file's facts supersede an earlier one's.
        return sorted(planned.values(), key=lambda p: (p[2].st_mtime, str(p[1])))

    def _run_all(self) -> None:
        plan = self._plan()
        total = sum(max(0, st.st_size - (wm.offset if wm else 0)) for _, _, st, wm, _ in plan)
        done = 0
        progress = self.options.progress
        for i, (source, path, st, wm, idle) in enumerate(plan):
            if self._stopping():
                self.report.stopped = True
                break
            file_report = self._file(source, path, st, wm, idle)
            self.report.files.append(file_report)
            done += max(0, st.st_size - file_report.start_offset)
            if progress is not None:
                progress(Progress(i + 1, len(plan), done, total, self.report.turns_read,
                                  str(path)))
        self._flush_daily_log()

    def _fail(self, fr: FileReport, wm: Watermark | None, source: Source, message: str) -> None:
        # The report names the file; a message that starts with the path says it twice.
        message = message.removeprefix(f"{fr.path}: ").replace(f": {fr.path!r}", "")
        fr.status, fr.message = "failed", message
        if not self.options.dry_run or self.options.scratch:
            ledger.record_failure(self.db, fr.path, source.id, message)

    def _file(self, source: Source, path: Path, st: os.stat_result, wm: Watermark | None,
              idle: bool) -> FileReport:
        fr = FileReport(str(path), source.agent)
        offset, line, why = resume_point(path, st, wm)
        fr.start_offset = fr.end_offset = offset
        ctx, state = FileContext.load(wm.reader_state if wm and why == "resume" else None)
        fmt = source.format if source.format != "auto" else (
            wm.format if wm and wm.format and why == "resume" else "auto")
        try:
            result = read_transcript(path, start_offset=offset, start_line=line, fmt=fmt,
                                     final=idle)
        except StaleOffset:
            offset, line, why = 0, 1, "rewritten"
            ctx, state = FileContext(), {}
            try:
                result = read_transcript(path, fmt=fmt, final=idle)
            except (UnknownFormat, OSError, ValueError) as exc:
                self._fail(fr, wm, source, str(exc))
                return fr
        except (UnknownFormat, OSError, ValueError) as exc:
            self._fail(fr, wm, source, str(exc))
            return fr
        fr.format = result.format
        fr.status = "reset" if why in ("truncated", "rewritten", "replaced") else "read"
        if why != "resume" and why != "new":
            fr.message = f"read again from the start: the file was {why}"
        self.report.problems += [str(p) for p in result.problems]
        for kind, n in result.skipped.items():
            self.report.skipped[f"{kind} lines"] += n
        self.report.unknown.update(result.unknown_types)
        if result.format == "unknown":
            fr.status, fr.message = "skipped", "nothing to judge the format by yet"
            return fr
        self.report.turns_read += len(result.turns)
        head_len = min(HEAD_BYTES, st.st_size)
        head = head_hash(path, head_len)
        failures = wm.failures if wm else 0
        extractor = self.extractor
        if (self.fallback is not None and failures >= self.settings.fallback_after_failures
                and self.settings.fallback_after_failures > 0):
            extractor = self.fallback
        cons = self._consolidator(source.agent)
        held = False
        """--since skipped older turns: the watermark stays before them from then on."""
        locked: float | None = None
        for turns, cut_offset, cut_line in batches(result, self.batch_turns):
            if self._stopping():
                self.report.stopped = True
                return fr
            if locked is not None:
                self._pause(locked)  # between two batches: let waiting writers in
            try:
                # The slow part (redaction, policy, extractor; an llm call) holds no lock.
                work = self._prepare_batch(source.agent, path, turns, ctx, extractor)
                held = held or work.older_skipped
                started = time.perf_counter()
                with self.db.write():
                    self._check_watermark(fr.path, fr.end_offset)
                    n = self._write_batch(source.agent, path, work, cons)
                    if not held:
                        state = {**state, "mtime_ns": st.st_mtime_ns, "head_len": head_len,
                                 "read_to": result.end_offset,
                                 "final": idle and cut_offset >= result.end_offset,
                                 "context": ctx.dump()}
                        ledger.advance(self.db, ledger.Advance(
                            fr.path, source.id, result.format, cut_offset, cut_line,
                            turns[-1].id if turns else (wm.last_entry_id if wm else None),
                            st.st_dev, st.st_ino, st.st_size, head, state))
                locked = time.perf_counter() - started
            except ExtractorError as exc:
                self._consolidators.pop(source.agent, None)
                self._fail(fr, wm, source, f"extractor {extractor.name}: {exc}")
                return fr
            except (MemtuiError, OSError, ValueError) as exc:
                # One bad file must not stop the others; the batch was rolled back.
                self._consolidators.pop(source.agent, None)
                self._fail(fr, wm, source, _describe(exc))
                return fr
            fr.turns += n
            if held:
                fr.message = ("the watermark stays before the turns older than --since; a "
                              "run without --since extracts them")
            else:
                fr.end_offset = cut_offset
        self._flush_daily_log(due_only=True)
        return fr

    def _pause(self, held: float) -> None:
        """Let other writers in between two batches (their busy handlers poll for the lock):
        sleep as long as the last batch held the lock, at most ``BATCH_PAUSE``. Between
        files, reading the next file and the daily log are pause enough."""
        if BATCH_PAUSE > 0 and not self.options.dry_run:
            time.sleep(min(BATCH_PAUSE, held))

    def _flush_daily_log(self, *, due_only: bool = False) -> None:
        """Append queued sections to the markdown; ``due_only``: only if the last append
        was ``DAILY_LOG_EVERY`` ago (the queue is durable, so waiting loses nothing)."""
        if due_only and time.monotonic() - self._log_flushed < DAILY_LOG_EVERY:
            return
        self._log_flushed = time.monotonic()
        if not self.options.dry_run:
            for path in dailylog.flush(self.home, self.db):
                if str(path) not in self.report.daily_logs:
                    self.report.daily_logs.append(str(path))

    def _check_watermark(self, path: str, expected: int) -> None:
        current = ledger.offset(self.db, path)
        if current is not None and current != expected and expected != 0:
            raise MemtuiError(f"{path}: the watermark moved under this run (another writer?)")

    def _prepare_batch(self, agent: str, path: Path, turns: Sequence[Turn], ctx: FileContext,
                       extractor: Extractor) -> _Work:
        """Everything of a batch that needs no write lock: ledger check, redaction, policy,
        extraction. Reads only (one extraction runs at a time, so the ledger holds still)."""
        work = _Work()
        if not turns:
            return work
        fresh = ledger.not_yet_extracted(self.db, agent, [(t.session, t.id) for t in turns])
        prepared: list[PreparedTurn] = []
        stamp = timeutil.iso(timeutil.now())
        for turn in turns:
            if (turn.session, turn.id) not in fresh:
                self.report.skipped["already extracted (seen in another file or read)"] += 1
                continue
            at = timeutil.iso(turn.timestamp) if turn.timestamp else None
            if self.since and at and at < self.since:
                self.report.skipped["older than --since"] += 1
                work.older_skipped = True
                continue
            work.ledger.append(LedgerEntry(agent, turn.session, turn.id, str(path), at or stamp))
            prep = self.preparer.prepare(turn, ctx)
            self.report.tally(turn.id, prep)
            if prep.turn is not None:
                prepared.append(prep.turn)
        if prepared:
            extraction = extractor.extract(prepared)
            _check_entries(extraction, prepared)
            if self.policy is not None:
                extraction = enforce(self.policy, extraction, prepared)
            work.extraction = extraction
        return work

    def _write_batch(self, agent: str, path: Path, work: _Work, cons: Consolidator) -> int:
        """Write one prepared batch inside the caller's transaction; returns turns recorded."""
        if work.extraction is not None:
            outcome = cons.apply(work.extraction, source_file=str(path))
            self.report.outcome.merge(outcome)
            heading = (f"Extracted {timeutil.now().strftime('%H:%M')} UTC from "
                       f"{path.name}")
            for day, lines in outcome.log.items():
                dailylog.queue(self.db, agent, day, lines, heading)
        if work.ledger:
            ledger.record_turns(self.db, work.ledger)
        self.report.turns_extracted += len(work.ledger)
        return len(work.ledger)


@dataclass
class _Work:
    """A batch prepared outside the write lock, ready to be written."""

    ledger: list[LedgerEntry] = field(default_factory=list)
    extraction: Extraction | None = None
    older_skipped: bool = False


def _describe(exc: BaseException) -> str:
    """One line for a file that failed (without its path: the report names the file)."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    return f"{type(exc).__name__}: {exc}"


def _check_entries(extraction: Extraction, prepared: Sequence[PreparedTurn]) -> None:
    """Every candidate must cite a message of its batch (an LLM may invent ids)."""
    ids = {p.id for p in prepared}
    cited = ([s.source_entry for s in extraction.state]
             + [e.source_entry for e in extraction.episodes]
             + [f.source_entry for f in extraction.facts])
    for entry in cited:
        if entry not in ids:
            raise ExtractorError(f"a candidate cites {entry!r}, "
                                 "which is not a message of this batch")


def run(home: Home, db: Database, options: Options | None = None, *,
        extractor: Extractor | None = None) -> RunReport:
    """Run the stenographer once over the home's sources (see ``Options``)."""
    return Stenographer(home, db, options, extractor=extractor).run()
