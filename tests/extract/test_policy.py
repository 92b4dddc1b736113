"""Tests for the capture policy: the default file, turn classification and validation."""

from __future__ import annotations

import re
import string
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memtui.errors import ConfigError
from memtui.extract.policy import (
    Policy,
    default_policy,
    default_policy_text,
    load_policy,
    parse_policy,
    phrase_regex,
    validate_policy,
)

# --- the default policy ----------------------------------------------------------------


def test_default_policy_loads() -> None:
    policy = default_policy()
    assert policy.version == 1
    assert policy.captures_tool_calls
    assert policy.captures_tool_call(is_error=False)
    assert [s.name for s in policy.sections] == [
        "decisions",
        "incidents",
        "preferences",
        "facts",
        "corrections",
    ]
    assert [s.name for s in policy.forbidden] == ["ui_noise", "ephemeral", "self_narration"]
    assert default_policy() is policy  # parsed once


def test_default_policy_file_is_valid_as_copied(tmp_path: Path) -> None:
    # What `memtui init` writes must load with load_policy.
    path = tmp_path / "policy.yaml"
    path.write_text(default_policy_text(), encoding="utf-8")
    loaded = load_policy(path)
    assert loaded.path == str(path)
    assert loaded.sections == default_policy().sections


def test_default_retention() -> None:
    policy = default_policy()
    assert policy.retention_days("episodic", "tool_call") == 180
    assert policy.retention_days("episodic", "decision") == 180
    assert policy.retention_days("episodic", "incident") is None  # forever
    for kind in ("preference", "fact", "correction"):
        assert policy.retention_days("semantic", kind) is None  # until contradicted
    with pytest.raises(ValueError, match="unknown layer/kind"):
        policy.retention_days("semantic", "decision")


def test_every_default_phrase_matches_itself() -> None:
    for section in default_policy().sections + default_policy().forbidden:
        for pattern in section.patterns:
            if not pattern.is_regex:
                assert pattern.regex.search(pattern.source), pattern.key


