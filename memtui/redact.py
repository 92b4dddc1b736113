"""Secret redaction: replace credentials in transcript text with ``[REDACTED:<kind>]``.

Everything the stenographer reads passes through :func:`redact` before it is stored or sent
to a model, so this runs on every transcript turn and must be fast on ordinary prose.

How it works
------------
Each pattern in :data:`PATTERNS` has a *kind* (the name in the placeholder), a compiled
regex, the part of the match that is the secret (so ``postgres://app:<pw>@db`` keeps the
user and host), *anchors* -- literal strings every match starts with (``sk-``, ``eyJ``,
``://``, ``password`` ...) -- and optionally a *check* on the candidate value.

1. Fast path: anchors are found with ``in``/``str.find`` (which scan at memory speed), and
   each regex is only tried, with ``Pattern.match``, where one of its anchors occurs.
   Letting ``re`` search the whole text instead costs ~30 ms per MB per pattern (its
   look-behinds and ``(?i)`` defeat its own literal-prefix search); a turn without any
   anchor costs one ``lower()`` and 16 ``in``-like scans. Every regex is linear from any
   start: runs are bounded, and patterns that begin with a character-class run have a
   look-behind so only the first anchor of a run does any work.
2. Matches are validated (entropy, placeholders like ``<token>`` or ``${DB_PASSWORD}``),
   then overlapping matches are merged into one span that takes the kind of the most
   specific pattern (order of :data:`PATTERNS`), so ``GITHUB_TOKEN=ghp_...`` is reported
   once, as ``github_token``.
3. Every other verbatim occurrence of a found secret (8+ characters; the first
   :data:`MAX_ECHOES` distinct ones) is redacted too: a password echoed later in the same
   text is no less secret.
4. The result is scanned again until nothing new is found (at most a few passes), which
   makes :func:`redact` idempotent: ``redact(redact(x).text).text == redact(x).text``.
   Existing ``[REDACTED:<kind>]`` placeholders are never touched.

Kinds (see docs/redaction.md for the reasoning and known limits):

=================== ==================================================================
private_key         ``-----BEGIN ... PRIVATE KEY-----`` through the matching END line
                    (multi-line, also with JSON-escaped ``\\n``); a truncated block is
                    redacted through its base64 body lines.
anthropic_key       ``sk-ant-`` followed by 20+ key characters.
openai_key          ``sk-`` / ``sk-proj-`` / ``sk-svcacct-`` ... with 20+ key characters
                    that contain a digit and look random (not ``sk-learn-style-...``).
github_token        ``ghp_ gho_ ghu_ ghs_ ghr_`` + 36+ alphanumerics; ``github_pat_`` + 22+.
slack_token         ``xoxa- xoxb- xoxp- xoxr- xoxs-`` + 10+ characters with a digit.
slack_webhook       the path of ``hooks.slack.com/services|workflows|triggers/...`` URLs.
google_api_key      ``AIza`` + exactly 35 key characters.
stripe_key          ``sk_live_ rk_live_ sk_test_ rk_test_`` + 16+ random alphanumerics.
aws_access_key_id   ``AKIA ASIA ABIA ACCA`` + 16 upper-case alphanumerics.
aws_secret_key      a 40-character base64 value after ``aws_secret_access_key``,
                    ``aws_secret_key``, ``SecretAccessKey`` and similar.
discord_token       a Discord bot token: base64 of a 17-20 digit id, ``.``, 6 characters,
                    ``.``, 27+ characters.
jwt                 three base64url segments joined by dots, the header starting ``eyJ``.
url_password        the password in ``scheme://user:password@host`` (user and host stay).
bearer_token        the value after ``Bearer`` (16+ characters, looks random).
authorization       the value of an ``Authorization:`` header with another scheme
                    (``Basic``, ``token``, ``Bot``, ...) or none.
password            a value after ``password``/``passwd``/``passphrase``/``pwd`` and
                    ``:``, ``=``, ``:=``, ``=>`` or ``is`` that looks like a secret.
secret              the same for ``secret``, ``token``, ``api_key``, ``access_key``,
                    ``private_key``, ``credentials`` ... including env-style names
                    (``FOO_SECRET=``, ``SLACK_BOT_TOKEN=``), JSON keys and prose ("the
                    api key is ...", "the secret key was ..."); and a generated-looking
                    value (:func:`looks_generated`) after any other ``... key``.
=================== ==================================================================

"Looks like a secret" (:func:`looks_like_secret`): at least 8 characters (16 for bearer
tokens), not a placeholder or a path/URL, contains a letter, mixes at least two character
classes (lower, upper, digit, symbol other than ``_-.``), and has a Shannon entropy of at
least ``min(3.0, 0.75 * log2(len))`` bits per character. So ``password: please ask Dana``,
``max_tokens=4096`` and ``secret: db_password_prod`` stay, while ``password: Tr0ub4dor&3``
and ``FOO_SECRET=9f8e7d6c5b4a`` go.
"""

