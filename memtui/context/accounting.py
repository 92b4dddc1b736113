"""Token accounting of a session: what is in the window now, exact where the transcript says.

The provider's own numbers are exact: the last assistant message's usage (input + cache
read + cache write, plus its output, which is in the window from then on). Everything
after that message, and every per-kind share, is estimated at chars/4. A compaction
drops what came before the kept region and makes the last usage stale.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime

from memtui.config import ContextSettings
from memtui.text import estimate_tokens
from memtui.transcripts import Turn

IMAGE_TOKENS = 1_600
"""An image block as the window sees it (a ~1.2 megapixel image; the transcript keeps
only a placeholder)."""
IMAGE_MARK = "[image]"

KINDS = ("system prompt", "workspace files", "skills", "tool schemas", "compaction summary",
         "system messages", "user", "assistant", "thinking", "tool calls", "tool results")
"""Kinds of consumers in the order reports list them."""


@dataclass(frozen=True)
class Item:
    """One consumer of the window: a message part or a tool result."""

    turn_id: str
    kind: str
    label: str
    chars: int
    tokens: int
    tool: str | None = None
    images: int = 0


@dataclass(frozen=True)
class Anchor:
    """The last assistant message with reported usage: exact up to and including it."""

    turn_id: str
    items: int
    """How many items of the window it covers (all before it, and its own)."""
    tokens: int
    timestamp: datetime | None


def window_for(model: str | None, settings: ContextSettings) -> int:
    """The window of a model: the longest matching prefix in model_windows, else the default."""
    if model:
        name = model.lower().split("/")[-1]
        best = max((p for p in settings.model_windows if name.startswith(p.lower())),
                   key=len, default=None)
        if best is not None:
            return settings.model_windows[best]
    return settings.window_tokens


def flush_threshold(window: int, settings: ContextSettings) -> int:
    return max(0, window - settings.reserve_tokens_floor - settings.soft_threshold_tokens)


def compaction_threshold(window: int, settings: ContextSettings) -> int:
    return max(0, window - settings.reserve_tokens_floor)


def _label(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _gist(args: dict[str, object]) -> str:
    for key in ("path", "file_path", "command", "query", "url", "pattern"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return json.dumps(args, ensure_ascii=False)[:60] if args else ""


@dataclass
class Accountant:
    """Feeds on turns in file order and keeps the window's items and its exact anchor."""

    items: list[Item] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    anchor: Anchor | None = None
    compactions: int = 0
    last_call: datetime | None = None
    calls: dict[str, str] = field(default_factory=dict)
    overhead: int = 0
    """What the last usage before a compaction measured beyond the conversation (system
    prompt, tool schemas): the estimate for it until the next model call reports usage."""
    turns: dict[str, Turn] = field(default_factory=dict)
    """Every turn fed, by id (regions name their messages, lines and offsets from it)."""
    _positions: dict[str, int] = field(default_factory=dict)

    def feed(self, turns: Iterable[Turn], first_kept: dict[str, str] | None = None) -> None:
        """Add turns; ``first_kept`` maps an OpenClaw compaction's id to its firstKeptEntryId."""
        for turn in turns:
            if turn.kind == "compaction":
                self.turns[turn.id] = turn
                self._compact(turn, (first_kept or {}).get(turn.id))
                continue
            self._positions.setdefault(turn.id, len(self.items))
            self.turns[turn.id] = turn
            for item, text in self._parts(turn):
                self.items.append(item)
                self.texts.append(text)
            if turn.role == "assistant":
                if turn.timestamp is not None:
                    self.last_call = turn.timestamp
                u = turn.usage
                prompt = (u.input_tokens + u.cache_read_tokens + u.cache_creation_tokens
                          if u else 0)
                if u is not None and prompt > 0:
                    self.anchor = Anchor(turn.id, len(self.items), prompt + u.output_tokens,
                                         turn.timestamp)

    def _compact(self, turn: Turn, first_kept: str | None) -> None:
        """Drop what the compaction summarised; its summary opens the window."""
        self.compactions += 1
        if self.anchor is not None:
            covered = sum(i.tokens for i in self.items[: self.anchor.items])
            self.overhead = max(0, self.anchor.tokens - covered)
        keep_from = self._positions.get(first_kept, len(self.items)) if first_kept else len(
            self.items)
        kept, kept_texts = self.items[keep_from:], self.texts[keep_from:]
        summary = Item(turn.id, "compaction summary", "summary of earlier conversation",
                       len(turn.text), estimate_tokens(turn.text))
        self.items, self.texts = [summary, *kept], [turn.text, *kept_texts]
        self._positions = {}
        for index, item in enumerate(self.items):
            self._positions.setdefault(item.turn_id, index)
        self.anchor = None

    def _parts(self, turn: Turn) -> list[tuple[Item, str]]:
        out: list[tuple[Item, str]] = []

        def add(kind: str, label: str, text: str, tool: str | None = None) -> None:
            images = sum(1 for line in text.splitlines() if line.strip() == IMAGE_MARK)
            out.append((Item(turn.id, kind, label, len(text),
                             estimate_tokens(text) + images * IMAGE_TOKENS, tool, images), text))

        if turn.role == "user" and turn.text:
            # A "user" message the harness or a hook wrote is not the person's words.
            add("system messages" if turn.author == "machine" else "user",
                _label(turn.text), turn.text)
        elif turn.role == "system" and turn.text:
            add("system messages", _label(turn.text), turn.text)
        elif turn.role == "assistant":
            if turn.text:
                add("assistant", _label(turn.text), turn.text)
            if turn.thinking:
                add("thinking", _label(turn.thinking), turn.thinking)
            for call in turn.tool_calls:
                self.calls[call.id] = f"{call.name} {_label(_gist(call.input), 50)}".strip()
                body = call.name + json.dumps(call.input, ensure_ascii=False)
                add("tool calls", self.calls[call.id], body, call.name)
        for result in turn.tool_results:
            name = result.name or "tool"
            label = self.calls.get(result.tool_call_id, name)
            add("tool results", label, result.content, name)
        return out

    # -- views ----------------------------------------------------------------------------

    def estimated_tail(self) -> list[int]:
        """Indexes of the items the exact anchor does not cover."""
        start = self.anchor.items if self.anchor else 0
        return list(range(start, len(self.items)))

    def by_kind(self) -> dict[str, int]:
        totals: dict[str, int] = {}
        for item in self.items:
            totals[item.kind] = totals.get(item.kind, 0) + item.tokens
        return totals

    def assistant_positions(self) -> list[int]:
        """Index of the first item of each assistant turn, in order."""
        seen: set[str] = set()
        out = []
        for index, item in enumerate(self.items):
            if item.kind in ("assistant", "thinking", "tool calls") and item.turn_id not in seen:
                seen.add(item.turn_id)
                out.append(index)
        return out
