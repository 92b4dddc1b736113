"""The capture policy, evaluated: what a turn may put into memory and what is forbidden.

:class:`Policy` is what ``policy.yaml`` becomes once ``memtui.extract.policy`` has parsed
and validated it. It evaluates turns without any I/O::

    verdict = policy.evaluate(text, "user", after_tool_error=False)
    if verdict.refused:                          # forbidden beats capture
        ...verdict.refused.reason               # 'forbidden.ui_noise: "thanks" is UI noise'
    for capture in verdict.captured:             # layer, kind, pattern, match, rule, reason
        ...
    policy.captures_tool_calls                   # tool calls are not text: a flag
    policy.retention_days("episodic", "decision")  # 180; None = forever/until contradicted

``match: whole`` means the message consists of nothing but the patterns, punctuation,
whitespace and emoji modifiers ("ok thanks 👍"), so "thanks, now deploy it to staging" is
not noise; ``match: start`` tries each line's start after indentation and quote or list
markers.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

# --- the evaluated policy ------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    """One entry of a section's ``patterns`` list, compiled."""

    source: str
    """As written: the phrase, or the regex after ``re:``."""
    is_regex: bool
    regex: re.Pattern[str]
    """Case-insensitive; searched in the original text."""
    key: str
    """Its key path, e.g. ``semantic.preferences.patterns[2]``."""
    folded: re.Pattern[str] | None = None
    """Phrases only: the same, case-sensitive and starting with a literal, searched in the
    lower-cased text. ``re`` finds a literal prefix at memory speed but scans position by
    position under IGNORECASE or a leading look-behind (~50x slower on long turns)."""

    roles: frozenset[str] | None = None
    """Whose words this one pattern reads, when narrower than its section's roles."""

    def search(self, text: str, lowered: str | None) -> re.Match[str] | None:
        """Search ``text`` (via ``lowered``, its same-length lower-case form, if given)."""
        if self.folded is not None and lowered is not None:
            return self.folded.search(lowered)
        return self.regex.search(text)

    def match_at(self, text: str, lowered: str | None, pos: int) -> re.Match[str] | None:
        """Match at ``pos`` exactly (look-behinds still see the text before it)."""
        if self.folded is not None and lowered is not None:
            return self.folded.match(lowered, pos)
        return self.regex.match(text, pos)


@dataclass(frozen=True)
class Section:
    """A capture or forbidden section of the policy."""

    layer: str
    """``episodic``, ``semantic`` or ``forbidden``."""
    name: str
    kind: str
    roles: frozenset[str]
    match: str
    patterns: tuple[Pattern, ...]
    describe: str
    """How a reason describes a hit: 'marks a decision', 'is UI noise' ..."""
    retention_days: int | None = None
    enabled: bool = True

    @property
    def key(self) -> str:
        return f"{self.layer}.{self.name}"

    def find(self, text: str, lowered: str | None = None, role: str | None = None
             ) -> tuple[Pattern, str] | None:
        """The first pattern (in list order) that matches ``text`` under ``match``, and
        the text it matched. ``lowered``: ``text.lower()`` if it has the same length;
        ``role``: the speaker, which skips the patterns that name other roles."""
        patterns = self.patterns
        if role is not None and any(p.roles is not None for p in patterns):
            patterns = tuple(p for p in patterns if p.roles is None or role in p.roles)
        if self.match == "whole":
            return _match_whole(patterns, text)
        if self.match == "start":
            # Only try where a line starts (after indentation, quote and list markers):
            # a handful of anchored matches instead of a search of the whole text.
            starts = _line_starts(text)
            for pattern in patterns:
                for pos in starts:
                    m = pattern.match_at(text, lowered, pos)
                    if m is not None:
                        return pattern, text[m.start() : m.end()]
            return None
        for pattern in patterns:
            m = pattern.search(text, lowered)
            if m is not None:
                return pattern, text[m.start() : m.end()]
        return None


@dataclass(frozen=True)
class Capture:
    """Something the turn may put into memory."""

    layer: str
    """``episodic`` or ``semantic``."""
    kind: str
    """decision, incident, preference, fact or correction."""
    pattern: str
    """The phrase or regex that matched, as written ('' for an incident with no patterns)."""
    match: str
    """The text it matched."""
    rule: str
    """Key path of the pattern (``episodic.decisions.patterns[3]``) or of the section."""
    reason: str
    """E.g. ``episodic.decisions: "going with" marks a decision``."""


@dataclass(frozen=True)
class Refusal:
    """Why the turn must not be captured at all."""

    kind: str
    """ephemeral, ui_noise or self_narration."""
    pattern: str
    match: str
    rule: str
    reason: str
    """E.g. ``forbidden.ui_noise: "thanks" is UI noise``."""


@dataclass(frozen=True)
class Verdict:
    """What the policy says about one turn: forbidden beats capture."""

    captured: list[Capture] = field(default_factory=list)
    refused: Refusal | None = None

    @property
    def allowed(self) -> frozenset[tuple[str, str]]:
        """The (layer, kind) pairs this turn may produce."""
        return frozenset((c.layer, c.kind) for c in self.captured)

    def kinds(self) -> list[str]:
        """The captured kinds, in policy order."""
        return [c.kind for c in self.captured]


