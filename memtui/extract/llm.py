"""The Anthropic extractor: the Messages API with a tool-use schema for the structured entries.

How it works:

- Tool calls, tool outcomes, refused tool uses and failed results are structural, so they
  are read deterministically (``LocalExtractor.structural``), exactly as offline.
- The turns' (redacted, policy-approved) text goes to the model in batches that fit
  ``[extract] batch_tokens`` (estimated as characters / 4). The model must answer with
  one call of the ``record_memory`` tool (``tool_choice``), whose input schema lists
  state entries (the seven categories), facts and episodes, each citing a message id.
- The fixed part of every request -- the instructions and the tool definition -- is
  marked ``cache_control: ephemeral`` so it is cached across batches (prompt caching).
- 429, 5xx, timeouts and connection errors are retried by the SDK itself (its
  exponential backoff with jitter, honouring ``retry-after``), ``[extract] max_retries``
  times. After that, or on any other API error, the batch raises ExtractorError.
- Invalid output (no tool call, a truncated answer, an unknown category, a message id
  that is not in the batch, a wrong type) raises ExtractorError: the stenographer then
  writes nothing for that batch and leaves the watermark where it was.

``anthropic`` is imported only when a client is made: the CLI and hooks start fast.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from memtui import text as textutil
from memtui.extract.candidates import (
    EpisodeCandidate,
    Extraction,
    ExtractorError,
    FactCandidate,
    PreparedTurn,
    StateCandidate,
)
from memtui.extract.local import LocalExtractor, answered
from memtui.stores.state import CATEGORIES
from memtui.text import domain_of, shorten

if TYPE_CHECKING:
    import anthropic

    from memtui.config import ExtractSettings

NAME = "llm"
TOOL_NAME = "record_memory"
EPISODE_KINDS = ("decision", "incident", "fix", "note")
ANSWERING = ("rejected", "decision")
"""The state categories and episode kinds that cite the proposal they answer."""
UNSURE_REJECTION = 0.6
"""Confidence of a rejection the model gave none for: below the 0.7 that makes a rule."""
MAX_TURN_CHARS = 6000
"""A single turn's text is cut to this many characters before it is sent."""

INSTRUCTIONS = """\
You are the stenographer of an AI agent. You read excerpts of the agent's session \
transcripts and record what should be remembered, by calling the record_memory tool \
exactly once. Record only what is stated in the excerpt; never invent. Every item cites \
the id of the message it came from (the value in square brackets).

State entries, one category each:
- decision: something settled ("let's use X", "we decided", an approval of a proposal).
- task: work requested or still to do.
- rejected: something the human refused or forbade ("no", "don't", "stop doing X", \
"I'd rather not", a refused tool use). A preference ("I prefer X") is NOT a rejection.
- agent_state: what the agent is doing, blocked on, or has finished.
- context: background that stays true for a while, including preferences \
(summary starts with "Preference: ") and the human's corrections of what the agent \
said or assumed (summary starts with "Correction: " and says what is right: \
"Correction: Mia is in class 3A this year, not 3B").
- discovery: something found out (a root cause, how a system behaves).
- learning: a lesson or standing rule ("always", "next time", a fix that worked after \
a failure).
A rejection's summary names what was rejected ("Don't add Redis", not "I'd rather not"). \
Its confidence matters: rejections become hard rules. Give 0.9 or more only to a clear \
one (an explicit "no, don't X", "never X", "I'd rather not X"); give 0.5-0.6 to a short \
or ambiguous reply ("No.", "No rollback.") and to a prohibition inside an instruction \
("apply it to dev only, and don't touch staging"). \
A rejection or decision that answers an assistant's proposal or question also gives that \
assistant message's id as answers_message_id.
Summaries are one self-contained sentence (under 200 characters) in the speaker's terms. \
Domain is one lowercase word (deploy, testing, database, git, infra, security, \
dependencies, frontend, docs, api, general).

Facts are key/value pairs that can change later ("timezone" = "Europe/Berlin", \
"launch slot" = "Tuesday 10:00 CET"); use short lowercase keys.
Episodes are notable events (decision, incident, fix, note); tool calls are recorded \
separately, do not repeat them.
Text marked [REDACTED:...] is a removed secret: never try to reconstruct it. \
Most excerpts hold little worth remembering; empty lists are a good answer."""

