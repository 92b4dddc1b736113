"""The stenographer: reads transcripts from per-file watermarks and writes structured memory.

One run walks every registered source (or one), oldest file first. For each file it

1. checks the watermark against the file: same device/inode, not shorter than the
   offset, the same first bytes (``head_hash``). A truncated, replaced or rewritten file
   is read again from the start; the ledger of extracted turns (``extracted_turns``,
   keyed by agent, session and message id) keeps that from duplicating anything.
2. reads the new turns (``memtui.transcripts.read_transcript``) and cuts them into
   batches at points where no earlier turn extends past the cut.
3. per batch, first without any lock: skips turns the ledger already has, redacts
   every text (``memtui.redact``), applies the policy (``extract.policy``) and runs the
   extractor. Then in ONE short write transaction: consolidates the candidates
   (``extract.consolidate``), records the turns in the ledger, queues the daily-log
   section and advances the watermark to the cut. A crash, a kill or an extractor
   error writes nothing of the batch: the watermark never passes unwritten data.
   Between batches the run pauses ``BATCH_PAUSE`` seconds, so other writers (``gate
   post``, ``state add``) get the write lock without waiting for the whole run.
4. after each commit, appends the queued sections to memory/YYYY-MM-DD.md.

A dry run does all of this in a scratch copy of memory.db (``scratch_copy``, taken with
SQLite's backup API under a read snapshot), so it never holds the real database's
write lock and reports exactly what a real run would do.

An extractor failure stops that file for this run, counts ``failures`` on its watermark
and leaves the offset where it was, so the next run retries the same turns (three
failed runs in a row are backfilled by the fourth). With the llm extractor, a batch
that failed ``[extract] fallback_after_failures`` runs in a row is extracted by the
local extractor instead, so one poisoned batch cannot stall a source forever.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memtui import timeutil
from memtui.db import Database
from memtui.errors import MemtuiError, NotFound
from memtui.extract.candidates import (
    CallView,
    Extraction,
    Extractor,
    ExtractorError,
    PreparedTurn,
    ResultView,
)
from memtui.extract.consolidate import Consolidator, Outcome
from memtui.extract.enforce import PolicyLike, enforce
from memtui.extract.local import REFUSED, LocalExtractor
from memtui.home import Home
from memtui.redact import redact
from memtui.stores import jobs
from memtui.stores.sources import Source, list_sources
from memtui.transcripts import ReadResult, StaleOffset, Turn, UnknownFormat, read_transcript
from memtui.workspace import dailylog

ACTOR = "extractor"
JOB_KIND = "extraction"
HEAD_BYTES = 1024
"""How many leading bytes of a file identify it (``head_hash``)."""
RESULT_CHARS = 600
"""Tool output kept per result for extractors (errors and refusals are short)."""
GIST_CHARS = 160
CONTEXT_CALLS = 64
"""Tool calls remembered per file across runs, so a later refusal can name the call."""
FIX_WINDOW = 3
"""Assistant turns after a tool error that may describe its fix."""
BATCH_PAUSE = 0.01
"""Seconds the run sleeps after each committed batch (at most as long as the batch held
the write lock), so waiting writers get the lock."""
SCRATCH_PREFIX = ".dry-run-"
"""Folder (in the home, ``.dry-run-<pid>-<random>``) of a dry run's scratch copy of
memory.db; removed afterwards, or by a later dry run once that process is gone."""


Gate = PolicyLike
"""What the stenographer needs of a policy (memtui.extract.policy.Policy)."""


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


@dataclass
class FileReport:
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


class Busy(MemtuiError):
    """Another extraction holds the home's extraction lock."""


def _alive(pid: str) -> bool:
    """Whether the process that made a scratch folder still runs."""
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@contextmanager
def scratch_copy(home: Home, db: Database) -> Iterator[Database]:
    """A throwaway copy of memory.db, taken with the backup API under one read snapshot
    (readers never block writers in WAL mode), removed afterwards."""
    home.root.mkdir(parents=True, exist_ok=True)
    for stale in home.root.glob(SCRATCH_PREFIX + "*"):
        if not _alive(stale.name[len(SCRATCH_PREFIX):].split("-", 1)[0]):
            shutil.rmtree(stale, ignore_errors=True)  # left behind by a killed dry run
    folder = tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-", dir=home.root)
    try:
        copy = Database(Path(folder) / "memory.db")
        try:
            with copy.conn.backup("main", db.conn, "main") as backup:
                backup.step(-1)
            yield copy
        finally:
            copy.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- the file context carried across batches and runs ------------------------------------


