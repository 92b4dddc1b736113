"""Session pruning: which old tool results would be soft-trimmed or cleared, OpenClaw-style.

The transcript is never rewritten: a plan says what the agent's next request would carry,
and ``pruned_context`` renders that request's conversation for a file.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from memtui import timeutil
from memtui.config import ContextSettings
from memtui.context.accounting import Accountant, Item
from memtui.context.report import ContextReport, inspect
from memtui.home import Home
from memtui.text import estimate_tokens


@dataclass(frozen=True)
class PruneAction:
    """One tool result the plan changes."""

    index: int
    turn_id: str
    tool: str
    label: str
    action: str
    """trim (head + tail kept) or clear (replaced by the placeholder)."""
    tokens_before: int
    tokens_after: int


@dataclass(frozen=True)
class PruningPlan:
    agent: str
    session: Path | None
    mode: str
    due: bool
    """Whether the agent's own pruning would run now (cache-ttl: the cache has expired)."""
    reason: str
    window: int
    tokens_before: int
    tokens_after: int
    trimmed: list[PruneAction] = field(default_factory=list)
    cleared: list[PruneAction] = field(default_factory=list)
    protected: int = 0
    """Tool results in the last keep_last_assistants assistant turns, never touched."""
    images: int = 0
    """Tool results with images: never pruned."""
    excluded: int = 0
    """Tool results of tools outside the allow list or inside the deny list."""

    @property
    def saved(self) -> int:
        return self.tokens_before - self.tokens_after

    def ratio(self, tokens: int) -> float:
        return tokens / self.window if self.window else 0.0


def tool_prunable(name: str, cfg: ContextSettings) -> bool:
    """Allow/deny globs (case-insensitive); deny wins, an empty allow list allows all."""
    low = name.lower()
    if any(fnmatch.fnmatchcase(low, g.lower()) for g in cfg.prune_tools_deny):
        return False
    return not cfg.prune_tools_allow or any(
        fnmatch.fnmatchcase(low, g.lower()) for g in cfg.prune_tools_allow)


def trimmed_text(text: str, cfg: ContextSettings) -> str | None:
    """The soft-trimmed result (head + tail + a note), or None when it is short enough."""
    head, tail = cfg.soft_trim_head_chars, cfg.soft_trim_tail_chars
    if len(text) <= cfg.soft_trim_max_chars or head + tail >= len(text):
        return None
    note = (f"\n\n[Tool result trimmed: kept the first {head:,} and the last {tail:,} of "
            f"{len(text):,} chars.]")
    return text[:head] + "\n...\n" + (text[-tail:] if tail else "") + note


def _protected_from(acct: Accountant, keep: int) -> int | None:
    """Index of the first item of the keep-th last assistant turn (None: too few turns)."""
    if keep <= 0:
        return len(acct.items)
    starts = acct.assistant_positions()
    return starts[-keep] if len(starts) >= keep else None


def _due(cfg: ContextSettings, last_call: datetime | None, now: datetime) -> tuple[bool, str]:
    if cfg.prune_mode == "off":
        return False, "pruning is off ([context] prune_mode)"
    if last_call is None:
        return True, "no model call recorded: the cache is cold"
    idle = (now - last_call).total_seconds()
    if idle >= cfg.prune_ttl_seconds:
        return True, f"last model call {idle / 60:.0f} min ago: the prompt cache has expired"
    return False, (f"last model call {idle:.0f} s ago, within the {cfg.prune_ttl_seconds} s "
                   "cache TTL: the agent would not prune yet")


def plan_from(report: ContextReport, acct: Accountant, cfg: ContextSettings,
              now: datetime | None = None) -> tuple[PruningPlan, dict[int, str]]:
    """The plan and the replacement text of every changed item (by item index)."""
    due, reason = _due(cfg, acct.last_call, now or timeutil.now())
    total = report.used
    window = report.window
    first_user = next((i for i, it in enumerate(acct.items) if it.kind == "user"), None)
    cutoff = _protected_from(acct, cfg.keep_last_assistants)
    candidates: list[int] = []
    protected = images = excluded = 0
    for index, item in enumerate(acct.items):
        if item.kind != "tool results":
            continue
        if first_user is None or index < first_user or cutoff is None or index >= cutoff:
            protected += 1
        elif item.images:
            images += 1
        elif not tool_prunable(item.tool or "", cfg):
            excluded += 1
        else:
            candidates.append(index)
    replaced: dict[int, str] = {}
    trimmed: list[PruneAction] = []
    cleared: list[PruneAction] = []
    sizes = {i: acct.items[i].tokens for i in candidates}

    def act(index: int, text: str, action: str, into: list[PruneAction]) -> None:
        nonlocal total
        item: Item = acct.items[index]
        after = estimate_tokens(text)
        total += after - sizes[index]
        into.append(PruneAction(index, item.turn_id, item.tool or "", item.label, action,
                                item.tokens, after))
        sizes[index] = after
        replaced[index] = text

    if cfg.prune_mode != "off" and window and total / window >= cfg.soft_trim_ratio:
        for index in candidates:
            cut = trimmed_text(acct.texts[index], cfg)
            if cut is not None:
                act(index, cut, "trim", trimmed)
        prunable_chars = sum(len(replaced.get(i, acct.texts[i])) for i in candidates)
        if total / window >= cfg.hard_clear_ratio and \
                prunable_chars >= cfg.min_prunable_tool_chars:
            for index in candidates:  # oldest first
                if total / window < cfg.hard_clear_ratio:
                    break
                act(index, cfg.hard_clear_placeholder, "clear", cleared)
    trimmed = [a for a in trimmed if a.index not in {c.index for c in cleared}]
    plan = PruningPlan(report.agent, report.session, cfg.prune_mode, due, reason, window,
                       report.used, total, trimmed, cleared, protected, images, excluded)
    return plan, replaced


def plan_pruning(home: Home, agent: str, session: Path | None = None) -> PruningPlan:
    """What pruning would trim and clear in the agent's session now."""
    report, acct = inspect(home, agent, session)
    return plan_from(report, acct, home.settings.context)[0]


def render_items(acct: Accountant, replaced: dict[int, str] | None = None) -> str:
    """The window's conversation as text, one block per item, with replacements applied."""
    out: list[str] = []
    for index, item in enumerate(acct.items):
        text = (replaced or {}).get(index, acct.texts[index])
        out.append(f"[{item.kind} · {item.turn_id} · {item.label}]\n{text}\n")
    return "\n".join(out)


def pruned_context(home: Home, agent: str, session: Path | None = None
                   ) -> tuple[PruningPlan, str]:
    """The plan and the pruned conversation as text (for ``memtui prune --out``)."""
    report, acct = inspect(home, agent, session)
    plan, replaced = plan_from(report, acct, home.settings.context)
    return plan, render_items(acct, replaced)