TOOL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "state": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "category": {"type": "string", "enum": list(CATEGORIES)},
                    "summary": {"type": "string"},
                    "domain": {"type": "string"},
                    "detail": {"type": "string"},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "message_id": {"type": "string"},
                    "answers_message_id": {"type": "string"},
                },
                "required": ["category", "summary", "message_id"],
            },
        },
        "facts": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "key": {"type": "string"},
                    "value": {"type": "string"},
                    "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                    "message_id": {"type": "string"},
                },
                "required": ["key", "value", "message_id"],
            },
        },
        "episodes": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": list(EPISODE_KINDS)},
                    "summary": {"type": "string"},
                    "message_id": {"type": "string"},
                    "answers_message_id": {"type": "string"},
                },
                "required": ["kind", "summary", "message_id"],
            },
        },
    },
    "required": ["state", "facts", "episodes"],
}


def render_turn(pt: PreparedTurn) -> str:
    """One turn as the model sees it: id, role, time, text and a note of its tool use."""
    head = f"[{pt.id}] {pt.role}" + (f" ({pt.at})" if pt.at else "")
    parts = [head + ":"]
    if pt.text:
        body = pt.text if len(pt.text) <= MAX_TURN_CHARS else pt.text[:MAX_TURN_CHARS] + " …"
        parts.append(body)
    for call in pt.calls:
        parts.append(f"(tool call) {call.gist}")
    for res in pt.results:
        if res.refused:
            parts.append(f"(the human refused the tool use: {res.name or 'tool'})")
        elif res.is_error:
            parts.append(f"(tool error) {shorten(res.content, 300)}")
    return "\n".join(parts)


def plan_batches(turns: Sequence[PreparedTurn], budget_tokens: int
                 ) -> list[list[tuple[PreparedTurn, str]]]:
    """Rendered turns grouped so each group stays within the token budget."""
    batches: list[list[tuple[PreparedTurn, str]]] = []
    current: list[tuple[PreparedTurn, str]] = []
    used = 0
    for pt in turns:
        if not pt.text.strip():
            continue  # nothing for the model: structure is read locally
        rendered = render_turn(pt)
        cost = textutil.estimate_tokens(rendered)
        if current and used + cost > budget_tokens:
            batches.append(current)
            current, used = [], 0
        current.append((pt, rendered))
        used += cost
    if current:
        batches.append(current)
    return batches


