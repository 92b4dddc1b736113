"""Tests for secret redaction: known secrets go, ordinary engineering prose stays."""

from __future__ import annotations

import base64
import hashlib
import random
import string
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memtui.redact import (
    KINDS,
    MIN_ECHO_LENGTH,
    PATTERNS,
    PLACEHOLDER_RE,
    REDACTION_VERSION,
    Finding,
    Redacted,
    contains_secret,
    is_placeholder_value,
    looks_like_secret,
    redact,
    shannon_entropy,
)

DATA = Path(__file__).parent / "data"

ALNUM = string.ascii_letters + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
HEX = "0123456789abcdef"


def fake(n: int, alphabet: str = ALNUM, seed: int = 0) -> str:
    """A deterministic random-looking value.

    Test secrets are built at run time so this file holds no literal token that a secret
    scanner (or a reader) could mistake for a real one.
    """
    rng = random.Random(f"{seed}:{n}:{alphabet}")
    return "".join(rng.choice(alphabet) for _ in range(n))


def pem(kind: str, lines: int = 4, sep: str = "\n") -> str:
    body = sep.join(fake(64, B64, seed=i) for i in range(lines))
    return f"-----BEGIN {kind}-----{sep}{body}{sep}-----END {kind}-----"


def jwt(seed: int = 0) -> str:
    header = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9"  # {"alg":"HS256","typ":"JWT"}
    return f"{header}.eyJ{fake(60, B64URL, seed)}.{fake(43, B64URL, seed + 1)}"


def discord(seed: int = 0) -> str:
    """A Discord bot token: the bot's id in base64, a timestamp part and an HMAC part."""
    bot_id = str(10**17 + random.Random(seed).randrange(10**18)).encode()
    head = base64.urlsafe_b64encode(bot_id).decode().rstrip("=")
    return f"{head}.{fake(6, B64URL, seed)}.{fake(38, B64URL, seed + 1)}"


