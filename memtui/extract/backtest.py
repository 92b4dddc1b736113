"""Backtest: replay historical sessions, oldest first, to seed a home with memory.

``backtest(home, db, paths)`` registers each path (file or glob) as a source of the
agent, runs the stenographer over those sources (so state, episodes and facts land as
in any extraction, behind watermarks), then mines the same sessions for two kinds of
proposals a human reviews:

- **flows**: a sequence of tool steps (tool name plus the program a shell call ran,
  e.g. ``exec: alembic``) that followed similar requests in at least
  ``MIN_FLOW_SUPPORT`` segments of different sessions and succeeded every time (no
  error, no refusal). They are added as *draft* flows, named from the requests'
  keywords.
- **lessons**: a failed tool step followed, in the same request segment, by the same
  step succeeding: "after <error>, <the fix> worked". They are added as ``learning``
  state entries (confidence 0.5, detail "Proposed by backtest"), through the same
  consolidation as extraction, so tombstones and near-duplicates are honoured, and then
  given the status ``proposed``: they wait in the console's review and are never served
  until a human accepts them.

Running it twice changes nothing: the watermarks and the ledger stop the extraction,
flows are keyed by name and lessons are consolidated.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memtui import text
from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.extract import stenographer as steno
from memtui.extract.candidates import Extraction, PreparedTurn, StateCandidate
from memtui.extract.capture import Policy
from memtui.extract.consolidate import Consolidator
from memtui.extract.prepare import FileContext, Preparer
from memtui.extract.scratch import scratch_copy
from memtui.home import Home
from memtui.stores import flows as flow_store
from memtui.stores import review
from memtui.stores import sources as source_store
from memtui.text import domain_of, shorten
from memtui.transcripts import read_transcript

MIN_FLOW_SUPPORT = 2
"""Successful segments (in different sessions) a step sequence needs to become a flow."""
MIN_FLOW_STEPS = 2
MAX_FLOW_STEPS = 8
REQUEST_SIMILARITY = 0.25
"""Keyword Jaccard above which two requests count as similar."""
_FILLER = frozenset("please again also thanks kindly just".split())
SHELL_TOOLS = frozenset({"bash", "exec", "shell", "run", "terminal", "sh", "cmd",
                         "run_command", "execute_command"})


@dataclass
class FlowProposal:
    name: str
    steps: list[str]
    trigger_phrases: list[str]
    support: int
    sessions: list[str]
    evidence: list[str]
    """Message ids of the requests the flow followed."""
    created: bool = False


@dataclass
class LessonProposal:
    summary: str
    detail: str
    source_entry: str
    session: str
    source_file: str | None = None
    created: bool = False


@dataclass
class BacktestResult:
    report: steno.RunReport
    flows: list[FlowProposal] = field(default_factory=list)
    lessons: list[LessonProposal] = field(default_factory=list)
    already_known: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"extraction": self.report.counts(),
                "flows": [asdict(f) for f in self.flows],
                "lessons": [asdict(les) for les in self.lessons],
                "already_known": self.already_known}


@dataclass
class _Step:
    key: str
    gist: str
    call_id: str
    turn: str
    outcome: str | None = None
    error: str = ""


@dataclass
class _Segment:
    """A human request and the tool steps that followed it, up to the next request."""

    session: str
    request: str
    request_id: str
    steps: list[_Step] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    """Keyword stems of the request (for similarity)."""
    names: list[str] = field(default_factory=list)
    """Its plain meaningful words (for naming a flow)."""
    source_file: str | None = None

    @property
    def succeeded(self) -> bool:
        return bool(self.steps) and all(s.outcome == "ok" for s in self.steps)


_SKIP_WITH_ARG = frozenset({"-u", "-g", "-C", "--user", "--group"})
_PREFIXES = frozenset({"sudo", "cd", "&&", "env", "time", "nice", "exec", "command"})


def step_key(name: str, gist: str) -> str:
    """What a step does: the tool, and for shell tools the program and its subcommand
    ("bash: git pull", "exec: alembic upgrade")."""
    if name.lower() not in SHELL_TOOLS or ": " not in gist:
        return name
    words: list[str] = []
    skip_next = False
    for token in re.split(r"\s+", gist.split(": ", 1)[1]):
        token = token.strip("'\"()")
        if skip_next:
            skip_next = False
            continue
        if token in _SKIP_WITH_ARG:
            skip_next = True
            continue
        if not token or "=" in token or token.startswith(("-", "$")):
            continue
        if not words and token == "cd":
            skip_next = True
            continue
        if not words and token in _PREFIXES:
            continue
        if token in ("|", ";", "&&", "||", ">", "2>&1"):
            break
        words.append(os.path.basename(token) if not words else token)
        if len(words) == 2 or not re.match(r"^[a-z][\w.-]*$", words[-1]):
            break
    return f"{name}: {' '.join(words)}" if words else name


def segments(prepared: list[PreparedTurn]) -> list[_Segment]:
    """Cut a session into request segments and attach tool outcomes to their steps."""
    out: list[_Segment] = []
    by_call: dict[str, _Step] = {}
    current: _Segment | None = None
    for pt in prepared:
        if pt.role == "user" and pt.text.strip() and not pt.results:
            current = _Segment(pt.turn.session, shorten(pt.text, 200), pt.id,
                               words=text.keywords(pt.text)[:20],
                               names=[w for w in dict.fromkeys(text.words(pt.text))
                                      if len(w) > 2 and w not in text.STOPWORDS
                                      and w not in _FILLER][:20],
                               source_file=pt.turn.source)
            out.append(current)
            continue
        if current is None:
            continue
        for call in pt.calls:
            step = _Step(step_key(call.name, call.gist), call.gist, call.id, pt.id)
            current.steps.append(step)
            by_call[call.id] = step
        for res in pt.results:
            answered = by_call.get(res.call_id)
            if answered is None:
                continue
            answered.outcome = "refused" if res.refused else ("error" if res.is_error else "ok")
            if res.is_error:
                answered.error = shorten(res.content.strip().split("\n", 1)[0], 120)
    return out


def _jaccard(a: list[str], b: list[str]) -> float:
    sa, sb = set(a), set(b)
    return len(sa & sb) / len(sa | sb) if sa and sb else 0.0


def _collapse(keys: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for key in keys:
        if not out or out[-1] != key:
            out.append(key)
    return tuple(out)


def mine_flows(segs: list[_Segment]) -> list[FlowProposal]:
    """Recurring successful step sequences that followed similar requests."""
    groups: dict[tuple[str, ...], list[_Segment]] = defaultdict(list)
    for seg in segs:
        if not seg.succeeded:
            continue
        seq = _collapse([s.key for s in seg.steps])
        if MIN_FLOW_STEPS <= len(seq) <= MAX_FLOW_STEPS:
            groups[seq].append(seg)
    proposals: list[FlowProposal] = []
    for seq, members in groups.items():
        # Keep the members whose request resembles at least one other member's.
        similar = [m for m in members
                   if any(o is not m and _jaccard(m.words, o.words) >= REQUEST_SIMILARITY
                          for o in members)]
        sessions = sorted({m.session for m in similar})
        if len(similar) < MIN_FLOW_SUPPORT or len(sessions) < 2:
            continue
        common = Counter(w for m in similar for w in set(m.names))
        order = {w: i for i, w in enumerate(reversed([w for m in similar for w in m.names]))}
        ranked = sorted(common, key=lambda w: (-common[w], -order[w]))  # ties: first seen
        top = [w for w in ranked if common[w] >= 2][:3] or [seq[0].split(":")[0]]
        name = "backtest-" + "-".join(re.sub(r"[^a-z0-9]+", "", w) for w in top)
        name = re.sub(r"-+", "-", name).strip("-")[:80]
        first = similar[0]
        steps: list[str] = []
        for key in seq:
            gist = next((s.gist for s in first.steps if s.key == key), key)
            steps.append(shorten(gist, 120))
        proposals.append(FlowProposal(
            name=name, steps=steps, trigger_phrases=[m.request for m in similar[:3]],
            support=len(similar), sessions=sessions, evidence=[m.request_id for m in similar]))
    return sorted(proposals, key=lambda p: (-p.support, p.name))


def mine_lessons(segs: list[_Segment]) -> list[LessonProposal]:
    """A failed step followed by the same step succeeding, within one request."""
    lessons: list[LessonProposal] = []
    for seg in segs:
        for i, failed in enumerate(seg.steps):
            if failed.outcome != "error":
                continue
            later = seg.steps[i + 1:]
            fixed = next((s for s in later if s.key == failed.key and s.outcome == "ok"), None)
            if fixed is None:
                continue
            between = [s.gist for s in later[: later.index(fixed)] if s.key != failed.key]
            how = f" after {shorten(between[-1], 80)}" if between else f" as {fixed.gist}"
            summary = shorten(f"Lesson: {failed.gist} failed ({failed.error or 'error'}); "
                              f"it worked{how}", 200)
            detail = (f"Proposed by backtest from session {seg.session} for the request "
                      f"“{seg.request}”. Failed: {failed.gist}. Worked: {fixed.gist}.")
            lessons.append(LessonProposal(summary, detail, fixed.turn, seg.session,
                                          seg.source_file))
            break
    return lessons


def _prepare_file(path: Path, fmt: str, policy: Policy | None) -> list[PreparedTurn]:
    result = read_transcript(path, fmt=fmt, final=True)
    preparer = Preparer(policy)
    ctx = FileContext()
    prepared = [preparer.prepare(t, ctx).turn for t in result.turns]
    return [p for p in prepared if p is not None]


def backtest(home: Home, db: Database, paths: list[str], *, agent: str, fmt: str = "auto",
             dry_run: bool = False) -> BacktestResult:
    """Seed a home from historical sessions; see the module docstring."""
    if not paths:
        raise MemtuiError("backtest needs at least one transcript file or glob")
    if dry_run:
        # Everything happens in a scratch copy of memory.db: no write lock on the real one.
        with scratch_copy(home, db) as scratch:
            return _backtest(home, scratch, paths, agent=agent, fmt=fmt, dry_run=True)
    # Each step commits on its own (batch by batch), so agents are not blocked for the
    # whole backtest; every step is idempotent, so an interrupted backtest just runs again.
    return _backtest(home, db, paths, agent=agent, fmt=fmt, dry_run=False)


def _backtest(home: Home, db: Database, paths: list[str], *, agent: str, fmt: str,
              dry_run: bool) -> BacktestResult:
    ids: list[int] = []
    known = {(s.pattern, s.agent): s for s in source_store.list_sources(db)}
    for raw in paths:
        absolute = os.path.abspath(os.path.expanduser(raw))
        source = known.get((absolute, agent))
        if source is None:
            source = source_store.add(db, raw, agent=agent, fmt=fmt, actor=steno.ACTOR)
        ids.append(source.id)
    stenographer = steno.Stenographer(home, db, steno.Options(
        agent=agent, source_ids=ids, extractor="local", dry_run=dry_run, scratch=dry_run,
        job=not dry_run))
    report = stenographer.run()
    result = BacktestResult(report)

    files: list[tuple[float, Path, str]] = []
    for source in source_store.list_sources(db, agent):
        if source.id in ids:
            for path in source.files():
                files.append((path.stat().st_mtime, path, source.format))
    segs: list[_Segment] = []
    for _, path, source_fmt in sorted(files):
        try:
            segs += segments(_prepare_file(path, source_fmt, stenographer.policy))
        except (MemtuiError, OSError, ValueError):
            continue  # the extraction report already names the file and the reason

    for flow in mine_flows(segs):
        if db.scalar("SELECT 1 FROM flows WHERE name = ?", (flow.name,)):
            result.already_known += 1
            continue
        flow_store.add(db, flow.name, actor=steno.ACTOR, steps=flow.steps,
                       trigger_phrases=flow.trigger_phrases, agent=agent, status="draft",
                       domain=domain_of(" ".join(flow.trigger_phrases)))
        flow.created = True
        result.flows.append(flow)

    lessons = mine_lessons(segs)
    if lessons:
        cons = Consolidator(db, agent, threshold=home.settings.extract.similarity,
                            actor=steno.ACTOR)
        for lesson in lessons:
            # A proposal waiting for review is not active, so consolidation would not see it.
            if db.scalar("SELECT 1 FROM state WHERE agent = ? AND status = 'proposed' "
                         "AND source_entry = ? AND summary = ?",
                         (agent, lesson.source_entry, lesson.summary)):
                result.already_known += 1
                continue
            extraction = Extraction(state=[StateCandidate(
                category="learning", summary=lesson.summary, source_entry=lesson.source_entry,
                domain=domain_of(lesson.summary), detail=lesson.detail, confidence=0.5,
                session=lesson.session)])
            outcome = cons.apply(extraction, source_file=lesson.source_file)
            if sum(outcome.added.values()):
                added = db.scalar(
                    "SELECT max(id) FROM state WHERE agent = ? AND category = 'learning' "
                    "AND status = 'active' AND source_entry = ?", (agent, lesson.source_entry))
                if added is not None:
                    # A lesson waits in the console's review; it is not served until accepted.
                    review.propose(db, int(added), actor=steno.ACTOR)
                lesson.created = True
                result.lessons.append(lesson)
            else:
                result.already_known += 1
    return result