class LLMExtractor:
    """Extraction with an Anthropic model; see the module docstring."""

    name = NAME

    def __init__(
        self, *, model: str = "claude-sonnet-4-6", batch_tokens: int = 12000,
        max_output_tokens: int = 4096, timeout: float = 120.0, max_retries: int = 4,
        client: anthropic.Anthropic | None = None,
    ) -> None:
        self.model = model
        self.batch_tokens = batch_tokens
        self.max_output_tokens = max_output_tokens
        self.timeout = timeout
        self.max_retries = max_retries
        self._client = client
        self.local = LocalExtractor()
        self.requests = 0
        self.usage: dict[str, int] = {"input_tokens": 0, "output_tokens": 0,
                                      "cache_read_input_tokens": 0,
                                      "cache_creation_input_tokens": 0}

    @classmethod
    def from_settings(cls, settings: ExtractSettings) -> LLMExtractor:
        return cls(model=settings.model, batch_tokens=settings.batch_tokens,
                   max_output_tokens=settings.max_output_tokens,
                   timeout=settings.timeout_seconds, max_retries=settings.max_retries)

    @property
    def client(self) -> anthropic.Anthropic:
        """The SDK client, retrying ``max_retries`` times (a given client is copied with
        that setting: it shares the given one's HTTP client)."""
        if self._client is None:
            import anthropic

            self._client = anthropic.Anthropic(timeout=self.timeout,
                                               max_retries=self.max_retries)
        elif self._client.max_retries != self.max_retries:
            self._client = self._client.with_options(max_retries=self.max_retries)
        return self._client

    # -- extraction ----------------------------------------------------------------------

    def extract(self, turns: Sequence[PreparedTurn]) -> Extraction:
        out = Extraction()
        for pt in turns:
            self.local.structural(pt, out)
        for batch in plan_batches(turns, self.batch_tokens):
            out.extend(self._extract_batch(batch))
        return out

    def request(self, rendered: Sequence[str]) -> dict[str, Any]:
        """The Messages API request for one batch (the fixed part marked for caching)."""
        excerpt = "\n\n".join(rendered)
        return {
            "model": self.model,
            "max_tokens": self.max_output_tokens,
            "system": [{"type": "text", "text": INSTRUCTIONS,
                        "cache_control": {"type": "ephemeral"}}],
            "tools": [{"name": TOOL_NAME,
                       "description": "Record the memory found in the transcript excerpt.",
                       "input_schema": TOOL_SCHEMA,
                       "cache_control": {"type": "ephemeral"}}],
            "tool_choice": {"type": "tool", "name": TOOL_NAME},
            "messages": [{"role": "user", "content": [{"type": "text", "text":
                          f"<transcript>\n{excerpt}\n</transcript>\n\n"
                          f"Record what should be remembered from these messages."}]}],
        }

    def _extract_batch(self, batch: list[tuple[PreparedTurn, str]]) -> Extraction:
        message = self._call(self.request([r for _, r in batch]))
        by_id = {pt.id: pt for pt, _ in batch}
        out = parse_response(message, by_id)
        # The model read the person's words: what it did not record, it judged not there.
        out.read = {pt.id for pt, _ in batch if pt.role == "user" and pt.text}
        return out

    def _call(self, request: dict[str, Any]) -> Any:
        """One Messages API call (the SDK retries what is worth retrying); every failure
        that is left becomes ExtractorError, which rejects the batch."""
        import anthropic

        try:
            message = self.client.messages.create(**request)
        except (anthropic.APIStatusError, anthropic.APIConnectionError) as exc:
            status = getattr(exc, "status_code", None)
            attempts = _attempts(exc)
            if attempts > 1:
                raise ExtractorError(
                    f"the model API failed {attempts} times "
                    f"({type(exc).__name__}{f' {status}' if status else ''}): {exc}"
                ) from exc
            if status is None:
                raise ExtractorError(f"the model API failed ({type(exc).__name__}): {exc}"
                                     ) from exc
            raise ExtractorError(f"the model API refused the request ({status}): {exc}",
                                 retryable=status >= 500) from exc
        except anthropic.AnthropicError as exc:
            raise ExtractorError(f"the model API failed: {exc}") from exc
        self.requests += 1
        usage = getattr(message, "usage", None)
        for key in self.usage:
            self.usage[key] += int(getattr(usage, key, 0) or 0)
        return message


def _attempts(exc: Exception) -> int:
    """How many times the SDK sent the request that failed (it numbers its retries)."""
    request = getattr(exc, "request", None)
    headers = getattr(request, "headers", None)
    try:
        return int(headers.get("x-stainless-retry-count", 0)) + 1 if headers is not None else 1
    except (TypeError, ValueError):
        return 1


# -- validating the model's answer ------------------------------------------------------


def _text(item: dict[str, Any], key: str, where: str, *, required: bool = True,
          limit: int = 500) -> str:
    value = item.get(key)
    if value is None and not required:
        return ""
    if not isinstance(value, str) or (required and not value.strip()):
        raise ExtractorError(f"invalid model output: {where}.{key} must be a non-empty string")
    return value.strip()[:limit]