from __future__ import annotations

import math
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from memtui.text import strip_controls

REDACTION_VERSION = 2
"""What :func:`redact` takes out, as a number: bumped whenever a pattern or a value check
changes, so derived stores redacted by an older version (the search index) are rebuilt.
A test pins the patterns to it. 2: Stripe keys."""
PLACEHOLDER = "[REDACTED:{kind}]"
"""What a secret is replaced with; ``kind`` is one of :data:`KINDS`."""

PLACEHOLDER_RE = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
"""Matches a placeholder this module wrote (or one already in the text)."""

MIN_ECHO_LENGTH = 8
"""Found secrets at least this long are also redacted wherever else they occur verbatim."""

MAX_ECHOES = 64
"""How many distinct secrets are searched for again (each costs one scan of the text)."""

_MAX_PASSES = 4


class Finding(NamedTuple):
    """One redacted secret: its kind and its span in the *original* text."""

    kind: str
    start: int
    end: int


class Redacted(NamedTuple):
    """The redacted text and what was taken out of it (findings sorted by start).

    A NamedTuple rather than a frozen dataclass: it is built for every transcript turn,
    and a dataclass's ``__init__`` costs more than the whole fast path.
    """

    text: str
    findings: list[Finding]

    @property
    def changed(self) -> bool:
        """True when at least one secret was redacted."""
        return bool(self.findings)

    @property
    def kinds(self) -> list[str]:
        """The distinct kinds found, in order of first appearance."""
        return list(dict.fromkeys(f.kind for f in self.findings))


# --- value checks ---------------------------------------------------------------------


def shannon_entropy(value: str) -> float:
    """Shannon entropy of ``value`` in bits per character (0.0 for the empty string)."""
    n = len(value)
    if n == 0:
        return 0.0
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


# Values that stand for a secret instead of being one: templating ($VAR, ${VAR}, {{ x }},
# %(x)s, <token>, [REDACTED:x]), masks (***, xxxx, ...) and the usual example words. No
# nested quantifiers: this runs on attacker-controlled text.
_PLACEHOLDER_VALUE = re.compile(
    r"""(?ix)^(?:
        [$%<{\[(] .*
      | [*x•.…_-]+
      | .*redacted.*
      | (?:your|example|sample|dummy|fake|placeholder|replace|insert|enter)[a-z0-9_ -]*
      | changeme|change[_-]me|password|passw0rd|secret|none|null|nil|true|false
      | undefined|unset|empty|todo|tbd|n/?a
    )$""",
)

_SYMBOL = re.compile(r"[^\w.\-]")
_DIGIT = re.compile(r"\d")


def is_placeholder_value(value: str) -> bool:
    """True for values that name or mask a secret instead of holding one."""
    return _PLACEHOLDER_VALUE.match(value) is not None