@dataclass
class FileContext:
    """What extraction of one file remembers between turns (stored in ``reader_state``)."""

    previous_assistant: str = ""
    fix_window: int = 0
    calls: dict[str, tuple[str, str]] = field(default_factory=dict)

    @classmethod
    def load(cls, raw: str | None) -> tuple[FileContext, dict[str, Any]]:
        try:
            data = json.loads(raw) if raw else {}
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        ctx = data.get("context") or {}
        calls = ctx.get("calls") or {}
        return cls(str(ctx.get("previous_assistant", "")), int(ctx.get("fix_window", 0)),
                   {k: (v[0], v[1]) for k, v in calls.items()
                    if isinstance(v, list) and len(v) == 2}), data

    def dump(self) -> dict[str, Any]:
        calls = dict(list(self.calls.items())[-CONTEXT_CALLS:])
        return {"previous_assistant": self.previous_assistant, "fix_window": self.fix_window,
                "calls": {k: list(v) for k, v in calls.items()}}


# -- preparing turns ---------------------------------------------------------------------


def gist(name: str, args: dict[str, Any]) -> str:
    """One line saying what a tool call did: its name and its most telling argument."""
    value: Any = None
    for key in ("command", "cmd", "pattern", "file_path", "path", "url", "query", "prompt",
                "description", "skill", "name", "code", "message", "text"):
        if isinstance(args.get(key), str) and args[key].strip():
            value = args[key]
            break
    if value is None:
        value = next((v for v in args.values() if isinstance(v, str) and v.strip()), None)
    if value is None:
        return name
    line = " ".join(str(value).split())
    if len(line) > GIST_CHARS:
        cut = line[:GIST_CHARS]
        # Cut at a space so a secret is never split (split secrets escape redaction).
        line = cut[: cut.rfind(" ")] + " …" if " " in cut else ""
    return f"{name}: {line}" if line else name