def _confidence(item: dict[str, Any], where: str, default: float) -> float:
    value = item.get("confidence", default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise ExtractorError(f"invalid model output: {where}.confidence must be 0..1")
    return float(value)


def parse_response(message: Any, by_id: dict[str, PreparedTurn]) -> Extraction:
    """Candidates from a Messages API response, or ExtractorError if it is not valid."""
    if getattr(message, "stop_reason", None) == "max_tokens":
        raise ExtractorError("invalid model output: the answer was cut off (max_tokens)")
    calls = [b for b in getattr(message, "content", []) or []
             if getattr(b, "type", None) == "tool_use" and getattr(b, "name", None) == TOOL_NAME]
    if len(calls) != 1:
        raise ExtractorError(f"invalid model output: expected one {TOOL_NAME} call, "
                             f"got {len(calls)}")
    data = calls[0].input
    if not isinstance(data, dict):
        raise ExtractorError("invalid model output: the tool input is not an object")
    out = Extraction()
    for section in ("state", "facts", "episodes"):
        items = data.get(section, [])
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise ExtractorError(f"invalid model output: {section} must be a list of objects")

    def turn_of(item: dict[str, Any], where: str) -> PreparedTurn:
        mid = item.get("message_id")
        if not isinstance(mid, str) or mid not in by_id:
            raise ExtractorError(f"invalid model output: {where}.message_id {mid!r} is not "
                                 "a message of this batch")
        return by_id[mid]

    def proposal_of(item: dict[str, Any], pt: PreparedTurn) -> str | None:
        """The assistant message the entry answers: the model's citation when it names an
        assistant message it was shown, else the local extractor's structural reading."""
        given = item.get("answers_message_id")
        if isinstance(given, str) and given != pt.id and (
                given == pt.previous_assistant_id
                or (given in by_id and by_id[given].role == "assistant")):
            return given
        return answered(pt)

    for i, item in enumerate(data.get("state", [])):
        where = f"state[{i}]"
        pt = turn_of(item, where)
        category = item.get("category")
        if category not in CATEGORIES:
            raise ExtractorError(f"invalid model output: {where}.category {category!r} is not "
                                 f"one of {', '.join(CATEGORIES)}")
        summary = shorten(_text(item, "summary", where))
        domain = _text(item, "domain", where, required=False, limit=40).lower()
        domain = "".join(ch for ch in domain if ch.isalnum() or ch in "-_") or domain_of(summary)
        out.state.append(StateCandidate(
            category=str(category), summary=summary, source_entry=pt.id, domain=domain,
            detail=_text(item, "detail", where, required=False, limit=1000),
            confidence=_confidence(item, where, UNSURE_REJECTION if category == "rejected"
                                   else 0.8), at=pt.at, session=pt.turn.session,
            answers_entry=proposal_of(item, pt) if category in ANSWERING else None))
    for i, item in enumerate(data.get("facts", [])):
        where = f"facts[{i}]"
        pt = turn_of(item, where)
        out.facts.append(FactCandidate(
            key=_text(item, "key", where, limit=80), value=_text(item, "value", where, limit=200),
            source_entry=pt.id, confidence=_confidence(item, where, 0.8), at=pt.at))
    for i, item in enumerate(data.get("episodes", [])):
        where = f"episodes[{i}]"
        pt = turn_of(item, where)
        kind = item.get("kind")
        if kind not in EPISODE_KINDS:
            raise ExtractorError(f"invalid model output: {where}.kind {kind!r} is not one of "
                                 f"{', '.join(EPISODE_KINDS)}")
        out.episodes.append(EpisodeCandidate(
            kind=str(kind), summary=shorten(_text(item, "summary", where)), source_entry=pt.id,
            at=pt.at, session=pt.turn.session,
            answers_entry=proposal_of(item, pt) if kind in ANSWERING else None))
    return out


def describe_request(request: dict[str, Any]) -> str:
    """The request as JSON (for debugging a prompt; secrets are already redacted)."""
    return json.dumps(request, indent=2, ensure_ascii=False)