def looks_like_secret(value: str, min_length: int = 8) -> bool:
    """Heuristic for a value after a key word: long, mixed, random-looking, not a stand-in.

    Written to keep ordinary words, numbers, dates, versions, identifiers and paths
    (``please``, ``4096``, ``2024-01-15``, ``db_password_prod``, ``/etc/token``) while
    catching real passwords and generated secrets.
    """
    if len(value) < min_length or is_placeholder_value(value):
        return False
    if value[0] in "/~" or value.startswith(("./", "../")) or "://" in value:
        return False
    # str methods and regexes rather than per-character Python loops: this runs at every
    # key-word hit, and adversarial text can have one every few characters.
    lower = value.upper() != value
    upper = value.lower() != value
    if not (lower or upper):
        return False  # numbers, dates, versions, IP addresses
    digit = _DIGIT.search(value) is not None
    symbol = _SYMBOL.search(value) is not None
    if lower + upper + digit + symbol < 2:
        return False  # a plain word or identifier such as please_ask_dana
    # The first 256 characters estimate the entropy of a longer value well enough and
    # bound the cost per hit (Counter is ~0.1 us per character).
    sample = value[:256]
    return shannon_entropy(sample) >= min(3.0, 0.75 * math.log2(len(sample)))


def _looks_random(value: str) -> bool:
    # For prefixed key formats (sk-...): real keys always mix digits and letters.
    return (
        _DIGIT.search(value) is not None
        and value.lower() != value.upper()
        and shannon_entropy(value[:256]) >= 3.0
    )


def _has_digit(value: str) -> bool:
    return _DIGIT.search(value) is not None


def _not_placeholder(value: str) -> bool:
    return not is_placeholder_value(value)


def _bearer_value(value: str) -> bool:
    return looks_like_secret(value, 16)


HIGH_ENTROPY_LENGTH = 24
HIGH_ENTROPY_BITS = 4.0
_HEX = re.compile(r"[0-9a-fA-F]+")


def _discord_id(value: str) -> bool:
    """The first part of a Discord token decodes to a 17-20 digit id (a snowflake)."""
    import base64
    import binascii

    head = value.split(".", 1)[0]
    try:
        decoded = base64.urlsafe_b64decode(head + "=" * (-len(head) % 4))
    except (binascii.Error, ValueError):
        return False
    return 17 <= len(decoded) <= 20 and decoded.isdigit()


def looks_generated(value: str) -> bool:
    """Stricter than :func:`looks_like_secret`, for a value after the bare word ``key``:
    at least 24 characters, letters and digits, more than 4.0 bits of entropy per
    character. A random 24+ character alphanumeric string has ~4.3-4.9; hex digests
    (cache keys, commit SHAs) stay at or below 4.0, words and identifiers far below."""
    if len(value) < HIGH_ENTROPY_LENGTH or not looks_like_secret(value):
        return False
    if not _DIGIT.search(value) or value.lower() == value.upper() or _HEX.fullmatch(value):
        return False
    return shannon_entropy(value[:256]) > HIGH_ENTROPY_BITS


# --- patterns -------------------------------------------------------------------------


@dataclass(frozen=True)
class SecretPattern:
    """One kind of secret: how to find it and why it is there."""

    kind: str
    regex: re.Pattern[str]
    """Tried with ``match`` at each anchor hit, so it must start with what the anchor found."""
    anchors: tuple[str, ...]
    """Literal strings every match starts with (lower-case when ``fold``)."""
    why: str
    fold: bool = False
    """Anchors are lower-case and searched for in the lower-cased text."""
    groups: tuple[str, ...] = ()
    """Named groups holding the secret (first that matched); empty: the whole match."""
    check: Callable[[str], bool] | None = None
    """Rejects candidate values (placeholders, low entropy)."""
    strip: str = ""
    """Characters stripped from the end of an unquoted value (sentence punctuation)."""

    def span(self, m: re.Match[str]) -> tuple[int, int] | None:
        """The span of the secret inside a match, or None if the value is rejected."""
        start, end = m.span()
        for name in self.groups:
            if m.group(name) is not None:
                start, end = m.span(name)
                if name == "bare" and self.strip:
                    end = start + len(m.group(name).rstrip(self.strip))
                break
        if end <= start:
            return None
        if self.check is not None and not self.check(m.string[start:end]):
            return None
        return start, end