# (kind, text with {s} where the secret goes, the secret)
TRUE_POSITIVES: list[tuple[str, str, str]] = [
    ("anthropic_key", "export ANTHROPIC_API_KEY={s}", "sk-ant-api03-" + fake(93, B64URL) + "AA"),
    ("anthropic_key", "client = Anthropic(api_key='{s}')", "sk-ant-admin01-" + fake(80, B64URL)),
    ("openai_key", "OPENAI_API_KEY={s}", "sk-" + fake(48, ALNUM, 1)),
    ("openai_key", "use {s} for the eval run", "sk-proj-" + fake(120, B64URL, 2)),
    ("openai_key", 'key: "{s}"', "sk-svcacct-" + fake(64, B64URL, 3)),
    ("aws_access_key_id", "aws_access_key_id = {s}", "AKIA" + fake(16, UPPER_ALNUM, 4)),
    ("aws_access_key_id", '"AccessKeyId": "{s}",', "ASIA" + fake(16, UPPER_ALNUM, 5)),
    ("aws_secret_key", "aws_secret_access_key = {s}", fake(40, B64, 6)),
    ("aws_secret_key", "export AWS_SECRET_ACCESS_KEY={s}", fake(40, B64, 7)),
    ("aws_secret_key", '"SecretAccessKey": "{s}",', fake(40, B64, 8)),
    ("github_token", "git clone https://{s}@github.com/acme/x.git", "ghp_" + fake(36, ALNUM, 9)),
    ("github_token", "GH_TOKEN={s} gh pr list", "gho_" + fake(36, ALNUM, 10)),
    ("github_token", "token {s} expired", "ghu_" + fake(36, ALNUM, 11)),
    ("github_token", "installation token: {s}", "ghs_" + fake(36, ALNUM, 12)),
    ("github_token", "refresh with {s}", "ghr_" + fake(36, ALNUM, 13)),
    (
        "github_token",
        "fine-grained PAT {s} (read-only)",
        "github_pat_" + fake(22, ALNUM, 14) + "_" + fake(59, ALNUM, 15),
    ),
    ("slack_token", "SLACK_BOT_TOKEN={s}", "xoxb-" + fake(12, string.digits) + "-" + fake(24)),
    ("slack_token", "user token {s}", "xoxp-" + fake(11, string.digits, 1) + "-" + fake(32, HEX)),
    ("slack_token", "legacy {s}", "xoxa-2-" + fake(30, ALNUM, 16)),
    ("slack_token", "refresh {s}", "xoxr-" + fake(40, ALNUM + "-", 17)),
    ("slack_token", "workspace {s}", "xoxs-" + fake(20, string.digits, 18)),
    (
        "slack_webhook",
        "curl -X POST https://hooks.slack.com/services/{s} -d @msg.json",
        "T0" + fake(8, UPPER_ALNUM) + "/B0" + fake(8, UPPER_ALNUM, 1) + "/" + fake(24),
    ),
    ("google_api_key", "maps/api/js?key={s}&v=3", "AIza" + fake(35, B64URL, 19)),
    ("google_api_key", 'firebaseConfig = {{ apiKey: "{s}" }}', "AIza" + fake(35, B64URL, 20)),
    ("private_key", "here is the key:\n{s}\nkeep it safe", pem("RSA PRIVATE KEY")),
    ("private_key", "{s}", pem("OPENSSH PRIVATE KEY", 6)),
    ("private_key", "ec: {s}", pem("EC PRIVATE KEY", 2)),
    ("private_key", "{s}", pem("PGP PRIVATE KEY BLOCK", 3)),
    ("private_key", '{{"key": "{s}"}}', pem("PRIVATE KEY", 3, sep="\\n")),
    ("discord_token", "DISCORD_BOT={s}", discord()),
    ("discord_token", "client.run('{s}')", discord(5)),
    ("jwt", "Cookie: session={s}; Path=/", jwt(1)),
    ("jwt", '{{"id_token": "{s}"}}', jwt(2)),
    ("url_password", "DATABASE_URL=postgres://app:{s}@db.internal:5432/app", "S3cr3t-" + fake(8)),
    ("url_password", "mysql://root:{s}@127.0.0.1/test", "hunter2"),
    ("url_password", "redis://:{s}@cache:6379/0", fake(24, ALNUM, 21)),
    ("url_password", "amqp://guest:{s}@rabbit//", "p%40ss" + fake(6, ALNUM, 22)),
    (
        "bearer_token",
        "curl -H 'Authorization: Bearer {s}' https://api.acme.example/v1/me",
        fake(40, ALNUM, 23),
    ),
    ("bearer_token", "bearer {s}", "ya29." + fake(60, B64URL, 24)),
    ("authorization", "Authorization: Basic {s}", "YWRtaW46" + fake(16, B64, 25) + "=="),
    ("authorization", "-H 'Authorization: token {s}'", fake(40, HEX, 26)),
    ("password", "password: {s}", "Tr0ub4dor&3"),
    ("password", "DB_PASSWORD={s}", fake(20, ALNUM, 27)),
    ("password", '{{"username": "dana", "password": "{s}"}}', "c0rrect-H0rse!"),
    ("password", "the password is {s} for now", "Winter2024!"),
    ("password", "passwd = '{s}'", fake(12, ALNUM + "!@#", 28)),
    ("password", "PGPASSWORD={s} psql -h db", fake(16, ALNUM, 29)),
    ("password", "passphrase: {s}", "blue-Falcon-42-river"),
    ("secret", "MY_APP_SECRET={s}", fake(32, HEX, 30)),
    ("secret", "SECRET_KEY_BASE={s}", fake(128, HEX, 31)),
    ("secret", "client_secret: {s}", fake(40, B64URL, 32)),
    ("secret", "api_key: {s}", fake(32, ALNUM, 33)),
    ("secret", '"apiKey": "{s}"', fake(24, ALNUM, 34)),
    ("secret", "X-API-Key: {s}", fake(32, HEX, 35)),
    ("secret", '{{"access_token": "{s}", "expires_in": 3600}}', fake(40, ALNUM + "._-", 36)),
    ("stripe_key", "STRIPE_SECRET_KEY={s}", "sk_live_" + fake(24, ALNUM, 37)),
    ("stripe_key", "stripe.api_key = '{s}'", "rk_live_" + fake(99, ALNUM, 60)),
    ("stripe_key", "charge it with {s} in test mode", "sk_test_" + fake(24, ALNUM, 61)),
    ("discord_token", "openclaw channels add discord --token {s}", discord(7)),
    ("password", "passwd: {s}", fake(14, ALNUM + "!%", 62)),
    ("secret", "credentials={s}", fake(30, B64, 38)),
    ("secret", "token: {s}", fake(20, ALNUM, 39)),
    ("secret", "the api key is {s}", fake(32, ALNUM, 40)),
    ("secret", "The API key was {s}.", fake(32, ALNUM, 41)),
    ("secret", "our secret key is {s} until Monday", fake(24, ALNUM + "!#", 42)),
    ("secret", "the Stripe key is {s}", fake(32, ALNUM, 43)),
    ("secret", "LICENSE_KEY={s}", fake(32, ALNUM, 44)),
]


