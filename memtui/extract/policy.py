"""The capture policy file: parsing and validating ``policy.yaml`` into a ``Policy``.

A policy is a YAML file (``policy.yaml`` in every memory home, copied from
``default_policy.yaml`` by ``memtui init``; that file documents the format for users).
This module parses and validates it -- every error is a :class:`~memtui.errors.ConfigError`
naming the file, the key path (``semantic.preferences.patterns[2]``) and the line -- into
the immutable :class:`~memtui.extract.capture.Policy` that evaluates turns::

    policy = load_policy(home.policy_path)      # or default_policy()
    verdict = policy.evaluate(text, "user", after_tool_error=False)

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
        - phrase: "let's"           # {phrase: ...} or {re: ...} with roles: read
          roles: [user]             # only these speakers' words (narrower than the section)
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
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memtui.errors import ConfigError
from memtui.extract.capture import Pattern, Policy, Section

__all__ = ["VERSION", "Policy", "default_policy", "default_policy_text", "load_policy",
           "parse_policy", "phrase_regex", "validate_policy"]

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


# --- compiling patterns --------------------------------------------------------------

_WORD = re.compile(r"\w")
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|…)$")


def _phrase_pieces(text: str, *, look_behind_after_first: bool) -> str:
    """A phrase as regex: any run of whitespace matches any whitespace, ``'`` matches
    ``'`` and ``’``, the rest literally; and the word boundary before it, as a
    look-behind placed before the phrase or after its first word."""
    out: list[str] = []
    for i, token in enumerate(re.findall(r"\s+|['’]|[^\s'’]+", text)):
        if token.isspace():
            out.append(r"\s+")
        elif token in "'’":
            out.append("['’]")
        else:
            out.append(re.escape(token))
            if look_behind_after_first and i == 0 and _WORD.match(token[0]):
                out.append(f"(?<!\\w{re.escape(token)})")
    body = "".join(out)
    if not look_behind_after_first and text and _WORD.match(text[0]):
        body = r"(?<!\w)" + body
    if text and _WORD.match(text[-1]):
        body += r"(?!\w)"
    return body


def phrase_regex(phrase: str) -> str:
    """The regex a phrase stands for (see the module docstring)."""
    return _phrase_pieces(_ELLIPSIS.sub("", phrase.strip()), look_behind_after_first=False)


def _folded_phrase_regex(phrase: str) -> str:
    """:func:`phrase_regex` for lower-cased text, starting with a literal.

    The word boundary before the phrase is checked by a look-behind placed after the
    phrase's first word rather than before it, so ``re`` can search for that word as a
    literal prefix.
    """
    return _phrase_pieces(_ELLIPSIS.sub("", phrase.strip()).lower(),
                          look_behind_after_first=True)


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


def _choice(node: yaml.Node, key: str, choices: tuple[str, ...], errors: _Collector
            ) -> str | None:
    """The node's value when it is one of ``choices``; None (after reporting) otherwise."""
    value = _scalar(node, errors) if _is_scalar(node) else None
    if value in choices:
        return str(value)
    errors.add(key, f"one of {', '.join(choices)}, got {value!r}", node)
    return None


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


def _roles(node: yaml.Node, key: str, errors: _Collector) -> tuple[str, ...] | None:
    """The roles a list names (reporting unknown ones); None if it names none."""
    listed = _string_list(node, key, errors)
    if listed is None:
        return None
    if not listed:
        errors.add(key, f"at least one role ({', '.join(ROLES)})", node)
    for i, (value, item) in enumerate(listed):
        if value.lower() not in ROLES:
            errors.add(f"{key}[{i}]", f"one of {', '.join(ROLES)}, got {value!r}", item)
    return tuple(v.lower() for v, _ in listed if v.lower() in ROLES) or None


def _phrase(value: object, item_key: str, item: yaml.Node, errors: _Collector,
            roles: frozenset[str] | None) -> Pattern | None:
    if not isinstance(value, str) or not _ELLIPSIS.sub("", value.strip()):
        errors.add(item_key, f"a non-empty phrase (a string), got {value!r}", item)
        return None
    return Pattern(value, False, re.compile(phrase_regex(value), re.IGNORECASE), item_key,
                   re.compile(_folded_phrase_regex(value)), roles)


def _patterns(node: yaml.Node, key: str, errors: _Collector) -> tuple[Pattern, ...]:
    import yaml

    if not isinstance(node, yaml.SequenceNode):
        errors.add(key, "a list of phrases (strings) and {re: <regex>} entries", node)
        return ()
    out: list[Pattern] = []
    for i, item in enumerate(node.value):
        item_key = f"{key}[{i}]"
        if isinstance(item, yaml.ScalarNode):
            phrase = _phrase(_scalar(item, errors), item_key, item, errors, None)
            if phrase is not None:
                out.append(phrase)
            continue
        entries = _mapping(item, item_key, ("re", "phrase", "roles"), errors)
        if entries is None:
            continue
        roles = None
        if "roles" in entries:
            listed = _roles(entries["roles"][1], f"{item_key}.roles", errors)
            roles = frozenset(listed) if listed else None
        if ("re" in entries) == ("phrase" in entries):
            errors.add(item_key, "either re: <regular expression> or phrase: <words>", item)
            continue
        if "phrase" in entries:
            value_node = entries["phrase"][1]
            value = _scalar(value_node, errors) if isinstance(value_node, yaml.ScalarNode) else None
            phrase = _phrase(value, item_key, value_node, errors, roles)
            if phrase is not None:
                out.append(phrase)
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
        out.append(Pattern(source, True, regex, item_key, roles=roles))
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
        roles = _roles(entries["roles"][1], f"{key}.roles", errors) or roles
    if "match" in entries:
        match = _choice(entries["match"][1], f"{key}.match", MATCH_MODES, errors) or match
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
        mode = _choice(entries["capture"][1], "episodic.tool_calls.capture", TOOL_CALL_MODES,
                       errors) or mode
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