# A quoted or bare value after a key word; ``\\?"`` also accepts JSON-escaped quotes.
_VALUE = (
    r"""(?:\\?"(?P<dq>[^"\\\n]{1,512})|'(?P<sq>[^'\n]{1,512})|`(?P<bq>[^`\n]{1,512})"""
    r"""|(?P<bare>[^\s"'`,;\\]{1,512}))"""
)
# The same, but a bare value stops at '&' too: ?key=<value>&v=3 is a query string.
_QUERY_VALUE = (
    r"""(?:\\?"(?P<dq>[^"\\\n]{1,512})|'(?P<sq>[^'\n]{1,512})|`(?P<bq>[^`\n]{1,512})"""
    r"""|(?P<bare>[^\s"'`,;\\&]{1,512}))"""
)
# Between key and value: ``:`` ``=`` ``:=`` ``=>`` (after an optional closing quote of a
# JSON or YAML key), or the word ``is``/``was`` as in "the password is ...".
_SEPARATOR = r"""(?:\\?["']?\s*(?::=|=>|[:=])\s*|\s+(?:is|was)\s+)"""
# What may follow the key word and still name the secret itself: passwords, password_hash,
# SECRET_KEY_BASE, token2 -- but not token_budget, tokenizer, password_reset_url.
_KEY_SUFFIX = (
    r"(?:s|[_.-]?(?:key(?:[_.-]?base)?|hash|value|str|string|plain|raw)| key)?(?:[_.-]?\d{1,3})?"
)
_VALUE_GROUPS = ("dq", "sq", "bq", "bare")
_TRAILING_PUNCTUATION = ".)]}>"  # not ! or ?: common at the end of passwords


def _key_after(prefixes: tuple[str, ...]) -> str:
    """``key`` preceded by one of ``prefixes`` (optionally joined by ``_``, ``-`` or a space:
    ``api_key``, ``api-key``, ``apikey``, "the api key is ...").

    The match starts at ``key`` (its anchor) and checks the prefix with look-behinds,
    which must be fixed-width in ``re``, hence one per length.
    """
    by_width: dict[int, list[str]] = {}
    for prefix in prefixes:
        for joined in (prefix, prefix + "_", prefix + "-", prefix + " "):
            by_width.setdefault(len(joined), []).append(re.escape(joined))
    behinds = "|".join(f"(?<={'|'.join(words)})" for _, words in sorted(by_width.items()))
    return f"(?:{behinds})key"


_SECRET_KEY_WORDS = (
    r"(?:secret|token|credentials?|"
    + _key_after(("api", "access", "private", "signing", "encryption", "master", "client"))
    + ")"
)
# aws_secret_access_key, aws_secret_key, AWS_SECRET_ACCESS_KEY, SecretAccessKey: the match
# starts at "secret" (its anchor); an "aws" before it is checked with a look-behind.
_AWS_SECRET_KEY_WORDS = (
    r"(?i:secret(?:(?<=aws_secret)|(?<=aws-secret)|(?<=aws\.secret)|(?<=awssecret))[_.-]?"
    r"(?:access[_.-]?)?key|secret[_.-]?access[_.-]?key)"
)