@pytest.mark.parametrize(("kind", "template", "secret"), TRUE_POSITIVES)
def test_true_positive(kind: str, template: str, secret: str) -> None:
    text = template.format(s=secret)
    r = redact(text)
    assert secret not in r.text
    assert f"[REDACTED:{kind}]" in r.text
    spans = [(f.start, f.end) for f in r.findings if f.kind == kind]
    start = text.index(secret)
    assert (start, start + len(secret)) in spans, r.findings
    # Everything around the secret is untouched.
    before, after = template.split("{s}")
    assert r.text == before.format() + f"[REDACTED:{kind}]" + after.format()


def test_every_kind_has_a_true_positive() -> None:
    assert {kind for kind, _, _ in TRUE_POSITIVES} == set(KINDS)


def test_redaction_version_is_bumped_with_the_patterns() -> None:
    # A change to the patterns changes what is redacted: the version must say so (the
    # search index is rebuilt when it changes). Bump REDACTION_VERSION, then this pin.
    shape = repr([(p.kind, p.regex.pattern, p.regex.flags, p.anchors, p.fold, p.groups,
                   p.check.__name__ if p.check else None, p.strip) for p in PATTERNS])
    pin = hashlib.sha256(shape.encode()).hexdigest()[:16]
    assert (REDACTION_VERSION, pin) == (2, "4889562c6ec566a0")


def test_patterns_are_documented() -> None:
    doc = (Path(__file__).parents[2] / "docs" / "redaction.md").read_text(encoding="utf-8")
    for pattern in PATTERNS:
        assert pattern.why
        assert f"`{pattern.kind}`" in doc


# --- the clean corpus ------------------------------------------------------------------

# Lines of the clean corpus that are known, accepted false positives (line number: why).
# Keep this empty unless a trade-off is documented in docs/redaction.md.
KNOWN_FALSE_POSITIVES: dict[int, str] = {}


def clean_lines() -> list[str]:
    return (DATA / "clean_corpus.txt").read_text(encoding="utf-8").splitlines()


def test_clean_corpus_is_substantial() -> None:
    assert len(clean_lines()) >= 80


def test_clean_corpus_untouched() -> None:
    touched = {}
    for number, line in enumerate(clean_lines(), 1):
        r = redact(line)
        if r.findings and number not in KNOWN_FALSE_POSITIVES:
            touched[number] = r.text
    assert touched == {}


def test_clean_corpus_untouched_as_one_text() -> None:
    text = (DATA / "clean_corpus.txt").read_text(encoding="utf-8")
    assert redact(text).findings == []


# --- behaviour -------------------------------------------------------------------------


def test_empty_and_plain() -> None:
    assert redact("") == Redacted("", [])
    r = redact("nothing to see here")
    assert r.text == "nothing to see here" and not r.changed and r.kinds == []


def test_url_password_keeps_user_and_host() -> None:
    r = redact("connect to postgres://app:Sup3r-s3cret@db.internal:5432/app now")
    assert r.text == "connect to postgres://app:[REDACTED:url_password]@db.internal:5432/app now"