# (role, text, after_tool_error, captured kinds, refusal kind)
TURNS: list[tuple[str, str, bool, list[str], str | None]] = [
    # decisions
    ("user", "Let's go with Postgres for the job queue.", False, ["decision"], None),
    ("user", "We decided to drop Python 3.10 support.", False, ["decision"], None),
    ("user", "OK, going with option B then.", False, ["decision"], None),
    ("user", "We agreed to ship on Friday after the demo.", False, ["decision"], None),
    ("user", "The plan is to cut a release branch tonight.", False, ["decision"], None),
    ("user", "let’s use uv instead of pip-tools", False, ["decision", "correction"], None),
    ("assistant", "We decided to keep SQLite; the migration is 0007.", False, ["decision"], None),
    # the agent's "let's" is its next step; the person's is a decision
    ("assistant", "Done with WP10.\nNow let's run the checks:", False, [], None),
    ("user", "now let's run the checks and ship it", False, ["decision"], None),
    ("user", "let's see what happens if we bump the timeout", False, [], None),
    # incidents: the user's next turn after a tool error
    ("user", "what happened? that command should not fail", True, ["incident"], None),
    ("user", "no, use the staging config instead", True, ["incident", "correction"], None),
    ("user", "that command failed again", False, [], None),
    ("assistant", "The test failed because the fixture is missing.", True, [], None),
    ("user", "ok", True, [], "ui_noise"),
    # preferences
    ("user", "I prefer tabs over spaces in the Makefile.", False, ["preference"], None),
    ("user", "Always run the linter before committing.", False, ["preference"], None),
    ("user", "Please never force-push to main.", False, ["preference"], None),
    ("user", "From now on, write commit messages in the imperative.", False, ["preference"], None),
    ("user", "I'd rather you ask before deleting files.", False, ["preference"], None),
    ("user", "We always squash-merge.", False, ["preference"], None),
    ("user", "This never happened before.", False, [], None),
    # facts
    ("user", "Our staging host is stg-3.acme.internal.", False, ["fact"], None),
    ("user", "Dana's timezone is Europe/Berlin.", False, ["fact"], None),
    ("user", "Postgres is our primary database.", False, ["fact"], None),
    ("user", "The API gateway runs on port 8443.", False, ["fact"], None),
    ("user", "We use pnpm in this repo.", False, ["fact"], None),
    ("user", "SRE stands for site reliability engineering.", False, ["fact"], None),
    ("user", "It's a bit slow today.", False, [], None),
    # corrections
    ("user", "No, that's wrong — the port is 5433.", False, ["correction"], None),
    ("user", "Actually, the config lives in /etc/memtui.", False, ["fact", "correction"], None),
    ("user", "That's not what I asked for.", False, ["correction"], None),
    ("user", "You edited the wrong file.", False, ["correction"], None),
    ("user", "No problem", False, [], "ui_noise"),
    # UI noise: only when it is the whole message
    ("user", "thanks", False, [], "ui_noise"),
    ("user", "Thanks!", False, [], "ui_noise"),
    ("user", "ok thanks 👍", False, [], "ui_noise"),
    ("user", "👍", False, [], "ui_noise"),
    ("user", "lgtm", False, [], "ui_noise"),
    ("user", "nice", False, [], "ui_noise"),
    ("user", "❤️", False, [], "ui_noise"),
    ("assistant", "Great!", False, [], "ui_noise"),
    ("user", "thanks, now deploy it to staging", False, [], None),
    ("user", "LGTM, going with this approach", False, ["decision"], None),
    ("user", "yes", False, [], None),  # an approval, not noise
    # ephemeral state
    ("user", "I am tired", False, [], "ephemeral"),
    ("user", "I'm exhausted, let's pick this up tomorrow", False, [], "ephemeral"),
    ("user", "let's pick this up tomorrow", False, [], "ephemeral"),
    ("user", "brb, getting coffee", False, [], "ephemeral"),
    ("user", "I'm tired of flaky tests; always retry network calls.", False, ["preference"], None),
    # model self-narration
    ("assistant", "I will now search for the config loader.", False, [], "self_narration"),
    ("assistant", "Let me check the logs first.", False, [], "self_narration"),
    ("assistant", "I'll start by reading the test file.", False, [], "self_narration"),
    ("assistant", "Okay, let me look at the migration.", False, [], "self_narration"),
    ("assistant", "Let's look at the failing test.", False, [], "self_narration"),
    ("assistant", "Fixed.\nI'm going to run the full suite now.", False, [], "self_narration"),
    ("assistant", "The fix is in. Let me know if you want a test too.", False, [], None),
    ("user", "Let me check with Dana and get back to you.", False, [], None),
    # other roles and empty text
    ("tool", "I prefer tabs", False, [], None),
    ("user", "   ", True, [], None),
]


@pytest.mark.parametrize(
    ("role", "text", "after_error", "kinds", "refusal"),
    TURNS,
    ids=[f"{r}:{t[:30]}" for r, t, *_ in TURNS],
)
def test_default_policy_classifies(
    role: str, text: str, after_error: bool, kinds: list[str], refusal: str | None
) -> None:
    verdict = default_policy().evaluate(text, role, after_tool_error=after_error)
    assert (verdict.refused.kind if verdict.refused else None) == refusal
    assert verdict.kinds() == kinds
    if refusal:
        assert verdict.captured == []


def test_table_is_broad() -> None:
    assert len(TURNS) >= 40
    kinds = {k for *_, ks, _ in TURNS for k in ks}
    refusals = {r for *_, r in TURNS if r}
    assert kinds == {"decision", "incident", "preference", "fact", "correction"}
    assert refusals == {"ui_noise", "ephemeral", "self_narration"}