@dataclass(frozen=True)
class Policy:
    """A validated policy. Immutable; :meth:`evaluate` is pure and thread-safe."""

    path: str
    version: int
    tool_calls: str
    """all | errors | none."""
    sections: tuple[Section, ...]
    """Capture sections present in the file, in schema order (decisions, incidents,
    preferences, facts, corrections): the order of ``Verdict.captured``."""
    forbidden: tuple[Section, ...]
    """Forbidden sections in the order of the file (the order they are checked in)."""
    retention: dict[tuple[str, str], int | None] = field(default_factory=dict)
    layers: dict[str, int | None] = field(default_factory=dict)
    """Each layer's own ``retention_days`` (episodic 180 by default, semantic None): what a
    kind the policy has no section for is kept for."""

    @property
    def captures_tool_calls(self) -> bool:
        """True unless ``episodic.tool_calls.capture`` is ``none``."""
        return self.tool_calls != "none"

    def captures_tool_call(self, *, is_error: bool) -> bool:
        """Whether a tool call is recorded, given whether its result was an error."""
        return self.tool_calls == "all" or (self.tool_calls == "errors" and is_error)

    def retention_days(self, layer: str, kind: str) -> int | None:
        """Days a memory of this layer and kind is kept; None = forever (episodic) or
        until contradicted (semantic). Raises ValueError for an unknown pair."""
        try:
            return self.retention[(layer, kind)]
        except KeyError:
            known = ", ".join(f"{lay}/{k}" for lay, k in self.retention)
            raise ValueError(
                f"unknown layer/kind {layer}/{kind}; expected one of {known}"
            ) from None

    def layer_retention_days(self, layer: str) -> int | None:
        """A layer's ``retention_days`` (None = forever / until contradicted)."""
        if layer in self.layers:
            return self.layers[layer]
        return 180 if layer == "episodic" else None

    def evaluate(self, text: str, role: str, *, after_tool_error: bool = False,
                 noise: bool = True) -> Verdict:
        """Classify one turn's text.

        ``role`` is the speaker (user, assistant; others match no section).
        ``after_tool_error``: this turn follows a tool result with ``is_error`` -- a user
        turn then counts as an incident. Forbidden sections are checked first and a hit
        refuses the whole turn (nothing captured). ``noise``: check the ``ui_noise``
        sections (False for a reply to the agent's offer, where "ok" or "perfect" settles
        it). Never raises.
        """
        role = role.lower() if isinstance(role, str) else ""
        if not isinstance(text, str) or not text.strip():
            return Verdict()
        folded = text.lower()
        # Offsets in the lower-cased text are offsets in the text unless lower() changed
        # its length ("İ" becomes two characters); then phrases use their IGNORECASE form.
        lowered = folded if len(folded) == len(text) else None
        for section in self.forbidden:
            if not section.enabled or role not in section.roles or (
                    not noise and section.kind == "ui_noise"):
                continue
            hit = section.find(text, lowered, role)
            if hit is not None:
                pattern, matched = hit
                return Verdict(
                    refused=Refusal(
                        kind=section.kind,
                        pattern=pattern.source,
                        match=matched,
                        rule=pattern.key,
                        reason=f"{section.key}: {_quote(matched)} {section.describe}",
                    )
                )
        captured: list[Capture] = []
        for section in self.sections:
            if not section.enabled or role not in section.roles:
                continue
            if section.kind == "incident":
                if not after_tool_error:
                    continue
                if not section.patterns:
                    captured.append(
                        Capture(section.layer, section.kind, "", "", section.key,
                                f"{section.key}: the {role} reacts to a tool error")
                    )
                    continue
            hit = section.find(text, lowered, role)
            if hit is not None:
                pattern, matched = hit
                captured.append(
                    Capture(
                        layer=section.layer,
                        kind=section.kind,
                        pattern=pattern.source,
                        match=matched,
                        rule=pattern.key,
                        reason=f"{section.key}: {_quote(matched)} {section.describe}",
                    )
                )
        return Verdict(captured=captured)


def _quote(matched: str) -> str:
    one_line = " ".join(matched.split())
    if len(one_line) > 40:
        one_line = one_line[:39] + "…"
    return f'"{one_line}"'


# Before a "start" match there may only be indentation, quote and list markers.
_LINE_LEAD = frozenset(" \t>*-•+#")


def _line_starts(text: str) -> list[int]:
    """Where a ``match: start`` pattern is tried: each line's first character after its
    indentation and quote/list markers (``> ``, ``- ``, ``* ``, ``1. `` is not one)."""
    starts: list[int] = []
    begin, n = 0, len(text)
    while True:
        pos = begin
        while pos < n and text[pos] in _LINE_LEAD:
            pos += 1
        starts.append(pos)
        newline = text.find("\n", pos)
        if newline == -1:
            return starts
        begin = newline + 1


def _skippable(ch: str) -> bool:
    # Whitespace, punctuation, and the invisible parts of emoji (variation selectors,
    # zero-width joiners, skin-tone modifiers) may sit between noise patterns.
    return ch.isspace() or unicodedata.category(ch)[0] in "PZC" or unicodedata.category(ch) in (
        "Mn",
        "Me",
        "Sk",
    )


def _match_whole(patterns: tuple[Pattern, ...], text: str) -> tuple[Pattern, str] | None:
    """The first pattern if ``text`` is nothing but patterns and separators."""
    first: Pattern | None = None
    pos, n = 0, len(text)
    while True:
        while pos < n and _skippable(text[pos]):
            pos += 1
        if pos >= n:
            break
        for pattern in patterns:
            m = pattern.regex.match(text, pos)
            if m is not None and m.end() > pos:
                first = first or pattern
                pos = m.end()
                break
        else:
            return None  # a word that is not noise: the message says something
    return (first, text.strip()) if first is not None else None