def test_url_placeholders_stay() -> None:
    for text in (
        "postgres://user:password@localhost/db",
        "postgres://app:${DB_PASSWORD}@db/app",
        "https://user:<token>@example.com",
        "https://example.com:8443/path@v2",
    ):
        assert redact(text).text == text


def test_key_value_placeholders_and_plain_words_stay() -> None:
    for text in (
        "password: please ask Dana",
        "password: ${DB_PASSWORD}",
        "token: <your-token>",
        "api_key: your_api_key_here",
        "secret: ***",
        "password = changeme",
        "max_tokens=4096",
        "token_budget: 3000",
        "tokenizer: cl100k_base",
        "secret: db_password_prod",
        "password_reset_url: https://acme.example/reset",
        "pwd: /home/dana/src",
        "the token is expired",
        "Authorization: Bearer <token>",
        "xoxb-your-bot-token-here",
        # The bare word "key" needs a generated-looking value: hex digests, identifiers
        # and words stay.
        f"the cache key is {fake(64, HEX, 50)}",
        f"key: {fake(40, HEX, 51)}",
        "the primary key is user_id_2024",
        "the key is to test early and often",
        "the sort key was createdAtTimestamp2024",
        "the api key is in the team vault",
        "the private key is stored in ~/.ssh/id_ed25519",
        "sk_live_your_key_goes_here",
        "see sk_test_placeholder_value in the docs",
    ):
        assert redact(text).text == text, text


def test_truncated_private_key_is_redacted_through_its_body() -> None:
    body = "\n".join(fake(64, B64, seed=i) for i in range(3))
    text = f"pasted:\n-----BEGIN RSA PRIVATE KEY-----\n{body}\n\nand then it cut off"
    r = redact(text)
    assert r.text == "pasted:\n[REDACTED:private_key]\n\nand then it cut off"


def test_public_key_stays() -> None:
    text = "-----BEGIN PUBLIC KEY-----\n" + fake(64, B64) + "\n-----END PUBLIC KEY-----"
    assert redact(text).text == text


def test_specific_kind_wins_over_key_value() -> None:
    token = "ghp_" + fake(36)
    r = redact(f"GITHUB_TOKEN={token}")
    assert r.findings == [Finding("github_token", 13, 13 + len(token))]


def test_bearer_jwt_is_one_finding() -> None:
    token = jwt()
    r = redact(f"Authorization: Bearer {token}")
    assert r.text == "Authorization: Bearer [REDACTED:jwt]"
    assert len(r.findings) == 1


def test_echoed_secret_is_redacted_everywhere() -> None:
    pw = "Xk9#mQ2vL8"
    r = redact(f"password: {pw}\nI typed {pw} into the prompt and ({pw}) again")
    assert pw not in r.text
    assert r.text.count("[REDACTED:password]") == 3
    assert [f.kind for f in r.findings] == ["password"] * 3


def test_findings_are_spans_of_the_original() -> None:
    key = "AKIA" + fake(16, UPPER_ALNUM)
    pw = "Tr0ub4dor&3"
    text = f"id {key} and password={pw}."
    r = redact(text)
    assert [(f.kind, text[f.start : f.end]) for f in r.findings] == [
        ("aws_access_key_id", key),
        ("password", pw),
    ]
    assert r.text == "id [REDACTED:aws_access_key_id] and password=[REDACTED:password]."
    assert r.kinds == ["aws_access_key_id", "password"]


def test_existing_placeholders_are_left_alone() -> None:
    text = "token: [REDACTED:secret] and password=[REDACTED:password]"
    assert redact(text) == Redacted(text, [])


def test_text_whose_lowercase_is_longer() -> None:
    # "İ".lower() is two characters: the folded patterns fall back to a full search.
    pw = "Tr0ub4dor&3"
    text = f"İstanbul İİ PASSWORD: {pw} İ"
    r = redact(text)
    assert r.text == "İstanbul İİ PASSWORD: [REDACTED:password] İ"
    assert text[r.findings[0].start : r.findings[0].end] == pw


