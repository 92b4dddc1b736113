"""The capture policy: what a turn may put into memory, what is forbidden, and for how long.

A policy is a YAML file (``policy.yaml`` in every memory home, copied from
``default_policy.yaml`` by ``memtui init``; that file documents the format for users).
This module parses and validates it -- every error is a :class:`~memtui.errors.ConfigError`
naming the file, the key path (``semantic.preferences.patterns[2]``) and the line -- and
evaluates turns against it without any I/O::

    policy = load_policy(home.policy_path)      # or default_policy()
    verdict = policy.evaluate(text, "user", after_tool_error=False)
    if verdict.refused:                          # forbidden beats capture
        ...verdict.refused.reason               # 'forbidden.ui_noise: "thanks" is UI noise'
    for capture in verdict.captured:             # layer, kind, pattern, match, rule, reason
        ...
    policy.captures_tool_calls                   # tool calls are not text: a flag
    policy.retention_days("episodic", "decision")  # 180; None = forever/until contradicted

Schema (version 1)::

    version: 1
    episodic:                       # what happened
      retention_days: 180           # default for the kinds below; null = forever
      tool_calls: {capture: all}    # all | errors | none  (+ optional retention_days)
      decisions:  <section>         # kind "decision"
      incidents:  <section>         # kind "incident": only right after a tool error;
                                    # no patterns = any reaction counts
    semantic:                       # what is true
      retention_days: null          # kept until contradicted
      preferences: <section>        # kind "preference"
      facts:       <section>        # kind "fact"
      corrections: <section>        # kind "correction"
    forbidden:                      # checked first, in the order written; a hit refuses
      ui_noise:       <section>     # kind "ui_noise"
      ephemeral:      <section>     # kind "ephemeral"
      self_narration: <section>     # kind "self_narration"

    <section>:
      enabled: true                 # optional
      roles: [user]                 # whose text the section reads: user, assistant
      match: anywhere               # anywhere | start (of the message or a line) | whole
      patterns:                     # a string is a phrase; {re: ...} is a regex
        - "I prefer"
        - re: '\\bplease (?:always|never)\\b'
      retention_days: 30            # capture sections only; absent = the layer's default

Phrases match case-insensitively on word boundaries (where the phrase starts or ends with a
letter or digit); any run of whitespace in a phrase matches any whitespace, ``'`` matches
``'`` and ``’``, and a trailing ``...`` is ignored. Regexes are Python ``re`` syntax,
compiled case-insensitive (use ``(?-i:...)`` to opt out). ``match: whole`` means the message
consists of nothing but the patterns, punctuation, whitespace and emoji modifiers ("ok
thanks 👍"), so "thanks, now deploy it to staging" is not noise.

Missing sections are simply off; keys the schema does not know are errors (a typo would
otherwise silently disable a rule).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtui.errors import ConfigError

if TYPE_CHECKING:  # yaml is imported lazily: only loading a policy needs it
    import yaml

VERSION = 1
"""The policy format version this module reads."""

ROLES = ("user", "assistant")
MATCH_MODES = ("anywhere", "start", "whole")
TOOL_CALL_MODES = ("all", "errors", "none")

# section name -> (kind, default roles, default match mode, words for the reason)
_CAPTURE_SECTIONS: dict[str, dict[str, tuple[str, tuple[str, ...], str, str]]] = {
    "episodic": {
        "decisions": ("decision", ("user", "assistant"), "anywhere", "marks a decision"),
        "incidents": ("incident", ("user",), "anywhere", "reacts to a tool error"),
    },
    "semantic": {
        "preferences": ("preference", ("user",), "anywhere", "states a preference"),
        "facts": ("fact", ("user",), "anywhere", "states a fact"),
        "corrections": ("correction", ("user",), "anywhere", "corrects the agent"),
    },
}
_FORBIDDEN_SECTIONS: dict[str, tuple[str, tuple[str, ...], str, str]] = {
    "ui_noise": ("ui_noise", ("user", "assistant"), "whole", "is UI noise"),
    "ephemeral": ("ephemeral", ("user",), "anywhere", "is ephemeral state"),
    "self_narration": ("self_narration", ("assistant",), "start", "is model self-narration"),
}
_SECTION_KEYS = ("enabled", "roles", "match", "patterns")
_TOP_KEYS = ("version", "episodic", "semantic", "forbidden")


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

    def find(self, text: str, lowered: str | None = None) -> tuple[Pattern, str] | None:
        """The first pattern (in list order) that matches ``text`` under ``match``, and
        the text it matched. ``lowered``: ``text.lower()`` if it has the same length."""
        if self.match == "whole":
            return _match_whole(self.patterns, text)
        if self.match == "start":
            # Only try where a line starts (after indentation, quote and list markers):
            # a handful of anchored matches instead of a search of the whole text.
            starts = _line_starts(text)
            for pattern in self.patterns:
                for pos in starts:
                    m = pattern.match_at(text, lowered, pos)
                    if m is not None:
                        return pattern, text[m.start() : m.end()]
            return None
        for pattern in self.patterns:
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

    def evaluate(self, text: str, role: str, *, after_tool_error: bool = False) -> Verdict:
        """Classify one turn's text.

        ``role`` is the speaker (user, assistant; others match no section).
        ``after_tool_error``: this turn follows a tool result with ``is_error`` -- a user
        turn then counts as an incident. Forbidden sections are checked first and a hit
        refuses the whole turn (nothing captured). Never raises.
        """
        role = role.lower() if isinstance(role, str) else ""
        if not isinstance(text, str) or not text.strip():
            return Verdict()
        folded = text.lower()
        # Offsets in the lower-cased text are offsets in the text unless lower() changed
        # its length ("İ" becomes two characters); then phrases use their IGNORECASE form.
        lowered = folded if len(folded) == len(text) else None
        for section in self.forbidden:
            if not section.enabled or role not in section.roles:
                continue
            hit = section.find(text, lowered)
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
            hit = section.find(text, lowered)
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


# --- compiling patterns --------------------------------------------------------------

_WORD = re.compile(r"\w")
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…)$")


def phrase_regex(phrase: str) -> str:
    """The regex a phrase stands for (see the module docstring)."""
    text = _ELLIPSIS.sub("", phrase.strip())
    out: list[str] = []
    for token in re.findall(r"\s+|['’]|[^\s'’]", text):
        if token.isspace():
            out.append(r"\s+")
        elif token in "'’":
            out.append("['’]")
        else:
            out.append(re.escape(token))
    body = "".join(out)
    if text and _WORD.match(text[0]):
        body = r"(?<!\w)" + body
    if text and _WORD.match(text[-1]):
        body += r"(?!\w)"
    return body


def _folded_phrase_regex(phrase: str) -> str:
    """:func:`phrase_regex` for lower-cased text, starting with a literal.

    The word boundary before the phrase is checked by a look-behind placed after the
    phrase's first word rather than before it, so ``re`` can search for that word as a
    literal prefix.
    """
    text = _ELLIPSIS.sub("", phrase.strip()).lower()
    tokens = re.findall(r"\s+|['’]|[^\s'’]+", text)
    out: list[str] = []
    for i, token in enumerate(tokens):
        if token.isspace():
            out.append(r"\s+")
        elif token in "'’":
            out.append("['’]")
        else:
            out.append(re.escape(token))
            if i == 0 and _WORD.match(token[0]):
                out.append(f"(?<!\\w{re.escape(token)})")
    body = "".join(out)
    if text and _WORD.match(text[-1]):
        body += r"(?!\w)"
    return body


# --- loading and validating ----------------------------------------------------------


class _Collector:
    """Collects ConfigErrors so validate_policy can report all of them at once; holds the
    one YAML constructor a parse uses for scalars (building one per scalar was most of
    the load time)."""

    def __init__(self, path: str) -> None:
        import yaml

        self.path = path
        self.errors: list[ConfigError] = []
        self.constructor = yaml.SafeLoader("")

    def add(self, key: str, expected: str, node: yaml.Node | None) -> None:
        line = node.start_mark.line + 1 if node is not None else None
        self.errors.append(ConfigError(self.path, key, expected, line))


class _Unreadable:
    """A scalar the safe loader cannot construct (e.g. ``!!python/object``); fails every
    type check, so the caller reports what it expected."""

    def __repr__(self) -> str:
        return "an unsupported YAML tag"


def _scalar(node: yaml.Node, errors: _Collector) -> Any:
    """The Python value of a scalar node, as yaml.safe_load would give it."""
    import yaml

    try:
        return errors.constructor.construct_object(node, deep=True)
    except yaml.YAMLError:
        return _Unreadable()


def _mapping(
    node: yaml.Node, key: str, known: tuple[str, ...], errors: _Collector
) -> dict[str, tuple[yaml.Node, yaml.Node]] | None:
    """A mapping node's entries by key (with their key nodes), reporting unknown and
    duplicate keys; None (after reporting) if the node is not a mapping."""
    import yaml

    if not isinstance(node, yaml.MappingNode):
        errors.add(key, f"a mapping with keys {', '.join(known)}", node)
        return None
    entries: dict[str, tuple[yaml.Node, yaml.Node]] = {}
    for key_node, value_node in node.value:
        name = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
        path = f"{key}.{name}" if key and name is not None else (name or key)
        if not isinstance(name, str) or name not in known:
            errors.add(path or "(key)", f"a known key ({', '.join(known)})", key_node)
            continue
        if name in entries:
            first = entries[name][0].start_mark.line + 1
            errors.add(path, f"a key given only once (also on line {first})", key_node)
            continue
        entries[name] = (key_node, value_node)
    return entries


def _retention(node: yaml.Node, key: str, errors: _Collector) -> tuple[bool, int | None]:
    """(valid, days): a whole number of days, 0 or more, or null (None: forever)."""
    import yaml

    if not _is_scalar(node):
        got = "a list" if isinstance(node, yaml.SequenceNode) else "a mapping"
        errors.add(key, f"a number of days (0 or more) or null for forever, got {got}", node)
        return False, None
    value = _scalar(node, errors)
    if value is None:
        return True, None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        errors.add(key, f"a number of days (0 or more) or null for forever, got {value!r}", node)
        return False, None
    return True, value


def _is_scalar(node: yaml.Node) -> bool:
    import yaml

    return isinstance(node, yaml.ScalarNode)


def _string_list(
    node: yaml.Node, key: str, errors: _Collector
) -> list[tuple[str, yaml.Node]] | None:
    """The strings of a list node (reporting other items); None if it is not a list."""
    import yaml

    if not isinstance(node, yaml.SequenceNode):
        errors.add(key, "a list, e.g. [user, assistant]", node)
        return None
    out = []
    for i, item in enumerate(node.value):
        value = _scalar(item, errors) if isinstance(item, yaml.ScalarNode) else None
        if not isinstance(value, str):
            errors.add(f"{key}[{i}]", "a string", item)
            continue
        out.append((value, item))
    return out


def _patterns(node: yaml.Node, key: str, errors: _Collector) -> tuple[Pattern, ...]:
    import yaml

    if not isinstance(node, yaml.SequenceNode):
        errors.add(key, "a list of phrases (strings) and {re: <regex>} entries", node)
        return ()
    out: list[Pattern] = []
    for i, item in enumerate(node.value):
        item_key = f"{key}[{i}]"
        if isinstance(item, yaml.ScalarNode):
            value = _scalar(item, errors)
            if not isinstance(value, str) or not _ELLIPSIS.sub("", value.strip()):
                errors.add(item_key, f"a non-empty phrase (a string), got {value!r}", item)
                continue
            out.append(
                Pattern(value, False, re.compile(phrase_regex(value), re.IGNORECASE), item_key,
                        re.compile(_folded_phrase_regex(value)))
            )
            continue
        entries = _mapping(item, item_key, ("re",), errors)
        if entries is None:
            continue
        if "re" not in entries:
            errors.add(item_key, "re: <regular expression>", item)
            continue
        value_node = entries["re"][1]
        source = _scalar(value_node, errors) if isinstance(value_node, yaml.ScalarNode) else None
        if not isinstance(source, str) or not source:
            errors.add(item_key, "re: a non-empty regular expression (a string)", value_node)
            continue
        try:
            regex = re.compile(source, re.IGNORECASE)
        except re.error as exc:
            errors.add(item_key, f"a valid regular expression ({exc})", value_node)
            continue
        if regex.match(""):
            errors.add(item_key, "a regular expression that cannot match empty text", value_node)
            continue
        out.append(Pattern(source, True, regex, item_key))
    return tuple(out)


def _section(
    layer: str,
    name: str,
    spec: tuple[str, tuple[str, ...], str, str],
    node: yaml.Node,
    errors: _Collector,
    layer_retention: int | None,
) -> Section | None:
    kind, default_roles, default_match, describe = spec
    key = f"{layer}.{name}"
    capture = layer != "forbidden"
    known = _SECTION_KEYS + (("retention_days",) if capture else ())
    entries = _mapping(node, key, known, errors)
    if entries is None:
        return None
    enabled, roles, match = True, default_roles, default_match
    patterns: tuple[Pattern, ...] = ()
    retention = layer_retention
    if "enabled" in entries:
        value_node = entries["enabled"][1]
        value = _scalar(value_node, errors) if _is_scalar(value_node) else None
        if isinstance(value, bool):
            enabled = value
        else:
            errors.add(f"{key}.enabled", "true or false", value_node)
    if "roles" in entries:
        value_node = entries["roles"][1]
        listed = _string_list(value_node, f"{key}.roles", errors)
        if listed is not None:
            if not value_node.value:
                errors.add(f"{key}.roles", f"at least one role ({', '.join(ROLES)})",
                           value_node)
            for i, (value, item) in enumerate(listed):
                if value.lower() not in ROLES:
                    errors.add(f"{key}.roles[{i}]", f"one of {', '.join(ROLES)}, got {value!r}",
                               item)
            roles = tuple(v.lower() for v, _ in listed if v.lower() in ROLES)
    if "match" in entries:
        value_node = entries["match"][1]
        value = _scalar(value_node, errors) if _is_scalar(value_node) else None
        if value in MATCH_MODES:
            match = value
        else:
            errors.add(f"{key}.match", f"one of {', '.join(MATCH_MODES)}, got {value!r}",
                       value_node)
    if "patterns" in entries:
        patterns = _patterns(entries["patterns"][1], f"{key}.patterns", errors)
    if "retention_days" in entries:
        ok, days = _retention(entries["retention_days"][1], f"{key}.retention_days", errors)
        if ok:
            retention = days
    return Section(layer, name, kind, frozenset(roles), match, patterns, describe, retention,
                   enabled)


def _build(text: str, path: str) -> tuple[Policy | None, list[ConfigError]]:
    import yaml

    errors = _Collector(path)
    try:
        # libyaml's parser when present (10x faster); both report the same marks.
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        root = yaml.compose(text, Loader=loader)
    except yaml.MarkedYAMLError as exc:
        # The parser's own line: where it found the problem (else where the construct began).
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "unreadable"
        line = mark.line + 1 if mark is not None else None
        return None, [ConfigError(path, "(syntax)", f"valid YAML: {problem}", line)]
    except yaml.YAMLError as exc:
        return None, [ConfigError(path, "(syntax)", f"valid YAML: {exc}")]
    expected_top = f"a mapping that starts with version: {VERSION}"
    if root is None:
        return None, [ConfigError(path, "(top level)", expected_top)]
    if not isinstance(root, yaml.MappingNode):
        return None, [ConfigError(path, "(top level)", expected_top, root.start_mark.line + 1)]
    top = _mapping(root, "", _TOP_KEYS, errors)
    assert top is not None

    if "version" not in top:
        errors.add("version", f"version: {VERSION} (the policy format version)", root)
    else:
        node = top["version"][1]
        value = _scalar(node, errors) if _is_scalar(node) else None
        if value != VERSION or isinstance(value, bool):
            errors.add("version", f"{VERSION} (the only policy format version), got {value!r}",
                       node)

    tool_calls = "none"
    retention: dict[tuple[str, str], int | None] = {}
    layers: dict[str, int | None] = {}
    sections: list[Section] = []
    for layer, specs in _CAPTURE_SECTIONS.items():
        extra = ("retention_days", "tool_calls") if layer == "episodic" else ("retention_days",)
        known = extra + tuple(specs)
        # Used when the file leaves a layer's retention out: 180 days / until contradicted.
        layer_retention: int | None = 180 if layer == "episodic" else None
        entries = _mapping(top[layer][1], layer, known, errors) if layer in top else {}
        if entries is None:
            entries = {}
        if "retention_days" in entries:
            ok, days = _retention(entries["retention_days"][1], f"{layer}.retention_days",
                                  errors)
            if ok:
                layer_retention = days
        layers[layer] = layer_retention
        if layer == "episodic":
            tool_retention = layer_retention
            if "tool_calls" in entries:
                tool_calls, tool_retention = _tool_calls(entries["tool_calls"][1], errors,
                                                         layer_retention)
            retention[("episodic", "tool_call")] = tool_retention
        for name, spec in specs.items():
            section = None
            if name in entries:
                section = _section(layer, name, spec, entries[name][1], errors, layer_retention)
            if section is not None:
                sections.append(section)
            retention[(layer, spec[0])] = (
                section.retention_days if section is not None else layer_retention
            )

    forbidden: list[Section] = []
    if "forbidden" in top:
        entries = _mapping(top["forbidden"][1], "forbidden", tuple(_FORBIDDEN_SECTIONS), errors)
        for name, (_, value_node) in (entries or {}).items():
            section = _section("forbidden", name, _FORBIDDEN_SECTIONS[name], value_node, errors,
                               None)
            if section is not None:
                forbidden.append(section)

    if errors.errors:
        return None, errors.errors
    policy = Policy(path, VERSION, tool_calls, tuple(sections), tuple(forbidden), retention,
                    layers)
    return policy, []


def _tool_calls(
    node: yaml.Node, errors: _Collector, layer_retention: int | None
) -> tuple[str, int | None]:
    entries = _mapping(node, "episodic.tool_calls", ("capture", "retention_days"), errors)
    mode, days = "all", layer_retention
    if entries is None:
        return mode, days
    if "capture" in entries:
        value_node = entries["capture"][1]
        value = _scalar(value_node, errors) if _is_scalar(value_node) else None
        if value in TOOL_CALL_MODES:
            mode = value
        else:
            errors.add("episodic.tool_calls.capture",
                       f"one of {', '.join(TOOL_CALL_MODES)}, got {value!r}", value_node)
    if "retention_days" in entries:
        ok, value_days = _retention(entries["retention_days"][1],
                                    "episodic.tool_calls.retention_days", errors)
        if ok:
            days = value_days
    return mode, days


def validate_policy(text: str, path: str | Path = "<policy>") -> list[ConfigError]:
    """Every problem in a policy's text, in file order; empty when it is valid."""
    _, errors = _build(text, str(path))
    return sorted(errors, key=lambda e: e.line or 0)


def parse_policy(text: str, path: str | Path = "<policy>") -> Policy:
    """A policy from YAML text; raises the first ConfigError (by line) if it is invalid."""
    policy, errors = _build(text, str(path))
    if errors:
        raise sorted(errors, key=lambda e: e.line or 0)[0]
    assert policy is not None
    return policy


def load_policy(path: str | Path) -> Policy:
    """Read and validate a policy file.

    Raises FileNotFoundError if it does not exist (``memtui init`` re-creates it) and
    ConfigError if it is not UTF-8 or not a valid policy.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(path, "(encoding)", "UTF-8 text") from exc
    return parse_policy(text, path)


def default_policy_text() -> str:
    """The text of the default policy (what ``memtui init`` writes to policy.yaml)."""
    return resources.files("memtui.extract").joinpath("default_policy.yaml").read_text(
        encoding="utf-8"
    )


@lru_cache(maxsize=1)
def default_policy() -> Policy:
    """The default policy shipped with memtui (parsed once; policies are immutable)."""
    return parse_policy(default_policy_text(), "default_policy.yaml")