def _tail(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    space = cut.find(" ")
    return cut[space + 1:] if space >= 0 else cut


def _head(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit]
    space = max(cut.rfind(" "), cut.rfind("\n"))
    return cut[:space] if space > 0 else ""


class Preparer:
    """Redacts turns, applies the policy and tracks the file context."""

    def __init__(self, policy: Gate | None, report: RunReport) -> None:
        self.policy = policy
        self.report = report

    def _redact(self, value: str) -> str:
        if not value:
            return value
        r = redact(value)
        if r.findings:
            self.report.redacted.update(f.kind for f in r.findings)
        return r.text

    def prepare(self, turn: Turn, ctx: FileContext) -> PreparedTurn | None:
        skipped = self.report.skipped
        if turn.role == "system" and turn.kind != "compaction":
            skipped["system or harness message"] += 1
            return None
        text = self._redact(turn.text)
        calls = tuple(CallView(c.id, c.name, self._redact(gist(c.name, c.input)))
                      for c in turn.tool_calls)
        results: list[ResultView] = []
        for r in turn.tool_results:
            content = self._redact(_head(r.content, RESULT_CHARS)) if (
                r.is_error or len(r.content) < 2 * RESULT_CHARS) else ""
            refused = r.is_error and bool(REFUSED.search(r.content[:2000]))
            known = ctx.calls.get(r.tool_call_id)
            call = CallView(r.tool_call_id, known[0], known[1]) if known else None
            results.append(ResultView(r.tool_call_id, r.name or (known[0] if known else None),
                                      content, r.is_error, refused, call))
        after_error = ctx.fix_window > 0
        captures: tuple[Any, ...] = ()
        if self.policy is not None and text:
            verdict = self.policy.evaluate(text, turn.role, after_tool_error=after_error)
            if verdict.refused is not None:
                # Forbidden text is dropped; the turn's tool calls are not text and stay.
                skipped[f"text refused by policy ({verdict.refused.kind})"] += 1
                self.report.refusals.append(f"{turn.id}: {verdict.refused.reason}")
                text = ""
                if not calls and not results:
                    return None
            else:
                captures = tuple(verdict.captured)
        prepared = PreparedTurn(turn=turn, text=text, calls=calls, results=tuple(results),
                                after_tool_error=after_error,
                                previous_assistant=ctx.previous_assistant, captures=captures)
        # Update the context for the turns that follow.
        for c in calls:
            ctx.calls[c.id] = (c.name, c.gist)
        if any(r.is_error and not r.refused for r in results):
            ctx.fix_window = FIX_WINDOW
        if turn.role == "assistant" and text:
            ctx.previous_assistant = _tail(text, 600)
            if after_error:
                ctx.fix_window -= 1
        return prepared


# -- file identity -----------------------------------------------------------------------


def head_hash(path: Path, length: int) -> str:
    with path.open("rb") as fh:
        return hashlib.sha1(fh.read(length)).hexdigest()


@dataclass
class Watermark:
    """One row of source_files, as far as a run needs it."""

    path: str
    source_id: int
    format: str | None
    offset: int
    line: int
    last_entry_id: str | None
    device: int | None
    inode: int | None
    size: int | None
    head_hash: str | None
    reader_state: str | None
    failures: int
    last_error: str | None

    @property
    def state(self) -> dict[str, Any]:
        return FileContext.load(self.reader_state)[1]


def _watermarks(db: Database) -> dict[str, Watermark]:
    rows = db.query("SELECT path, source_id, format, offset, line, last_entry_id, device, "
                    "inode, size, head_hash, reader_state, failures, last_error FROM source_files")
    return {r["path"]: Watermark(**r) for r in rows}


def resume_point(path: Path, st: os.stat_result, wm: Watermark | None) -> tuple[int, int, str]:
    """(offset, line, why) to read from: the watermark, or 0 when the file is not the same."""
    if wm is None or wm.offset == 0:
        return 0, 1, "new"
    if st.st_size < wm.offset:
        return 0, 1, "truncated"
    head_len = int(wm.state.get("head_len", 0))
    if wm.head_hash and head_len and head_hash(path, head_len) != wm.head_hash:
        return 0, 1, "rewritten" if (st.st_dev, st.st_ino) == (wm.device, wm.inode) else "replaced"
    return wm.offset, wm.line, "resume"


def unchanged(st: os.stat_result, wm: Watermark | None, idle_final: bool) -> bool:
    """Nothing to do: the file is as it was at the last successful read."""
    if wm is None or wm.size is None or wm.failures:
        return False
    if (st.st_dev, st.st_ino, st.st_size) != (wm.device, wm.inode, wm.size):
        return False
    if wm.state.get("mtime_ns") != st.st_mtime_ns:
        return False
    # A held-back tail (torn line, open message) is read once the file has gone idle.
    return wm.offset >= st.st_size or not idle_final or bool(wm.state.get("final"))


# -- batching ----------------------------------------------------------------------------


def batches(result: ReadResult, size: int) -> Iterator[tuple[list[Turn], int, int]]:
    """(turns, cut offset, cut line): safe watermarks after each batch.

    A cut before turn i is safe when no earlier turn ends after turn i starts (a Claude
    Code message spans the tool results interleaved with it).
    """
    turns = result.turns
    start = 0
    max_end = 0
    for i, turn in enumerate(turns):
        if i - start >= size and max_end <= turn.offset:
            yield turns[start:i], turn.offset, turn.line
            start = i
        max_end = max(max_end, turn.end_offset)
    yield turns[start:], result.end_offset, result.end_line


# -- the run -----------------------------------------------------------------------------


@contextmanager
def run_lock(home: Home, *, wait: bool = False) -> Iterator[None]:
    """One extraction at a time per home (a kernel lock: a killed run releases it)."""
    home.root.mkdir(parents=True, exist_ok=True)
    fd = os.open(home.root / ".extract.lock", os.O_CREAT | os.O_RDWR, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise Busy("another extraction is running in this home; try again when it "
                       "ends") from None
        yield
    finally:
        os.close(fd)


def make_extractor(home: Home, name: str) -> Extractor:
    """The extractor called ``name`` ("local" or "llm")."""
    if name == "local":
        return LocalExtractor()
    if name == "llm":
        from memtui.extract.llm import LLMExtractor

        return LLMExtractor.from_settings(home.settings.extract)
    raise MemtuiError(f"unknown extractor {name!r}; expected local or llm")


def choose_extractor(home: Home, requested: str | None) -> tuple[str, str | None]:
    """The extractor to use and a warning: llm needs ANTHROPIC_API_KEY.

    Asked for on the command line without a key is an error; configured in memtui.toml
    without a key falls back to the local extractor with a warning.
    """
    name = requested or home.settings.extract.extractor
    if name == "llm" and not os.environ.get("ANTHROPIC_API_KEY"):
        if requested:
            raise MemtuiError("--extractor llm needs ANTHROPIC_API_KEY in the environment")
        return "local", ("[extract] extractor is llm but ANTHROPIC_API_KEY is not set; "
                         "using the local extractor")
    return name, None


def load_gate(home: Home) -> Gate | None:
    """The home's policy (policy.yaml, else the default), or None if policy.py is absent."""
    try:
        from memtui.extract import policy
    except ImportError:  # pragma: no cover - policy.py ships with memtui
        return None
    loaded: Gate
    if home.policy_path.exists():
        loaded = policy.load_policy(home.policy_path)
    else:
        loaded = policy.default_policy()
    return loaded


def select_sources(db: Database, agent: str | None, source: str | None) -> list[Source]:
    found = list_sources(db, agent)
    if source is None:
        return found
    if source.isdigit():
        chosen = [s for s in found if s.id == int(source)]
    else:
        absolute = os.path.abspath(os.path.expanduser(source))
        chosen = [s for s in found if s.pattern == absolute]
        if not chosen:
            chosen = [s for s in found if Path(absolute) in s.files()]
    if not chosen:
        raise NotFound(f"no registered source matches {source!r} "
                       f"(add it: memtui sources add {source})")
    return chosen


class Stenographer:
    """One run over a home's sources; ``run()`` does the work and returns the report."""

    def __init__(self, home: Home, db: Database, options: Options | None = None, *,
                 extractor: Extractor | None = None, gate: Gate | None | bool = True) -> None:
        self.home = home
        self.db = db
        self.options = options or Options()
        settings = home.settings.extract
        self.settings = settings
        name = self.options.extractor or settings.extractor
        self.extractor = extractor or make_extractor(home, name)
        self.fallback: Extractor | None = (
            LocalExtractor() if self.extractor.name != "local" else None)
        self._gate_arg = gate
        self._gate_loaded = False
        self._gate: Gate | None = None
        self.report = RunReport(dry_run=self.options.dry_run, extractor=self.extractor.name)
        self._preparer: Preparer | None = None
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
    def gate(self) -> Gate | None:
        """The policy, parsed on first use (an idle run never pays for the YAML)."""
        if not self._gate_loaded:
            arg = self._gate_arg
            self._gate = load_gate(self.home) if arg is True else (arg or None)
            self._gate_loaded = True
        return self._gate

    @property
    def preparer(self) -> Preparer:
        if self._preparer is None:
            self._preparer = Preparer(self.gate, self.report)
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
        marks = _watermarks(self.db)
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
                return
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
        if self.options.dry_run and not self.options.scratch:
            return
        with self.db.write():
            self.db.execute(
                "INSERT INTO source_files(path, source_id, offset, line, failures, last_error, "
                "updated_at) VALUES (?,?,?,?,?,?,?) ON CONFLICT(path) DO UPDATE SET "
                "failures = failures + 1, last_error = excluded.last_error, "
                "updated_at = excluded.updated_at",
                (fr.path, source.id, 0, 1, 1, message[:1000], timeutil.iso(timeutil.now())))

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
                                 "final": idle and cut_offset >= result.end_offset,
                                 "context": ctx.dump()}
                        self._advance(fr.path, source.id, result.format, cut_offset, cut_line,
                                      turns[-1].id if turns else (
                                          wm.last_entry_id if wm else None),
                                      st, head, state)
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
        self._flush_daily_log()
        return fr

    def _pause(self, held: float) -> None:
        """Let other writers in between two batches (their busy handlers poll for the lock):
        sleep as long as the last batch held the lock, at most ``BATCH_PAUSE``. Between
        files, reading the next file and the daily log are pause enough."""
        if BATCH_PAUSE > 0 and not self.options.dry_run:
            time.sleep(min(BATCH_PAUSE, held))

    def _flush_daily_log(self) -> None:
        """Append queued sections to the markdown (once per file: the queue is durable)."""
        if not self.options.dry_run:
            for path in dailylog.flush(self.home, self.db):
                if str(path) not in self.report.daily_logs:
                    self.report.daily_logs.append(str(path))

    def _check_watermark(self, path: str, expected: int) -> None:
        current = self.db.scalar("SELECT offset FROM source_files WHERE path = ?", (path,))
        if current is not None and current != expected and expected != 0:
            raise MemtuiError(f"{path}: the watermark moved under this run (another writer?)")

    def _advance(self, path: str, source_id: int, fmt: str, offset: int, line: int,
                 entry: str | None, st: os.stat_result, head: str, state: dict[str, Any]
                 ) -> None:
        self.db.execute(
            "INSERT INTO source_files(path, source_id, format, offset, line, last_entry_id, "
            "device, inode, size, head_hash, reader_state, failures, last_error, updated_at) "
            "VALUES (?,?,?,?,?,?,?,?,?,?,?,0,NULL,?) ON CONFLICT(path) DO UPDATE SET "
            "source_id = excluded.source_id, format = excluded.format, offset = excluded.offset, "
            "line = excluded.line, last_entry_id = excluded.last_entry_id, "
            "device = excluded.device, inode = excluded.inode, size = excluded.size, "
            "head_hash = excluded.head_hash, reader_state = excluded.reader_state, "
            "failures = 0, last_error = NULL, updated_at = excluded.updated_at",
            (path, source_id, fmt, offset, line, entry, st.st_dev, st.st_ino, st.st_size, head,
             json.dumps(state), timeutil.iso(timeutil.now())))

    def _prepare_batch(self, agent: str, path: Path, turns: Sequence[Turn], ctx: FileContext,
                       extractor: Extractor) -> _Work:
        """Everything of a batch that needs no write lock: ledger check, redaction, policy,
        extraction. Reads only (one extraction runs at a time, so the ledger holds still)."""
        work = _Work()
        if not turns:
            return work
        fresh = self._not_yet_extracted(agent, turns)
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
            work.ledger.append((agent, turn.session, turn.id, str(path), at or stamp))
            pt = self.preparer.prepare(turn, ctx)
            if pt is not None:
                prepared.append(pt)
        if prepared:
            extraction = extractor.extract(prepared)
            _check_entries(extraction, prepared)
            if self.gate is not None:
                extraction = enforce(self.gate, extraction, prepared)
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
            self.db.executemany(
                "INSERT OR IGNORE INTO extracted_turns(agent, session, entry, source_file, at) "
                "VALUES (?,?,?,?,?)", work.ledger)
        self.report.turns_extracted += len(work.ledger)
        return len(work.ledger)

    def _not_yet_extracted(self, agent: str, turns: Sequence[Turn]) -> set[tuple[str, str]]:
        keys = {(t.session, t.id) for t in turns}
        by_session: dict[str, list[str]] = {}
        for session, entry in keys:
            by_session.setdefault(session, []).append(entry)
        for session, entries in by_session.items():
            for i in range(0, len(entries), 500):
                chunk = entries[i:i + 500]
                marks = ",".join("?" * len(chunk))
                for (entry,) in self.db.rows(
                        f"SELECT entry FROM extracted_turns WHERE agent = ? AND session = ? "
                        f"AND entry IN ({marks})", [agent, session, *chunk]):
                    keys.discard((session, entry))
        return keys


@dataclass
class _Work:
    """A batch prepared outside the write lock, ready to be written."""

    ledger: list[tuple[str, str, str, str, str]] = field(default_factory=list)
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
