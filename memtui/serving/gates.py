"""Gates: what an agent must know before an action, and what it learned after.

The pre-action gate gathers, for one agent and one intended action: the best matching
flow with its steps, the rejections not to repeat, relevant active state, critical rules,
existing tools and capabilities, and the last infrastructure health results, all within a
token budget. The post-action gate grades the outcome and feeds it back: flow counters,
rule reinforcement or violations, one consolidated state entry.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from memtui import text, timeutil
from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.serving import flowmatch
from memtui.stores import flows as flow_store
from memtui.stores import gate_runs, jobs
from memtui.stores import rules as rule_store
from memtui.stores import state as state_store

SECTION_ORDER = ("flow", "rejections", "rules", "state", "tools", "health")
"""The order sections are shown in."""

# How much each kind of item matters when the gate must be cut to its budget: the least
# important items go first, whichever section they are in.
KEEP_ALWAYS = 100.0
"""The flow's name and critical (9-10) rules: cut only when nothing else is left."""
FLOW_STEP = 90.0
REJECTION = 70.0
RULE = 60.0
FAILING_CHECK = 55.0
STATE = 40.0
TOOL = 30.0
ALSO_MATCHES = 20.0
HEALTHY_CHECK = 10.0

TITLES = {
    "flow": "Flow to follow",
    "rejections": "Rejected before: do NOT repeat these",
    "rules": "Critical rules",
    "state": "Active state",
    "tools": "Existing tools and capabilities",
    "health": "Infrastructure health",
}

OPEN_GATE_WINDOW = timedelta(hours=24)
"""A post-action gate closes the agent's latest pre-action gate opened within this window."""


@dataclass
class GateItem:
    text: str
    ref: str = ""
    """What the line is about (rule:12, state:40, flow:deploy): for citing and reinforcing."""
    relevance: float = 0.0
    """How well the item matches the action (0..1); orders items within a section."""
    weight: float = 0.0
    """How much the kind of item matters when cutting to the budget (see KEEP_ALWAYS...)."""

    @property
    def tokens(self) -> int:
        return text.estimate_tokens(self.text) + 1


@dataclass
class GateSection:
    name: str
    title: str
    items: list[GateItem] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return text.estimate_tokens(self.title) + 2 + sum(i.tokens for i in self.items)


@dataclass
class PreGate:
    agent: str
    action: str
    budget: int
    sections: list[GateSection]
    flow: str | None
    cut: dict[str, int]
    """Items cut to fit the budget, per section."""
    gate_id: int | None = None

    @property
    def tokens(self) -> int:
        return sum(s.tokens for s in self.sections if s.items)

    def as_dict(self) -> dict[str, Any]:
        return {
            "agent": self.agent, "action": self.action, "flow": self.flow,
            "gate_id": self.gate_id, "budget": self.budget, "tokens": self.tokens,
            "cut": self.cut,
            "sections": [{"name": s.name, "title": s.title, "tokens": s.tokens,
                          "items": [{"text": i.text, "ref": i.ref} for i in s.items]}
                         for s in self.sections],
        }


def _relevance(stems: set[str], *texts: str) -> float:
    """The share of the action's stems found among the texts' stems (0..1)."""
    if not stems:
        return 0.0
    joined = " ".join(texts)
    lowered = joined.lower()
    # Fast path: a word's stem is a prefix of the word (a final y may have become "ies"),
    # so a text that contains none of them as a substring cannot match. Most rows the gate
    # scans are like that, and tokenising them all was most of its time.
    if not any((s[:-1] if s.endswith("y") else s) in lowered for s in stems):
        return 0.0
    found = set(text.keywords(joined))
    return len(stems & found) / len(stems)


def _flow_section(db: Database, agent: str, action: str) -> tuple[GateSection, str | None]:
    section = GateSection("flow", TITLES["flow"])
    matches = flowmatch.rank_flows(flow_store.list_flows(db, agent=agent), action)
    if not matches:
        section.items.append(GateItem("No flow matches this action: proceed carefully, and "
                                      "consider recording the steps as a flow afterwards."))
        return section, None
    best = matches[0].flow
    approval = "  [needs human approval]" if best.needs_approval else ""
    section.items.append(GateItem(f"{best.name}{approval}: {best.effectiveness_line()}",
                                  f"flow:{best.name}", 1.0, KEEP_ALWAYS))
    for n, step in enumerate(best.steps, 1):
        # Earlier steps matter more: a cut flow keeps its beginning.
        section.items.append(GateItem(f"  {n}. {step}", f"flow:{best.name}", 1.0,
                                      FLOW_STEP - n / 100))
    for other in matches[1:3]:
        section.items.append(GateItem(f"(also matches: {other.flow.name}, "
                                      f"{other.flow.effectiveness_line().lower()})",
                                      f"flow:{other.flow.name}", 0.2, ALSO_MATCHES))
    return section, best.name


def _ranked(items: list[GateItem], limit: int) -> list[GateItem]:
    # Stable: relevance first, then the order the query gave (newest first).
    return sorted(items, key=lambda i: -i.relevance)[:limit]


