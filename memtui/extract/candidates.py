"""What extractors produce and consume: prepared (redacted) turns in, candidate memory out.

Both extractors (``local`` and ``llm``) take the same ``PreparedTurn`` list and return an
``Extraction``; the stenographer consolidates that into memory.db. Every candidate
carries the transcript message id it came from (``source_entry``); a rejection or decision
that answers an assistant's proposal also cites that message (``answers_entry``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from memtui.transcripts import Turn


@dataclass(frozen=True)
class CallView:
    """A tool call as extractors see it: the name and a redacted one-line gist of its input."""

    id: str
    name: str
    gist: str


@dataclass(frozen=True)
class ResultView:
    """A tool result as extractors see it: redacted, cut to its first lines."""

    call_id: str
    name: str | None
    content: str
    is_error: bool
    refused: bool
    """The human declined the tool use (Claude Code's "doesn't want to proceed")."""
    call: CallView | None = None
    """The call this result answers, when it was seen in this file."""


@dataclass(frozen=True)
class PreparedTurn:
    """A turn after redaction and the policy: the only text extractors may look at."""

    turn: Turn
    text: str
    """The redacted visible text (code blocks kept; extractors decide what to read)."""
    calls: tuple[CallView, ...] = ()
    results: tuple[ResultView, ...] = ()
    after_tool_error: bool = False
    """The previous tool result in this session was an error (a fix may follow)."""
    previous_assistant: str = ""
    """The last assistant words before this turn (what a bare "no" rejects)."""
    previous_assistant_id: str | None = None
    """The message id of those words: what a reply to a proposal cites beside its own."""
    open_offer: str = ""
    """When those words ask nothing, the agent's earlier offer the person has only asked
    about since ("then no" after "About four minutes."; ``asked.OpenOffer``), else ""."""
    open_offer_id: str | None = None
    """The message id of that offer."""
    captures: tuple[Any, ...] = ()
    """What the policy captured in the text (``policy.Capture``: layer, kind, match...)."""

    @property
    def id(self) -> str:
        return self.turn.id

    @property
    def answering(self) -> str:
        """What the turn answers: the open offer if there is one, else the last assistant
        words."""
        return self.open_offer or self.previous_assistant

    @property
    def answering_id(self) -> str | None:
        return self.open_offer_id if self.open_offer else self.previous_assistant_id

    @property
    def role(self) -> str:
        return self.turn.role

    @property
    def in_conversation(self) -> bool:
        """Said in the conversation with the person: their words, or the main agent's.

        Only these turns carry rejections and decisions; a sub-agent's words, the prompt
        the agent wrote for it and machine-written prompts never do (``Turn.author``).
        """
        author = self.turn.author
        return author == "person" or (author == "agent" and self.turn.role == "assistant")

    @property
    def at(self) -> str | None:
        ts = self.turn.timestamp
        return ts.strftime("%Y-%m-%dT%H:%M:%SZ") if ts else None


@dataclass
class StateCandidate:
    category: str
    summary: str
    source_entry: str
    domain: str = "general"
    detail: str = ""
    confidence: float = 0.8
    at: str | None = None
    session: str | None = None
    status: str = "active"
    answers_entry: str | None = None
    """The assistant message (its proposal) a rejection or decision answers."""


@dataclass
class EpisodeCandidate:
    kind: str
    summary: str
    source_entry: str
    detail: str = ""
    at: str | None = None
    session: str | None = None
    tool: str | None = None
    ref: str | None = None
    outcome: str | None = None
    answers_entry: str | None = None


@dataclass
class FactCandidate:
    key: str
    value: str
    source_entry: str
    confidence: float = 0.8
    at: str | None = None


@dataclass
class Extraction:
    """Everything one extractor call proposes, plus tool outcomes to record."""

    state: list[StateCandidate] = field(default_factory=list)
    episodes: list[EpisodeCandidate] = field(default_factory=list)
    facts: list[FactCandidate] = field(default_factory=list)
    outcomes: list[tuple[str, str]] = field(default_factory=list)
    """(tool call id, ok|error|refused) for tool_call episodes written earlier."""
    read: set[str] = field(default_factory=set)
    """The turns a learned reader judged (the classifier, the language model): what it
    found in them, or did not, stands; the policy's phrase hits add nothing there
    (``enforce``)."""

    def extend(self, other: Extraction) -> None:
        self.state += other.state
        self.episodes += other.episodes
        self.facts += other.facts
        self.outcomes += other.outcomes
        self.read |= other.read

    def __len__(self) -> int:
        return len(self.state) + len(self.episodes) + len(self.facts)


class Extractor(Protocol):
    """Turns prepared turns into candidates; raises ExtractorError to reject a batch."""

    name: str

    def extract(self, turns: Sequence[PreparedTurn]) -> Extraction: ...


class ExtractorError(Exception):
    """An extractor could not produce a valid result for a batch; nothing is written."""

    def __init__(self, message: str, *, retryable: bool = True, detail: Any = None) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.detail = detail