def test_refusal_and_capture_details() -> None:
    policy = default_policy()
    refused = policy.evaluate("thanks", "user").refused
    assert refused is not None
    assert refused.reason == 'forbidden.ui_noise: "thanks" is UI noise'
    assert refused.rule.startswith("forbidden.ui_noise.patterns[")
    assert refused.pattern == "thanks"

    verdict = policy.evaluate("OK, going with option B then.", "user")
    (capture,) = verdict.captured
    assert (capture.layer, capture.kind, capture.pattern, capture.match) == (
        "episodic",
        "decision",
        "going with",
        "going with",
    )
    assert capture.reason == 'episodic.decisions: "going with" marks a decision'
    assert re.fullmatch(r"episodic\.decisions\.patterns\[\d+\]", capture.rule)
    assert verdict.allowed == frozenset({("episodic", "decision")})

    incident = policy.evaluate("why did that fail?", "user", after_tool_error=True).captured[0]
    assert (incident.kind, incident.rule) == ("incident", "episodic.incidents")


def test_role_is_case_insensitive() -> None:
    assert default_policy().evaluate("I prefer tabs", "User").kinds() == ["preference"]


# --- phrases ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("phrase", "text", "hit"),
    [
        ("never", "never push to main", True),
        ("never", "nevertheless it works", False),
        ("I prefer", "i   PREFER tabs", True),
        ("I prefer", "I prefer\ntabs", True),
        ("let's", "let’s ship it", True),
        ("let's", "lets ship it", False),
        ("I will now search for...", "I will now search for the file", True),
        ("👍", "👍👍", True),
        ("+1", "+1", True),
        ("+1", "+10", False),
        ("decision:", "Decision: keep it", True),
    ],
)
def test_phrase_matching(phrase: str, text: str, hit: bool) -> None:
    assert bool(re.search(phrase_regex(phrase), text, re.IGNORECASE)) is hit


# --- custom policies -------------------------------------------------------------------


def policy_from(text: str, tmp_path: Path, name: str = "policy.yaml") -> Policy:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return load_policy(path)


def test_minimal_policy(tmp_path: Path) -> None:
    policy = policy_from("version: 1\n", tmp_path)
    assert policy.sections == () and policy.forbidden == ()
    assert not policy.captures_tool_calls
    assert policy.evaluate("I prefer tabs", "user").captured == []
    assert policy.retention_days("episodic", "decision") == 180
    assert policy.retention_days("semantic", "fact") is None


def test_custom_sections_retention_and_modes(tmp_path: Path) -> None:
    policy = policy_from(
        """
        version: 1
        episodic:
          retention_days: 30
          tool_calls: {capture: errors, retention_days: 7}
          decisions:
            roles: [user]
            match: start
            patterns: ["decided:"]
          incidents:
            patterns: ["why"]
        semantic:
          retention_days: 365
          facts:
            retention_days: null
            patterns: [{re: '\\bis\\s+(?-i:[A-Z])'}]
          preferences:
            enabled: false
            patterns: ["I prefer"]
        forbidden:
          ephemeral:
            roles: [user, assistant]
            patterns: ["tomorrow"]
        """,
        tmp_path,
    )
    assert policy.tool_calls == "errors"
    assert policy.captures_tool_calls
    assert policy.captures_tool_call(is_error=True)
    assert not policy.captures_tool_call(is_error=False)
    assert policy.retention_days("episodic", "tool_call") == 7
    assert policy.retention_days("episodic", "decision") == 30
    assert policy.retention_days("episodic", "incident") == 30
    assert policy.retention_days("semantic", "preference") == 365
    assert policy.retention_days("semantic", "fact") is None
    assert policy.retention_days("semantic", "correction") == 365

    assert policy.evaluate("decided: tabs", "user").kinds() == ["decision"]
    assert policy.evaluate("so, decided: tabs", "user").kinds() == []  # not at the start
    assert policy.evaluate("ok\n  decided: tabs", "user").kinds() == ["decision"]
    assert policy.evaluate("decided: tabs", "assistant").kinds() == []
    assert policy.evaluate("why?", "user", after_tool_error=True).kinds() == ["incident"]
    assert policy.evaluate("hmm", "user", after_tool_error=True).kinds() == []
    assert policy.evaluate("the host is Bob", "user").kinds() == ["fact"]
    assert policy.evaluate("the host is bob", "user").kinds() == []  # (?-i:...)
    assert policy.evaluate("I prefer tabs", "user").kinds() == []  # disabled
    refused = policy.evaluate("decided: continue tomorrow", "assistant").refused
    assert refused is not None and refused.kind == "ephemeral"