PATTERNS: tuple[SecretPattern, ...] = (
    SecretPattern(
        "private_key",
        re.compile(
            r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            # The body stops at the next run of five dashes, so a BEGIN without an END
            # costs the distance to the next BEGIN, not a scan to the end of the text.
            r"(?:(?:[^-]|-(?!----)){0,16384}-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----"
            # No END line (a truncated paste): take the header and base64 body lines.
            r"|(?:(?:\r?\n|\\r?\\n)[ \t]*(?:[A-Za-z0-9+/=]{8,}|[A-Za-z][A-Za-z-]*:[^\n\\]*))*)",
            re.DOTALL,
        ),
        ("-----BEGIN",),
        "PEM/OpenSSH/PGP private keys: the whole block is the secret.",
    ),
    SecretPattern(
        "anthropic_key",
        re.compile(r"(?<![A-Za-z0-9_-])sk-ant-[A-Za-z0-9_-]{20,}"),
        ("sk-",),
        "Anthropic API and admin keys (sk-ant-api03-..., sk-ant-admin01-...).",
    ),
    SecretPattern(
        "openai_key",
        re.compile(r"(?<![A-Za-z0-9_-])sk-(?!ant-)[A-Za-z0-9_-]{20,}"),
        ("sk-",),
        "OpenAI keys: legacy sk-<48>, sk-proj-, sk-svcacct-, sk-admin-.",
        check=_looks_random,
    ),
    SecretPattern(
        "github_token",
        re.compile(
            r"(?<![A-Za-z0-9_])(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,243})"
            r"(?![A-Za-z0-9_])"
        ),
        ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
        "GitHub personal, OAuth, user-to-server, server-to-server, refresh and fine-grained "
        "tokens.",
    ),
    SecretPattern(
        "slack_token",
        re.compile(r"(?<![A-Za-z0-9-])xox[abprs]-[A-Za-z0-9-]{10,250}"),
        ("xox",),
        "Slack bot/user/app/refresh tokens; a digit is required so 'xoxb-your-token' stays.",
        check=_has_digit,
    ),
    SecretPattern(
        "slack_webhook",
        re.compile(
            r"(?i:hooks\.slack\.com)/(?:services|workflows|triggers)/(?P<v>[A-Za-z0-9_/-]{8,})"
        ),
        ("hooks.slack.com",),
        "Incoming-webhook URLs: anyone with the path can post; the host stays readable.",
        fold=True,
        groups=("v",),
    ),
    SecretPattern(
        "google_api_key",
        re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])"),
        ("AIza",),
        "Google Cloud / Firebase / Maps API keys.",
    ),
    SecretPattern(
        "stripe_key",
        re.compile(r"(?<![A-Za-z0-9_])[rs]k_(?:live|test)_[A-Za-z0-9]{16,247}(?![A-Za-z0-9])"),
        ("sk_live_", "sk_test_", "rk_live_", "rk_test_"),
        "Stripe secret and restricted keys (sk_live_, rk_live_ and their test-mode twins).",
        check=_looks_random,
    ),
    SecretPattern(
        "aws_access_key_id",
        re.compile(r"(?<![A-Za-z0-9])(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
        ("AKIA", "ASIA", "ABIA", "ACCA"),
        "AWS access key ids (long-term AKIA, temporary ASIA); half of a credential pair.",
    ),
    SecretPattern(
        "aws_secret_key",
        re.compile(
            _AWS_SECRET_KEY_WORDS + r"\\?[\"']?\s*(?::|=|=>)\s*\\?[\"']?"
            r"(?P<v>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+=])"
        ),
        ("secret",),
        "AWS secret access keys: 40 base64 characters, only recognisable next to their name.",
        fold=True,
        groups=("v",),
    ),
    SecretPattern(
        "discord_token",
        re.compile(r"(?<![A-Za-z0-9_-])[MNO][A-Za-z0-9_-]{22,27}\.[A-Za-z0-9_-]{6,7}"
                   r"\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])"),
        # The first part is the bot's numeric id in base64: these are its possible starts.
        ("MT", "Mj", "Mz", "ND", "NT", "Nj", "Nz", "OD", "OT"),
        "Discord bot tokens: base64 of the bot's id, a timestamp and an HMAC, dot-joined.",
        check=_discord_id,
    ),
    SecretPattern(
        "jwt",
        re.compile(r"(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"),
        ("eyJ",),
        "JSON Web Tokens (session and ID tokens); eyJ is base64 for '{\"'.",
    ),
    SecretPattern(
        "url_password",
        re.compile(r"://(?P<user>[^\s:/?#@\[\]\"'<>]*):(?P<v>[^\s/?#@\"'<>]+)@"),
        ("://",),
        "Credentials embedded in URLs (database DSNs, git remotes); user and host stay.",
        groups=("v",),
        check=_not_placeholder,
    ),
    SecretPattern(
        "bearer_token",
        re.compile(r"(?i)\bbearer\s+(?P<v>[A-Za-z0-9._~+/-]+=*)"),
        ("bearer",),
        "OAuth bearer tokens, in Authorization headers, curl commands and logs.",
        fold=True,
        groups=("v",),
        check=_bearer_value,
    ),
    SecretPattern(
        "authorization",
        re.compile(
            r"(?i)\bauthorization\\?[\"']?\s*[:=]\s*\\?[\"']?(?!bearer\b)"
            r"(?:(?:basic|token|bot|digest|apikey|key)\s+)?(?P<v>[^\s\"'\\,;]+)"
        ),
        ("authorization",),
        "Other Authorization header schemes (Basic user:pass, GitHub 'token ...', 'Bot ...').",
        fold=True,
        groups=("v",),
        check=looks_like_secret,
    ),
    SecretPattern(
        "password",
        re.compile(
            r"(?i)(?:password|passwd|passphrase|pwd)" + _KEY_SUFFIX + _SEPARATOR + _VALUE
        ),
        ("password", "passwd", "passphrase", "pwd"),
        "A value after a password key word that looks like a secret (see looks_like_secret).",
        fold=True,
        groups=_VALUE_GROUPS,
        check=looks_like_secret,
        strip=_TRAILING_PUNCTUATION,
    ),
    SecretPattern(
        "secret",
        re.compile(r"(?i)" + _SECRET_KEY_WORDS + _KEY_SUFFIX + _SEPARATOR + _VALUE),
        ("secret", "token", "credential", "key"),
        "A value after a secret/token/api-key key word (also FOO_SECRET=, JSON keys) that "
        "looks like a secret.",
        fold=True,
        groups=_VALUE_GROUPS,
        check=looks_like_secret,
        strip=_TRAILING_PUNCTUATION,
    ),
    SecretPattern(
        "secret",
        re.compile(r"(?i)(?<![a-z0-9])keys?" + _SEPARATOR + _QUERY_VALUE),
        ("key",),
        "A generated-looking value (looks_generated) after any '<word> key' or '<WORD>_KEY' "
        "and ':', '=', 'is' or 'was': 'the Stripe key is ...', 'LICENSE_KEY=...'.",
        fold=True,
        groups=_VALUE_GROUPS,
        check=looks_generated,
        strip=_TRAILING_PUNCTUATION,
    ),
)
"""All patterns, most specific first: on overlap the earlier pattern names the kind."""

