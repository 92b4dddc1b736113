"""The /context report: what fills an agent's window, against its size and thresholds."""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from memtui import timeutil
from memtui.context import counting
from memtui.context.accounting import (
    KINDS,
    Accountant,
    Item,
    compaction_threshold,
    flush_threshold,
    window_for,
)
from memtui.context.bootstrap import Bootstrap, InjectedFile, Skill, ToolSchema, load_bootstrap
from memtui.context.live import current
from memtui.context.sessions import is_group_session, resolve_session
from memtui.home import Home

TOP_ITEMS = 10
DETAIL_ITEMS = 30


@dataclass(frozen=True)
class TopItem:
    """One of the largest consumers of the window."""

    kind: str
    label: str
    tokens: int


@dataclass(frozen=True)
class ContextReport:
    """An agent's window at one moment. ``exact`` is False when any part is an estimate."""

    agent: str
    session: Path | None
    format: str
    model: str | None
    window: int
    used: int
    exact: bool
    counted_by: str
    """usage (the transcript's numbers), usage+estimate, estimate, or anthropic."""
    exact_tokens: int
    estimated_tokens: int
    flush_at: int
    compact_at: int
    compactions: int
    group: bool
    workspace: Path
    bootstrap_max_chars: int
    system_prompt_tokens: int
    by_kind: list[tuple[str, int]]
    files: list[InjectedFile]
    skills: list[Skill]
    tools: list[ToolSchema]
    tools_used: list[tuple[str, int]]
    top: list[TopItem]
    detail: list[tuple[str, list[TopItem]]]
    messages: int
    problems: int
    last_call: datetime | None
    read_at: datetime
    notes: list[str] = field(default_factory=list)

    @property
    def percent(self) -> float:
        return 100.0 * self.used / self.window if self.window else 0.0

    @property
    def state(self) -> str:
        """ok, flush (past the flush threshold) or compact (past the compaction one)."""
        if self.used >= self.compact_at:
            return "compact"
        return "flush" if self.used >= self.flush_at else "ok"

    def status_line(self) -> str:
        """``Context ~14k/200k (7%) · Compactions 2 · Flush at 176k``."""
        mark = "" if self.exact else "~"
        return (f"Context {mark}{short(self.used)}/{short(self.window)} "
                f"({self.percent:.0f}%) · Compactions {self.compactions} · "
                f"Flush at {short(self.flush_at)}")

    def as_dict(self) -> dict[str, Any]:
        import dataclasses

        out = dataclasses.asdict(self)
        out.update(percent=round(self.percent, 1), state=self.state,
                   status=self.status_line())
        for key in ("session", "workspace"):
            out[key] = str(out[key]) if out[key] is not None else None
        for key in ("read_at", "last_call"):
            out[key] = timeutil.iso(out[key]) if out[key] is not None else None
        out["by_kind"] = dict(self.by_kind)
        out["tools_used"] = dict(self.tools_used)
        out["detail"] = {kind: [dataclasses.asdict(i) for i in items]
                         for kind, items in self.detail}
        return out


def short(tokens: int) -> str:
    """14234 -> 14k, 1048576 -> 1M (what a status line has room for)."""
    if tokens >= 1_000_000:
        return f"{tokens / 1_000_000:.1f}".rstrip("0").rstrip(".") + "M"
    if tokens >= 1_000:
        return f"{round(tokens / 1000)}k"
    return str(tokens)


def _top(items: list[Item], n: int) -> list[TopItem]:
    best = heapq.nlargest(n, items, key=lambda i: i.tokens)
    return [TopItem(i.kind, i.label, i.tokens) for i in best]