# --- invalid policies ------------------------------------------------------------------

# (what is wrong, YAML, key path in the error, line of the error, words of the expectation)
INVALID: list[tuple[str, str, str, int, str]] = [
    (
        "yaml syntax",
        """
        version: 1
        semantic:
          preferences:
            patterns: ["I prefer", "always"
            roles: [user]
        """,
        "(syntax)",
        5,
        "valid YAML",
    ),
    (
        "yaml indentation",
        """
        version: 1
        semantic:
          preferences:
            patterns:
              - "I prefer"
             - "always"
        """,
        "(syntax)",
        6,
        "valid YAML",
    ),
    (
        "unknown section",
        """
        version: 1
        semantic:
          retention_days: null
          preferencs:
            patterns: ["I prefer"]
        """,
        "semantic.preferencs",
        4,
        "a known key",
    ),
    (
        "unknown section key",
        """
        version: 1
        semantic:
          preferences:
            roles: [user]
            pattern: ["I prefer"]
        """,
        "semantic.preferences.pattern",
        5,
        "a known key (enabled, roles, match, patterns, retention_days)",
    ),
    (
        "unknown top-level key",
        """
        version: 1
        capture: {}
        """,
        "capture",
        2,
        "a known key (version, episodic, semantic, forbidden)",
    ),
    (
        "unknown forbidden section",
        """
        version: 1
        forbidden:
          ui_noise:
            patterns: [ok]
          profanity:
            patterns: [heck]
        """,
        "forbidden.profanity",
        5,
        "a known key",
    ),
    (
        "retention in a forbidden section",
        """
        version: 1
        forbidden:
          ephemeral:
            patterns: [brb]
            retention_days: 3
        """,
        "forbidden.ephemeral.retention_days",
        5,
        "a known key",
    ),
    (
        "patterns not a list",
        """
        version: 1
        semantic:
          preferences:
            patterns: "I prefer"
        """,
        "semantic.preferences.patterns",
        4,
        "a list of phrases",
    ),
    (
        "roles not a list",
        """
        version: 1
        semantic:
          facts:
            roles: user
            patterns: ["we use"]
        """,
        "semantic.facts.roles",
        4,
        "a list",
    ),
    (
        "unknown role",
        """
        version: 1
        semantic:
          facts:
            roles:
              - user
              - robot
        """,
        "semantic.facts.roles[1]",
        6,
        "one of user, assistant, got 'robot'",
    ),
    (
        "section not a mapping",
        """
        version: 1
        episodic:
          decisions: ["let's"]
        """,
        "episodic.decisions",
        3,
        "a mapping",
    ),
    (
        "phrase not a string",
        """
        version: 1
        semantic:
          preferences:
            patterns:
              - "I prefer"
              - 42
        """,
        "semantic.preferences.patterns[1]",
        6,
        "a non-empty phrase",
    ),
    (
        "empty phrase",
        """
        version: 1
        semantic:
          preferences:
            patterns: ["I prefer", "..."]
        """,
        "semantic.preferences.patterns[1]",
        4,
        "a non-empty phrase",
    ),
    (
        "bad regex",
        """
        version: 1
        semantic:
          preferences:
            patterns:
              - "I prefer"
              - "always"
              - re: '(?:unclosed'
              - "never"
        """,
        "semantic.preferences.patterns[2]",
        7,
        "a valid regular expression",
    ),
    (
        "regex that matches everything",
        """
        version: 1
        episodic:
          decisions:
            patterns:
              - re: 'x*'
        """,
        "episodic.decisions.patterns[0]",
        5,
        "cannot match empty text",
    ),
    (
        "unknown pattern form",
        """
        version: 1
        episodic:
          decisions:
            patterns:
              - regex: 'we decided'
        """,
        "episodic.decisions.patterns[0].regex",
        5,
        "a known key (re, phrase, roles)",
    ),
    (
        "negative layer retention",
        """
        version: 1
        episodic:
          retention_days: -5
        """,
        "episodic.retention_days",
        3,
        "0 or more",
    ),
    (
        "negative section retention",
        """
        version: 1
        episodic:
          retention_days: 180
          decisions:
            patterns: ["we decided"]
            retention_days: -1
        """,
        "episodic.decisions.retention_days",
        6,
        "0 or more",
    ),
    (
        "retention not a number",
        """
        version: 1
        semantic:
          retention_days: forever
        """,
        "semantic.retention_days",
        3,
        "or null for forever, got 'forever'",
    ),
    (
        "retention a boolean",
        """
        version: 1
        episodic:
          tool_calls:
            capture: all
            retention_days: yes
        """,
        "episodic.tool_calls.retention_days",
        5,
        "got True",
    ),
    (
        "bad tool call mode",
        """
        version: 1
        episodic:
          tool_calls:
            capture: some
        """,
        "episodic.tool_calls.capture",
        4,
        "one of all, errors, none",
    ),
    (
        "bad match mode",
        """
        version: 1
        forbidden:
          ui_noise:
            match: entire
            patterns: [ok]
        """,
        "forbidden.ui_noise.match",
        4,
        "one of anywhere, start, whole",
    ),
    (
        "enabled not a boolean",
        """
        version: 1
        forbidden:
          ui_noise:
            enabled: "sometimes"
        """,
        "forbidden.ui_noise.enabled",
        4,
        "true or false",
    ),
    (
        "duplicate key",
        """
        version: 1
        semantic:
          facts:
            patterns: ["we use"]
          facts:
            patterns: ["runs on"]
        """,
        "semantic.facts",
        5,
        "given only once (also on line 3)",
    ),
    (
        "wrong version",
        """
        version: 2
        """,
        "version",
        1,
        "1 (the only policy format version), got 2",
    ),
    (
        "missing version",
        """
        # a comment first
        semantic: {}
        """,
        "version",
        2,
        "version: 1",
    ),
    (
        "unsafe tag",
        """
        version: 1
        episodic:
          retention_days: !!python/object/apply:os.getcwd []
        """,
        "episodic.retention_days",
        3,
        "a number of days",
    ),
    (
        "top level is a list",
        """
        - version: 1
        """,
        "(top level)",
        1,
        "a mapping",
    ),
]