KINDS: tuple[str, ...] = tuple(p.kind for p in PATTERNS)
"""Every kind a placeholder can name."""


@dataclass(frozen=True)
class _Finder:
    """Finds where the anchors of some patterns occur: a literal (``in``/``find``) or, for
    anchors sharing a first character, one alternation (``re`` scans for its literal
    prefix at memory speed and is cheaper than several ``in`` tests)."""

    anchors: tuple[str, ...]
    fold: bool
    users: tuple[tuple[int, SecretPattern], ...]
    regex: re.Pattern[str] | None

    def positions(self, haystack: str) -> list[int]:
        if self.regex is not None:
            return [m.start() for m in self.regex.finditer(haystack)]
        anchor = self.anchors[0]
        found = []
        i = haystack.find(anchor)
        while i != -1:
            found.append(i)
            i = haystack.find(anchor, i + 1)
        return found


def _build_finders() -> tuple[_Finder, ...]:
    groups: dict[tuple[tuple[str, ...], bool], list[tuple[int, SecretPattern]]] = {}
    for rank, pattern in enumerate(PATTERNS):
        by_first: dict[str, list[str]] = {}
        for anchor in pattern.anchors:
            by_first.setdefault(anchor[0], []).append(anchor)
        for anchors in by_first.values():
            groups.setdefault((tuple(anchors), pattern.fold), []).append((rank, pattern))
    return tuple(
        _Finder(
            anchors,
            fold,
            tuple(users),
            re.compile("|".join(map(re.escape, anchors))) if len(anchors) > 1 else None,
        )
        for (anchors, fold), users in groups.items()
    )