def build_report(home: Home, agent: str, path: Path | None, acct: Accountant, *,
                 fmt: str, model: str | None, boot: Bootstrap, group: bool,
                 messages: int, problems: int, client: Any = None) -> ContextReport:
    """The report from an Accountant that has read the session (shared with the follower)."""
    cfg = home.settings.context
    window = window_for(model, cfg)
    notes: list[str] = []
    tail = acct.estimated_tail()
    tail_tokens = sum(acct.items[i].tokens for i in tail)
    boot_tokens = boot.file_tokens + boot.skill_tokens + boot.tool_tokens
    counted_by = "usage" if acct.anchor and not tail else "usage+estimate" if acct.anchor \
        else "estimate"
    if cfg.token_counter == "anthropic" and (tail or not acct.anchor):
        try:
            texts = [acct.texts[i] for i in tail]
            tail_tokens = counting.count_tokens(texts, model or cfg.counter_model, client)
            counted_by = "usage+anthropic" if acct.anchor else "anthropic"
        except counting.CountFailed as exc:
            notes.append(f"{exc}; the rest is estimated")
    exact_counted = counted_by in ("usage", "usage+anthropic")
    if acct.anchor:
        exact_tokens = acct.anchor.tokens + (tail_tokens if exact_counted else 0)
        estimated = 0 if exact_counted else tail_tokens
        conversation = sum(i.tokens for i in acct.items[: acct.anchor.items])
        system_rest = max(0, acct.anchor.tokens - conversation - boot_tokens)
    else:
        exact_tokens = tail_tokens if counted_by == "anthropic" else 0
        system_rest = max(0, acct.overhead - boot_tokens)
        estimated = boot_tokens + system_rest + (0 if counted_by == "anthropic" else tail_tokens)
        if not acct.items:
            notes.append("no messages in the window yet")
        elif acct.compactions:
            notes.append("no model call since the last compaction: the size is estimated")
    kinds = acct.by_kind()
    kinds.update({"system prompt": system_rest, "workspace files": boot.file_tokens,
                  "skills": boot.skill_tokens, "tool schemas": boot.tool_tokens})
    by_kind = [(k, kinds[k]) for k in KINDS if kinds.get(k)]
    by_kind += sorted((k, v) for k, v in kinds.items() if k not in KINDS and v)
    tools_used: dict[str, int] = {}
    for item in acct.items:
        if item.kind == "tool results" and item.tool:
            tools_used[item.tool] = tools_used.get(item.tool, 0) + item.tokens
    groups: dict[str, list[Item]] = {}
    for item in acct.items:
        groups.setdefault(item.kind, []).append(item)
    detail = [(kind, _top(groups[kind], DETAIL_ITEMS)) for kind in KINDS if kind in groups]
    return ContextReport(
        agent=agent, session=path, format=fmt, model=model, window=window,
        used=exact_tokens + estimated, exact=estimated == 0 and exact_tokens > 0,
        counted_by=counted_by, exact_tokens=exact_tokens, estimated_tokens=estimated,
        flush_at=flush_threshold(window, cfg), compact_at=compaction_threshold(window, cfg),
        compactions=acct.compactions, group=group, workspace=boot.workspace,
        bootstrap_max_chars=boot.max_chars, system_prompt_tokens=system_rest + boot_tokens,
        by_kind=by_kind, files=list(boot.files), skills=list(boot.skills),
        tools=list(boot.tools),
        tools_used=sorted(tools_used.items(), key=lambda kv: (-kv[1], kv[0])),
        top=_top(acct.items, TOP_ITEMS), detail=detail, messages=messages, problems=problems,
        last_call=acct.last_call, read_at=timeutil.now(), notes=notes)


def inspect(home: Home, agent: str, session: Path | None = None, *,
            client: Any = None) -> tuple[ContextReport, Accountant]:
    """The report and the Accountant behind it (pruning and compaction work on its items)."""
    path = resolve_session(home, agent, session)
    window, acct = current(path)
    group = is_group_session(home, path)
    boot = load_bootstrap(home, agent, group=group)
    messages = len({item.turn_id for item in acct.items})
    report = build_report(home, agent, path, acct, fmt=window.fmt, model=window.model,
                          boot=boot, group=group, messages=messages, problems=window.problems,
                          client=client)
    return report, acct


def context_report(home: Home, agent: str, session: Path | None = None, *,
                   client: Any = None) -> ContextReport:
    """The window of ``agent``'s session (default: its newest transcript).

    ``client``: an Anthropic client for [context] token_counter = "anthropic" (tests pass
    one over a mocked transport; otherwise a real one is made when needed).
    """
    return inspect(home, agent, session, client=client)[0]