INVALID += [
    ("pattern with both re and phrase", """
        version: 1
        episodic:
          decisions:
            patterns:
              - re: 'x'
                phrase: "y"
        """, "episodic.decisions.patterns[0]", 5, "either re: <regular expression> or phrase"),
    ("pattern roles unknown", """
        version: 1
        episodic:
          decisions:
            patterns:
              - phrase: "ship it"
                roles: [human]
        """, "episodic.decisions.patterns[0].roles[0]", 6, "one of user, assistant"),
    ("pattern roles empty", """
        version: 1
        episodic:
          decisions:
            patterns:
              - re: 'x'
                roles: []
        """, "episodic.decisions.patterns[0].roles", 6, "at least one role"),
]


def test_a_pattern_can_read_fewer_roles_than_its_section(tmp_path: Path) -> None:
    policy = policy_from(
        """
        version: 1
        episodic:
          decisions:
            roles: [user, assistant]
            patterns:
              - phrase: "ship it"
                roles: [user]
              - re: '\\bwe agreed\\b'
              - "go with"
        forbidden:
          ui_noise:
            match: whole
            patterns:
              - phrase: "ok"
                roles: [assistant]
        """,
        tmp_path,
    )
    assert policy.evaluate("ship it tonight", "user").kinds() == ["decision"]
    assert policy.evaluate("ship it tonight", "assistant").kinds() == []
    assert policy.evaluate("We agreed: ship it.", "assistant").captured[0].match == "We agreed"
    assert policy.evaluate("OK", "assistant").refused is not None
    assert policy.evaluate("OK", "user").refused is None


@pytest.mark.parametrize(("what", "text", "key", "line", "expected"), INVALID,
                         ids=[case[0] for case in INVALID])