# A turn with no anchor at all (most prose) costs one lower() and 16 scans at ~1.5 GB/s.
_FINDERS = _build_finders()
# The same as plain tuples: the presence loop runs for every turn, attribute lookups add up.
_PROBES: tuple[tuple[_Finder, str | None, re.Pattern[str] | None, bool], ...] = tuple(
    (f, f.anchors[0] if f.regex is None else None, f.regex, f.fold) for f in _FINDERS
)


# --- scanning -------------------------------------------------------------------------


class _Span(NamedTuple):
    start: int
    end: int
    rank: int  # index into PATTERNS


def _overlaps(intervals: list[tuple[int, int]], starts: list[int], start: int, end: int) -> bool:
    # intervals are sorted and disjoint; look at the one starting at or before ``end``.
    i = bisect_right(starts, end - 1) - 1
    return i >= 0 and intervals[i][1] > start


def _merge(spans: list[_Span]) -> list[_Span]:
    """Union of overlapping spans; each union keeps the most specific (lowest) rank."""
    merged: list[_Span] = []
    for span in sorted(spans):
        if merged and span.start < merged[-1].end:
            last = merged[-1]
            merged[-1] = _Span(last.start, max(last.end, span.end), min(last.rank, span.rank))
        else:
            merged.append(span)
    return merged


def _scan(text: str, echoes: dict[str, int]) -> list[_Span]:
    """Secret spans in ``text`` (merged), skipping existing placeholders.

    ``echoes`` maps secrets found earlier (in this or a previous pass) to their rank, so
    their verbatim repeats are redacted too.
    """
    lowered = text.lower()
    hits: list[tuple[_Finder, str]] = []
    for finder, literal, regex, fold in _PROBES:
        haystack = lowered if fold else text
        # Presence first: a miss (the usual case) is one C-level scan, no allocation.
        if literal is not None:
            if literal in haystack:
                hits.append((finder, haystack))
        elif regex is not None and regex.search(haystack) is not None:
            hits.append((finder, haystack))
    if not hits and not echoes:
        return []  # the fast path: no pattern can match

    # lower() lengthens a few characters (U+0130 becomes two); then lowered offsets are not
    # text offsets and folded patterns fall back to a full regex search (slow but rare).
    aligned = len(lowered) == len(text)
    occupied: list[tuple[int, int]] = []
    if "[REDACTED:" in text:
        occupied = [m.span() for m in PLACEHOLDER_RE.finditer(text)]
    starts = [s for s, _ in occupied]

    spans: list[_Span] = []
    searched: set[int] = set()  # ranks already searched in full (unaligned text only)
    for finder, haystack in hits:
        positions = finder.positions(haystack)
        for rank, pattern in finder.users:
            if pattern.fold and not aligned:
                if rank in searched:
                    continue
                searched.add(rank)
                matches: Iterable[re.Match[str] | None] = pattern.regex.finditer(text)
            else:
                matches = [pattern.regex.match(text, i) for i in positions]
            covered = -1  # end of this pattern's last accepted match
            for m in matches:
                # A hit inside this pattern's previous accepted match can only find a
                # part of it again (e.g. "api_key=api_key=..."); skipping keeps
                # repetitive text linear.
                if m is None or m.start() < covered:
                    continue
                found = pattern.span(m)
                if found is None or (occupied and _overlaps(occupied, starts, *found)):
                    continue
                covered = m.end()
                spans.append(_Span(found[0], found[1], rank))
    if not spans and not echoes:
        return []

    spans = _merge(spans)
    secrets = dict(echoes)
    for span in spans:
        if len(secrets) >= MAX_ECHOES:
            break
        value = text[span.start : span.end]
        if len(value) >= MIN_ECHO_LENGTH:
            secrets.setdefault(value, span.rank)
    found_starts = [span.start for span in spans]
    echoed: list[_Span] = []
    for value, rank in secrets.items():
        i = text.find(value)
        while i != -1:
            end = i + len(value)
            # Skip repeats inside a found span; and search on from the end of this one:
            # an overlapping repeat is already broken up by this redaction.
            j = bisect_right(found_starts, i) - 1
            inside = j >= 0 and spans[j].end >= end
            if not inside and not (occupied and _overlaps(occupied, starts, i, end)):
                echoed.append(_Span(i, end, rank))
            i = text.find(value, end)
    return _merge(spans + echoed) if echoed else spans