def test_contains_secret() -> None:
    assert contains_secret("password: Tr0ub4dor&3")
    assert not contains_secret("password: please ask Dana")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("please", False),
        ("4096", False),
        ("2024-01-15", False),
        ("10.0.0.12", False),
        ("db_password_prod", False),
        ("/etc/memtui/token", False),
        ("https://acme.example/x", False),
        ("${SECRET}", False),
        ("<token>", False),
        ("xxxxxxxx", False),
        ("aaaaaaaa1", False),
        ("hunter22", True),
        ("Tr0ub4dor&3", True),
        ("S3cr3tPw", True),
        ("9f8e7d6c5b4a", True),
    ],
)
def test_looks_like_secret(value: str, expected: bool) -> None:
    assert looks_like_secret(value) is expected


def test_entropy_and_placeholders() -> None:
    assert shannon_entropy("") == 0.0
    assert shannon_entropy("aaaa") == 0.0
    assert shannon_entropy("abcd") == pytest.approx(2.0)
    assert is_placeholder_value("[REDACTED:jwt]")
    assert is_placeholder_value("your-token-here")
    assert not is_placeholder_value("Tr0ub4dor&3")


# --- robustness ------------------------------------------------------------------------

ADVERSARIAL = [
    "eyJ" * 50_000,
    "-----BEGIN RSA PRIVATE KEY-----\n" * 5_000,
    "password=" * 15_000,
    "api_key=" * 20_000,
    "token is " * 20_000,
    "://a:" * 30_000,
    "sk-" * 50_000,
    "Bearer " * 20_000,
    "Authorization: " * 10_000,
    " ".join(f"password=Ab3dEf9h{i}" for i in range(5_000)),
    "a" * 150_000 + "@",
    "sk_live_" * 20_000,
]


@pytest.mark.parametrize("text", ADVERSARIAL, ids=lambda t: repr(t[:12]))
def test_repetitive_input_never_hangs(text: str) -> None:
    """A guard against catastrophic backtracking, not a speed target: linear redaction of
    these takes well under a second; an exponential pattern would not finish at all.
    How time grows with input size is measured by bench/bench_redact.py."""
    start = time.perf_counter()
    out = redact(text)
    assert time.perf_counter() - start < 60.0
    assert "\x00" not in out and len(out) > 0


FRAGMENTS = [secret for _, _, secret in TRUE_POSITIVES] + [
    "password=",
    "password: ",
    "token: ",
    "api_key=",
    "FOO_SECRET=",
    "Authorization: ",
    "Bearer ",
    "Basic ",
    "postgres://",
    "://user:",
    "@host",
    ":",
    "=",
    "@",
    "-----BEGIN RSA PRIVATE KEY-----",
    "-----END RSA PRIVATE KEY-----",
    "eyJ",
    ".",
    "[REDACTED:jwt]",
    "[REDACTED:",
    "]",
    '"',
    "'",
    "\\n",
    "\n",
    " ",
    "Tr0ub4dor&3",
    "İ",
]

texts = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=24
).map("".join)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
def test_redact_properties(text: str) -> None:
    r = redact(text)
    # Idempotent.
    assert redact(r.text).text == r.text
    # Findings are sorted, disjoint spans of the original, and explain the output exactly.
    rebuilt, pos = [], 0
    for f in r.findings:
        assert f.kind in KINDS
        assert pos <= f.start < f.end <= len(text)
        rebuilt += [text[pos : f.start], f"[REDACTED:{f.kind}]"]
        pos = f.end
    rebuilt.append(text[pos:])
    assert "".join(rebuilt) == r.text
    # No redacted secret survives anywhere outside the placeholders (short ones, such as
    # a 1-character URL password, may of course occur elsewhere as ordinary text).
    outside = PLACEHOLDER_RE.sub("\x00", r.text)
    for f in r.findings:
        if f.end - f.start >= MIN_ECHO_LENGTH:
            assert text[f.start : f.end] not in outside


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_redact_never_raises_on_any_text(text: str) -> None:
    r = redact(text)
    assert isinstance(r.text, str)
