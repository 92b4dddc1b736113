"""Turn preparation: redaction, the capture policy and the file context, before any extractor.

Every turn the stenographer, ``memtui policy test`` and backtest give an extractor passes
through :class:`Preparer`: system and harness messages are dropped, every text (the
message, each tool call's one-line gist, each short or failed tool result) is redacted,
and the capture policy either refuses the text (its tool calls stay: they are not text)
or says what it captures. :class:`FileContext` carries what a turn needs of the turns
before it (the last assistant words and their message id, recent tool calls, whether a
tool just failed, the offer a late answer answers) across batches and runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from memtui.extract.asked import OpenOffer, offers
from memtui.extract.candidates import CallView, PreparedTurn, ResultView
from memtui.extract.capture import Policy
from memtui.extract.refusals import REFUSED
from memtui.redact import redact
from memtui.transcripts import Turn

RESULT_CHARS = 600
"""Tool output kept per result for extractors (errors and refusals are short)."""
GIST_CHARS = 160
CONTEXT_CALLS = 64
"""Tool calls remembered per file across runs, so a later refusal can name the call."""
FIX_WINDOW = 3
"""Assistant turns after a tool error that may describe its fix."""
PREVIOUS_CHARS = 600
"""The last assistant words kept for the next turn (what a bare "no" answers)."""
SYSTEM_SKIP = "system or harness message"


@dataclass
class FileContext:
    """What extraction of one file remembers between turns (stored in ``reader_state``)."""

    previous_assistant: str = ""
    fix_window: int = 0
    calls: dict[str, tuple[str, str]] = field(default_factory=dict)
    previous_assistant_id: str = ""
    """The message the last assistant words are from ("": unknown, as in a context saved
    before it was kept)."""
    offer: OpenOffer = field(default_factory=OpenOffer)
    """The agent's offer still open while the person asks about it (a late answer's)."""

    @classmethod
    def load(cls, raw: str | None) -> tuple[FileContext, dict[str, Any]]:
        """The context stored in a watermark's reader state, and that whole state."""
        try:
            data = json.loads(raw) if raw else {}
        except ValueError:
            data = {}
        if not isinstance(data, dict):
            data = {}
        ctx: dict[str, Any] = {}
        calls: dict[str, Any] = {}
        offer: dict[str, Any] = {}
        if isinstance(data.get("context"), dict):
            ctx = data["context"]
            calls = ctx["calls"] if isinstance(ctx.get("calls"), dict) else {}
            offer = ctx["offer"] if isinstance(ctx.get("offer"), dict) else {}
        return cls(str(ctx.get("previous_assistant", "")), _count(ctx.get("fix_window")),
                   {k: (v[0], v[1]) for k, v in calls.items()
                    if isinstance(v, list) and len(v) == 2},
                   str(ctx.get("previous_assistant_id") or ""),
                   OpenOffer(str(offer.get("text") or ""), str(offer.get("id") or ""),
                             bool(offer.get("asking")), _count(offer.get("answered")))), data

    def dump(self) -> dict[str, Any]:
        calls = dict(list(self.calls.items())[-CONTEXT_CALLS:])
        return {"previous_assistant": self.previous_assistant, "fix_window": self.fix_window,
                "calls": {k: list(v) for k, v in calls.items()},
                "previous_assistant_id": self.previous_assistant_id,
                "offer": {"text": self.offer.text, "id": self.offer.id,
                          "asking": self.offer.asking, "answered": self.offer.answered}}


def _count(value: Any) -> int:
    """A count kept in a watermark's state; 0 when it is missing or damaged."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


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


@dataclass
class Preparation:
    """What preparing one turn gave, and what it took out."""

    turn: PreparedTurn | None
    """None: nothing of the turn reaches an extractor."""
    skipped: str | None = None
    """Why the turn (or its text) was skipped: a reason the run counts."""
    refusal: str | None = None
    """The policy's reason when it refused the turn's text."""
    redacted: list[str] = field(default_factory=list)
    """The kind of each secret redacted from the turn."""


class Preparer:
    """Redacts turns, applies the capture policy and tracks the file context."""

    def __init__(self, policy: Policy | None) -> None:
        self.policy = policy

    def prepare(self, turn: Turn, ctx: FileContext) -> Preparation:
        """One turn made ready for an extractor; updates ``ctx`` for the turns that follow."""
        if turn.role == "system" and turn.kind != "compaction":
            return Preparation(None, skipped=SYSTEM_SKIP)
        found: list[str] = []

        def clean(value: str) -> str:
            if not value:
                return value
            r = redact(value)
            found.extend(f.kind for f in r.findings)
            return r.text

        text = clean(turn.text)
        calls = tuple(CallView(c.id, c.name, clean(gist(c.name, c.input)))
                      for c in turn.tool_calls)
        results: list[ResultView] = []
        for r in turn.tool_results:
            content = clean(_head(r.content, RESULT_CHARS)) if (
                r.is_error or len(r.content) < 2 * RESULT_CHARS) else ""
            refused = r.is_error and bool(REFUSED.search(r.content[:2000]))
            known = ctx.calls.get(r.tool_call_id)
            call = CallView(r.tool_call_id, known[0], known[1]) if known else None
            results.append(ResultView(r.tool_call_id, r.name or (known[0] if known else None),
                                      content, r.is_error, refused, call))
        out = Preparation(None, redacted=found)
        after_error = ctx.fix_window > 0
        captures: tuple[Any, ...] = ()
        person = turn.role == "user" and turn.author == "person"
        offer, offer_id = ctx.offer.behind(ctx.previous_assistant_id) if person else ("", None)
        if self.policy is not None and text:
            verdict = self.policy.evaluate(text, turn.role, after_tool_error=after_error)
            if verdict.refused is not None and verdict.refused.kind == "ui_noise" and person and (
                    offer or offers(ctx.previous_assistant)):
                # "ok" or "perfect" to "Shall I restart it?" settles the offer: not noise
                verdict = self.policy.evaluate(text, turn.role, after_tool_error=after_error,
                                               noise=False)
            if verdict.refused is not None:
                # Forbidden text is dropped; the turn's tool calls are not text and stay.
                out.skipped = f"text refused by policy ({verdict.refused.kind})"
                out.refusal = verdict.refused.reason
                text = ""
                if not calls and not results:
                    return out
            else:
                captures = tuple(verdict.captured)
        out.turn = PreparedTurn(turn=turn, text=text, calls=calls, results=tuple(results),
                                after_tool_error=after_error,
                                previous_assistant=ctx.previous_assistant,
                                previous_assistant_id=ctx.previous_assistant_id or None,
                                open_offer=offer, open_offer_id=offer_id, captures=captures)
        if person and text:
            ctx.offer.person(text)
        for c in calls:
            ctx.calls[c.id] = (c.name, c.gist)
        if any(r.is_error and not r.refused for r in results):
            ctx.fix_window = FIX_WINDOW
        if turn.role == "assistant" and text:
            ctx.previous_assistant = _tail(text, PREVIOUS_CHARS)
            ctx.previous_assistant_id = turn.id
            ctx.offer.agent(ctx.previous_assistant, turn.id)
            if after_error:
                ctx.fix_window -= 1
        return out