def _apply(text: str, spans: list[_Span]) -> tuple[str, list[tuple[int, int]]]:
    """Replace spans by placeholders; also return (output start, original start) of each
    kept piece so spans found in the output can be mapped back to the original."""
    out: list[str] = []
    pieces: list[tuple[int, int]] = []
    pos = 0
    size = 0
    for span in spans:
        pieces.append((size, pos))
        out.append(text[pos : span.start])
        size += span.start - pos
        placeholder = PLACEHOLDER.format(kind=PATTERNS[span.rank].kind)
        out.append(placeholder)
        size += len(placeholder)
        pos = span.end
    pieces.append((size, pos))
    out.append(text[pos:])
    return "".join(out), pieces


def _to_original(
    span: _Span, pieces: list[tuple[int, int]], spans: list[_Span], text_len: int
) -> _Span | None:
    i = bisect_right([p[0] for p in pieces], span.start) - 1
    out_start, orig_start = pieces[i]
    # A kept piece ends where the next replaced span starts (or at the end of the text).
    orig_end_of_piece = spans[i].start if i < len(spans) else text_len
    start = orig_start + span.start - out_start
    end = orig_start + span.end - out_start
    if end > orig_end_of_piece:  # pragma: no cover - placeholders are never overlapped
        return None
    return _Span(start, end, span.rank)


def redact(text: str) -> Redacted:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``.

    Findings give each secret's kind and span in ``text``. Never raises on any string;
    idempotent; existing placeholders are left alone.
    """
    spans = _scan(text, {})
    if not spans:
        return Redacted(text, [])
    out, pieces = _apply(text, spans)
    for _ in range(_MAX_PASSES):
        echoes: dict[str, int] = {}
        for span in spans:
            if len(echoes) >= MAX_ECHOES:
                break
            value = text[span.start : span.end]
            if len(value) >= MIN_ECHO_LENGTH:
                echoes.setdefault(value, span.rank)
        extra = _scan(out, echoes)
        if not extra:
            break
        mapped = [_to_original(s, pieces, spans, len(text)) for s in extra]
        spans = _merge(spans + [s for s in mapped if s is not None])
        out, pieces = _apply(text, spans)
    findings = [Finding(PATTERNS[s.rank].kind, s.start, s.end) for s in spans]
    return Redacted(out, findings)


def scrub(text: str) -> str:
    """What every way into memory stores: control characters and terminal escapes removed
    (:func:`memtui.text.strip_controls`), then secrets redacted. Idempotent."""
    return redact(strip_controls(text)).text


def scrub_value(value: Any) -> Any:
    """:func:`scrub` on every string inside a JSON-like value (the audit log's details)."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: scrub_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_value(v) for v in value]
    return value


def contains_secret(text: str) -> bool:
    """True if :func:`redact` would change ``text`` (same cost as redacting)."""
    return bool(_scan(text, {}))