UNCONFIRMED = "possibly declined, awaiting review: "
"""How a rejection nobody confirmed yet (status ``proposed``) is shown: the extractor was
unsure, but acting on what a person may have refused costs more than a line."""


def _rejections(db: Database, agent: str, stems: set[str], limit: int) -> GateSection:
    items = []
    for r in state_store.recent(db, category="rejected",
                                statuses=(*state_store.REJECTION_STATUSES, "proposed"),
                                limit=500):
        rel = _relevance(stems, r.summary, r.detail, r.domain)
        own = r.agent == agent
        unsure = r.status == "proposed"
        if rel == 0 and (unsure or not own):
            continue  # an unrelated unconfirmed or other agent's refusal is noise here
        text = r.summary + (f" ({r.detail})" if r.detail else "")
        items.append(GateItem(UNCONFIRMED + text if unsure else text, f"state:{r.id}",
                              rel + (0.05 if own else 0.0) - (0.1 if unsure else 0.0),
                              REJECTION + rel - (0.5 if unsure else 0.0)))
    return GateSection("rejections", TITLES["rejections"], _ranked(items, limit))


def _rules(db: Database, agent: str, stems: set[str], min_score: float) -> GateSection:
    rules = [r for r in rule_store.list_rules(db, agent=agent, min_score=min_score, limit=200)
             if r.status in ("active", "critical")]
    items = [GateItem(f"[{r.score:.1f}] {r.rule}", f"rule:{r.id}",
                      _relevance(stems, r.rule, r.domain),
                      KEEP_ALWAYS if r.status == "critical" else RULE + r.score / 10)
             for r in rules]
    return GateSection("rules", TITLES["rules"],
                       sorted(items, key=lambda i: (-i.relevance, -i.weight)))


def _state(db: Database, agent: str, stems: set[str], limit: int) -> GateSection:
    items = []
    entries = state_store.recent(db, agent=agent, exclude_category="rejected", limit=300)
    for n, r in enumerate(entries):
        rel = _relevance(stems, r.summary, r.domain)
        recency = 0.1 if n < 5 else 0.0
        if rel == 0 and not recency:
            continue
        items.append(GateItem(f"{r.category} ({r.domain}, {r.created_at[:10]}): {r.summary}",
                              f"state:{r.id}", rel + recency, STATE + rel))
    return GateSection("state", TITLES["state"], _ranked(items, limit))


def tool_dirs(home: Home) -> list[Path]:
    """Configured tool folders; relative ones are relative to the memory home."""
    return [p if p.is_absolute() else home.root / p
            for p in (Path(d).expanduser() for d in home.settings.gates.tool_dirs)]


def _tools(home: Home, stems: set[str]) -> GateSection:
    section = GateSection("tools", TITLES["tools"])
    for folder in tool_dirs(home):
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            if not entry.is_file() or entry.name.startswith("."):
                continue
            rel = _relevance(stems, Path(entry.name).stem.replace("-", " ").replace("_", " "))
            if rel > 0:
                section.items.append(GateItem(f"script {entry.path}: use it rather than "
                                              f"writing a new one", f"tool:{entry.name}", rel,
                                              TOOL + rel))
    for capability in home.settings.gates.capabilities:
        rel = _relevance(stems, capability)
        if rel > 0:
            section.items.append(GateItem(f"capability: {capability}", "capability", rel,
                                          TOOL + rel))
    section.items.sort(key=lambda i: -i.relevance)
    return section


def _health(home: Home, db: Database) -> GateSection:
    section = GateSection("health", TITLES["health"])
    for name in home.settings.health.checks:
        last = jobs.last(db, "health", name)
        if last is None:
            section.items.append(GateItem(f"{name}: never run (memtui health)", f"health:{name}",
                                          0.0, HEALTHY_CHECK))
        else:
            ok = last.status == "ok"
            note = f" - {last.message}" if last.message and not ok else ""
            section.items.append(GateItem(
                f"{name}: {'ok' if ok else 'FAILING'} at {last.finished_at}{note}",
                f"health:{name}", 0.0 if ok else 1.0, HEALTHY_CHECK if ok else FAILING_CHECK))
    return section


def _fit(sections: list[GateSection], budget: int) -> dict[str, int]:
    """Cut the least important items until the gate fits its budget; say what was cut.

    Items go in order of weight (kind of item, then relevance), whatever their section, so
    a critical rule outlives the flow's "also matches" lines and a failing health check
    outlives a healthy one. The flow's name and critical rules go only if nothing else is
    left to cut.
    """
    cut: dict[str, int] = {}
    total = sum(s.tokens for s in sections if s.items)
    candidates = sorted(((item.weight, -i, section, item) for section in sections
                         for i, item in enumerate(section.items)), key=lambda c: c[:2])
    for _weight, _pos, section, item in candidates:
        if total <= budget:
            break
        section.items.remove(item)
        total -= item.tokens
        if not section.items:
            total -= text.estimate_tokens(section.title) + 2
        cut[section.name] = cut.get(section.name, 0) + 1
    return cut