def test_invalid_policy(
    what: str, text: str, key: str, line: int, expected: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError) as info:
        policy_from(text, tmp_path, name="my-policy.yaml")
    err = info.value
    path = str(tmp_path / "my-policy.yaml")
    assert (err.path, err.key, err.line) == (path, key, line), str(err)
    assert expected in err.expected
    assert str(err).startswith(f"{path}:{line}: {key}: ")
    assert "my-policy.yaml" in str(err)


def test_validate_reports_every_error_in_line_order() -> None:
    text = textwrap.dedent(
        """
        version: 1
        episodic:
          retention_days: -1
          decisions:
            roles: [robot]
        semantic:
          facts:
            patterns: [{re: '('}]
        """
    ).lstrip("\n")
    errors = validate_policy(text, "p.yaml")
    assert [(e.key, e.line) for e in errors] == [
        ("episodic.retention_days", 3),
        ("episodic.decisions.roles[0]", 5),
        ("semantic.facts.patterns[0]", 8),
    ]
    assert validate_policy(default_policy_text()) == []


def test_empty_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\(top level\): a mapping"):
        policy_from("# nothing here\n", tmp_path)


def test_missing_file_and_bad_encoding(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_policy(tmp_path / "nope.yaml")
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes("version: 1\n# caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match=r"latin1\.yaml: \(encoding\): UTF-8 text"):
        load_policy(bad)


def test_parse_policy_from_text() -> None:
    policy = parse_policy("version: 1\nsemantic:\n  facts:\n    patterns: ['we use']\n")
    assert policy.path == "<policy>"
    assert policy.evaluate("we use uv", "user").kinds() == ["fact"]


# --- robustness ------------------------------------------------------------------------

roles = st.one_of(st.sampled_from(["user", "assistant", "tool", "system", "USER", ""]), st.text())
words = st.sampled_from(
    ["let's", "thanks", "ok", "👍", "❤️", "\u200d", "I'm tired", "Let me check", "no,",
     "actually", "Dana's", "is", "our", " ", "\n", ".", "…", "'", "’", "İ"]
)
turn_texts = st.one_of(st.text(), st.lists(st.one_of(words, st.text(max_size=5))).map("".join))


@settings(max_examples=500, deadline=None)
@given(turn_texts, roles, st.booleans())
def test_evaluate_never_raises(text: str, role: str, after_error: bool) -> None:
    verdict = default_policy().evaluate(text, role, after_tool_error=after_error)
    if verdict.refused is not None:
        assert verdict.captured == []
        assert verdict.refused.reason.startswith("forbidden.")
    for capture in verdict.captured:
        assert capture.layer in ("episodic", "semantic")


policy_lines = st.sampled_from(default_policy_text().splitlines())
policy_junk = st.sampled_from(
    ["version: 1", "  patterns: [", "- re: '('", "retention_days: -1", "  - 42", ": :",
     "!!python/name:os.system", "&a x", "*a", "<<: *a", "roles: {}", "\t", "'", "{re: }"]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(policy_lines, policy_junk, st.text(max_size=8)), max_size=30))
def test_validate_never_raises(lines: list[str]) -> None:
    # Mangled policy files only ever produce ConfigErrors, each with a key.
    for err in validate_policy("\n".join(lines), "mangled.yaml"):
        assert isinstance(err, ConfigError)
        assert err.key and str(err).startswith("mangled.yaml")


ascii_turns = st.lists(
    st.one_of(
        st.sampled_from(["I prefer", "let's", "ok", "no", "thanks", "decision:", "+1", "👍"]),
        st.text(alphabet=string.ascii_letters + string.digits + " \n'’.,:+-_!", max_size=6),
    ),
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(ascii_turns)
def test_fast_phrase_form_agrees(text: str) -> None:
    # Phrases are searched in the lower-cased text with a literal-first regex; it must
    # find exactly what the documented case-insensitive form finds.
    policy = default_policy()
    for section in policy.sections + policy.forbidden:
        for pattern in section.patterns:
            if pattern.folded is not None:
                slow = pattern.regex.search(text)
                fast = pattern.folded.search(text.lower())
                assert (slow and slow.span()) == (fast and fast.span()), pattern.key
