"""The secret patterns: one per kind of secret, with its anchors and value check.

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
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

# The checks' names are part of the pattern shape REDACTION_VERSION is pinned to (a test
# hashes them), hence their private names across the module boundary.
from memtui.redact.checks import (
    _bearer_value,
    _discord_id,
    _has_digit,
    _looks_random,
    _not_placeholder,
    looks_generated,
    looks_like_secret,
)

REDACTION_VERSION = 2
"""What :func:`redact` takes out, as a number: bumped whenever a pattern or a value check
changes, so derived stores redacted by an older version (the search index) are rebuilt.
A test pins the patterns to it. 2: Stripe keys."""
PLACEHOLDER = "[REDACTED:{kind}]"
"""What a secret is replaced with; ``kind`` is one of :data:`KINDS`."""

PLACEHOLDER_RE = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
"""Matches a placeholder this module wrote (or one already in the text)."""


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