def pre_gate(
    home: Home, db: Database, agent: str, action: str, *, budget: int | None = None,
    record: bool = True, actor: str = "gate",
) -> PreGate:
    """Everything the agent should know before doing ``action``, within the token budget."""
    if not action.strip():
        raise MemtuiError("gate pre needs the action the agent is about to take")
    settings = home.settings.gates
    budget = settings.token_budget if budget is None else budget
    stems = set(text.keywords(action))
    flow_section, flow_name = _flow_section(db, agent, action)
    sections = [
        flow_section,
        _rejections(db, agent, stems, settings.rejection_items),
        _rules(db, agent, stems, settings.critical_min_score),
        _state(db, agent, stems, settings.state_items),
        _tools(home, stems),
        _health(home, db),
    ]
    cut = _fit(sections, budget)
    gate = PreGate(agent, action, budget, sections, flow_name, cut)
    if record:
        # Only rules that bear on this action earn reinforcement when it passes.
        shown = [int(i.ref.split(":")[1]) for s in sections if s.name == "rules"
                 for i in s.items if i.relevance > 0]
        gate.gate_id = gate_runs.open_gate(db, agent, action, flow_name, shown, actor=actor)
    return gate


@dataclass
class PostGate:
    agent: str
    outcome: str
    summary: str
    gate_id: int | None
    action: str | None
    flow: str | None
    effectiveness: str | None
    reinforced: list[int]
    violated: list[int]
    state_id: int
    state_updated: bool
    advice: list[str]

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


CHANGED = ("script", "flow", "schema")


def post_gate(
    home: Home, db: Database, agent: str, outcome: str, summary: str, *,
    flow: str | None = None, lesson: str | None = None, changed: str | None = None,
    violated: tuple[int, ...] = (), actor: str = "cli", gate_id: int | None = None,
) -> PostGate:
    """Grade a finished task and feed the result back into flows, rules and state.

    It closes ``gate_id``, or else the agent's latest pre-action gate still open (within a
    day) that was opened after its last closed one: a post never reaches back past a gate
    that was already graded.
    """
    if outcome not in ("pass", "fail"):
        raise MemtuiError(f"outcome is pass or fail, not {outcome!r}")
    if changed is not None and changed not in CHANGED:
        raise MemtuiError(f"--changed is one of {', '.join(CHANGED)}, not {changed!r}")
    if not summary.strip():
        raise MemtuiError("gate post needs a summary of what happened")
    for rule_id in violated:
        rule_store.get(db, rule_id)  # fail before any write when an id is unknown
    if flow:
        flow_store.get(db, flow)
    now = timeutil.now()
    with db.write():
        gate = gate_runs.find_open(db, agent, gate_id, now - OPEN_GATE_WINDOW)
        flow_name = flow or (gate.flow if gate else None)
        effectiveness = None
        if flow_name:
            ran = flow_store.record(db, flow_name, outcome, actor=actor, agent=agent,
                                    note=summary[:200])
            effectiveness = ran.effectiveness_line()
        reinforced: list[int] = []
        if outcome == "pass" and gate:
            for rule_id in gate.rule_ids:
                if rule_id in violated:
                    continue
                try:
                    rule = rule_store.get(db, rule_id)
                except MemtuiError:
                    continue  # deleted since the gate showed it
                if rule.status != "retired":
                    rule_store.reinforce(db, rule_id, actor=actor, amount=0.5)
                    reinforced.append(rule_id)
        for rule_id in violated:
            rule_store.violate(db, rule_id, actor=actor)
        category = "learning" if lesson else "task"
        action = gate.action if gate else None
        head = lesson.strip() if lesson else f"[{outcome}] " + (action or summary)
        detail = f"{outcome}: {summary.strip()}" + (f" (flow {flow_name})" if flow_name else "")
        similar = state_store.find_similar(
            db, agent=agent, category=category, summary=head, threshold=0.82,
            within=OPEN_GATE_WINDOW, now=now)
        if similar:
            entry = state_store.update(
                db, similar.id, actor=actor, summary=head, detail=detail,
                status="completed" if outcome == "pass" and not lesson else "active")
        else:
            entry = state_store.add(db, state_store.NewState(
                agent=agent, category=category, summary=head, detail=detail,
                domain=flow_store.get(db, flow_name).domain if flow_name else "general",
                status="completed" if outcome == "pass" and not lesson else "active",
            ), actor=actor)
        if gate:
            gate_runs.close(db, gate.id, outcome, actor=actor, state_id=entry.id)
    advice = []
    if lesson and not changed:
        advice.append(
            "This lesson is not permanent yet: nothing changed a script, a flow or a schema. "
            "Turn it into a flow step (memtui flows add/edit) or a gate check (a tool script "
            "or a critical rule), or it will be forgotten as the entry ages.")
    return PostGate(agent, outcome, summary, gate.id if gate else None, action, flow_name,
                    effectiveness, reinforced, list(violated), entry.id, similar is not None,
                    advice)
