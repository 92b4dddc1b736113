"""Tiered recovery after a context loss: what an agent reloads, within a token budget.

Tier 0 is active state and rejections (about 1,000 tokens); tier 1 adds the last 30
messages of the latest session; tier 2 today's daily recap; tier 3 the session's full
log. The least important items go first when the budget is short, and a tier that would
push the window past the flush threshold is refused (recovering must not trigger the
next compaction). Group and shared sessions never get private state or facts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from memtui import timeutil
from memtui.context.report import context_report
from memtui.context.sessions import is_group_session, newest_session
from memtui.context.speakers import label
from memtui.errors import MemtuiError, NotFound
from memtui.home import Home
from memtui.stores import facts as fact_store
from memtui.stores import state as state_store
from memtui.text import estimate_tokens
from memtui.transcripts import Turn, read_transcript

TIER0_TOKENS = 1_000
RECENT_MESSAGES = 30
STATE_PRIORITY = {"rejected": 100, "agent_state": 90, "task": 85, "decision": 80,
                  "context": 60, "learning": 55, "discovery": 50}
SECTIONS = ("Rejected: do NOT re-suggest", "Active state", "Known facts", "Recent messages",
            "Today's recap", "Full log")


@dataclass(frozen=True)
class RecoveryItem:
    section: str
    text: str
    tokens: int
    priority: float


@dataclass(frozen=True)
class Recovery:
    agent: str
    tier: int
    budget: int
    tokens: int
    group: bool
    session: Path | None
    sections: list[tuple[str, list[str]]]
    cut: list[str] = field(default_factory=list)
    """What was left out to fit, in words."""
    refused: bool = False
    reason: str = ""
    window_used: int = 0
    flush_at: int = 0

    def as_markdown(self) -> str:
        out = [f"# memtui recovery for {self.agent}, tier {self.tier} (~{self.tokens} tokens)"]
        for title, lines in self.sections:
            out.append(f"\n## {title}")
            out.extend(lines)
        return "\n".join(out) + "\n"


def is_private(home: Home, *, domain: str = "", key: str = "") -> bool:
    """Marked private: a state domain, or a fact key prefix, in [context] private_domains."""
    for name in home.settings.context.private_domains:
        low = name.lower()
        if domain.lower() == low:
            return True
        k = key.lower()
        if k == low or k.startswith((f"{low}.", f"{low}:", f"{low}/", f"{low} ")):
            return True
    return False


def _state_items(home: Home, agent: str, group: bool) -> list[RecoveryItem]:
    db = home.open_db()
    try:
        with db.read():
            rejected = state_store.recent(db, category="rejected", agent=agent,
                                          statuses=state_store.REJECTION_STATUSES, limit=60)
            # Per category, so a flood of one kind never hides the few that matter more.
            active = [e for category in STATE_PRIORITY if category != "rejected"
                      for e in state_store.recent(db, category=category, agent=agent,
                                                  limit=200)]
            facts = fact_store.list_facts(db, agent, limit=200)
    finally:
        db.close()
    items = []
    for rank, e in enumerate([*rejected, *active]):
        if group and is_private(home, domain=e.domain):
            continue
        section = SECTIONS[0] if e.category == "rejected" else SECTIONS[1]
        text = f"- {e.summary}" if e.category == "rejected" else f"- [{e.category}] {e.summary}"
        items.append(RecoveryItem(section, text, estimate_tokens(text),
                                  STATE_PRIORITY.get(e.category, 40) - rank / 1000))
    for rank, f in enumerate(facts):
        if group and is_private(home, key=f.key):
            continue
        text = f"- {f.key}: {f.value}"
        items.append(RecoveryItem(SECTIONS[2], text, estimate_tokens(text), 40 - rank / 1000))
    return items


def _message_line(turn: Turn, limit: int) -> str | None:
    if turn.role == "tool":
        parts = [f"[{r.name or 'tool'}{' error' if r.is_error else ''}] {r.content}"
                 for r in turn.tool_results]
        text = " ".join(parts)
    elif turn.text:
        text = f"[{label(turn)}] {turn.text}"
    else:
        return None
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _message_items(turns: list[Turn], section: str, priority: float,
                   limit: int) -> list[RecoveryItem]:
    lines = [line for t in turns if (line := _message_line(t, limit))]
    n = max(1, len(lines))
    # Newer messages matter more: the oldest are cut first.
    return [RecoveryItem(section, line, estimate_tokens(line), priority + i / n / 10)
            for i, line in enumerate(lines)]


def _session_turns(path: Path | None) -> list[Turn]:
    if path is None:
        return []
    turns = read_transcript(path, final=True).turns
    # Heartbeats, wrappers and hook echoes are not the conversation; tool results are.
    return [t for t in turns if t.kind == "message" and t.role != "system"
            and (t.author != "machine" or t.role == "tool")]


def recover(home: Home, agent: str, tier: int, *, budget: int | None = None,
            group: bool | None = None, session: Path | None = None) -> Recovery:
    """Assemble tier ``tier`` (0-3) for ``agent``; ``group`` defaults to the session's kind."""
    if tier not in (0, 1, 2, 3):
        raise MemtuiError(f"recovery tier must be 0, 1, 2 or 3, not {tier}")
    budget = home.settings.context.recovery_budget_tokens if budget is None else budget
    path = session
    if path is None:
        try:
            path = newest_session(home, agent)
        except NotFound:
            path = None  # no session yet: memory alone
    if group is None:
        group = path is not None and is_group_session(home, path)
    state = _state_items(home, agent, group)
    cut: list[str] = []
    state.sort(key=lambda i: -i.priority)
    kept_state, used = [], 0
    for item in state:
        if used + item.tokens > TIER0_TOKENS:
            continue
        kept_state.append(item)
        used += item.tokens
    if len(kept_state) < len(state):
        cut.append(f"tier 0 keeps ~{TIER0_TOKENS:,} tokens: left out "
                   f"{len(state) - len(kept_state)} lower-priority state entries and facts")
    items = list(kept_state)
    turns = _session_turns(path) if tier >= 1 else []
    if tier >= 1:
        items += _message_items(turns[-RECENT_MESSAGES:], SECTIONS[3], 30, 600)
    if tier >= 2:
        from memtui.workspace.dailylog import path_for

        day = timeutil.now().date().isoformat()
        recap = path_for(home, agent, day)
        if not recap.is_file():
            older = sorted(p for p in recap.parent.glob("????-??-??.md") if p.stem <= day)
            if older:
                cut.append(f"no daily recap for {day}: the latest, {older[-1].stem}, instead")
                recap = older[-1]
        if recap.is_file():
            lines = [ln for ln in recap.read_text(encoding="utf-8").splitlines() if ln.strip()]
            n = max(1, len(lines))
            items += [RecoveryItem(SECTIONS[4], ln, estimate_tokens(ln), 20 + i / n / 10)
                      for i, ln in enumerate(lines)]
        else:
            cut.append(f"no daily recap for {day} ({recap})")
    if tier >= 3:
        items += _message_items(turns[:-RECENT_MESSAGES], SECTIONS[5], 10, 4_000)
    total = sum(i.tokens for i in items)
    if total > budget:
        dropped: dict[str, int] = {}
        gone: set[int] = set()
        for index in sorted(range(len(items)), key=lambda i: items[i].priority):
            if total <= budget:
                break
            gone.add(index)
            total -= items[index].tokens
            dropped[items[index].section] = dropped.get(items[index].section, 0) + 1
        items = [item for i, item in enumerate(items) if i not in gone]
        cut += [f"left out {n} of {title} (least important first) to fit the budget of "
                f"{budget:,} tokens" for title, n in dropped.items()]
    sections = [(title, [i.text for i in items if i.section == title]) for title in SECTIONS]
    sections = [(t, lines) for t, lines in sections if lines]
    tokens = sum(estimate_tokens(line) for _, lines in sections for line in lines)
    result = Recovery(agent, tier, budget, tokens, group, path, sections, cut)
    return _anti_loop(home, agent, result)


def _anti_loop(home: Home, agent: str, result: Recovery) -> Recovery:
    """Refuse a tier that would push the window past the flush threshold."""
    if result.session is None:
        from memtui.context.accounting import flush_threshold

        cfg = home.settings.context
        used, flush_at = 0, flush_threshold(cfg.window_tokens, cfg)
    else:
        report = context_report(home, agent, result.session)
        used, flush_at = report.used, report.flush_at
    if used + result.tokens > flush_at:
        reason = (f"refused: ~{result.tokens:,} tokens of recovery on top of ~{used:,} in the "
                  f"window would pass the flush threshold {flush_at:,} and start the next "
                  "compaction; use a lower tier or a smaller --budget")
        return Recovery(result.agent, result.tier, result.budget, result.tokens, result.group,
                        result.session, [], result.cut, True, reason, used, flush_at)
    return Recovery(result.agent, result.tier, result.budget, result.tokens, result.group,
                    result.session, result.sections, result.cut, False, "", used, flush_at)
