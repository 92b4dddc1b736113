"""Small text tools shared by the engine: normalising, keys, stems, similarity, token estimates,
the prose helpers extractors share (visible prose, sentences, summaries, domains),
and the control-character rules for text that goes in (stripped) and out (made visible)."""

from __future__ import annotations

import math
import re
import unicodedata
from difflib import SequenceMatcher
from functools import lru_cache

_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_WORD = re.compile(r"[0-9A-Za-z][0-9A-Za-z_'-]*")

STOPWORDS = frozenset(
    """a an and are as at be but by do does for from has have i if in into is it its me my no
    not of on or our so than that the their them then there these this to up us was we were
    what when which who will with you your all any can should would could just now new""".split()
)


def normalise(text: str) -> str:
    """Lowercase, non-alphanumerics to single spaces, trimmed."""
    return _NON_ALNUM.sub(" ", text.lower()).strip()


def norm_key(text: str, chars: int = 40) -> str:
    """The near-duplicate key of a rule: the first ``chars`` characters after normalising."""
    return normalise(text)[:chars].rstrip()


def estimate_tokens(text: str) -> int:
    """Tokens estimated as characters / 4, rounded up (the budget unit everywhere)."""
    return math.ceil(len(text) / 4)


_SUFFIXES = ("ational", "ization", "fulness", "iveness", "ations", "ingly", "ation", "ments",
             "ment", "ness", "ings", "ing", "edly", "ied", "ies", "ed", "ly", "es", "s")


@lru_cache(maxsize=65536)
def stem(word: str) -> str:
    """A light suffix-stripping stemmer: deploy/deploys/deployed/deploying share a stem."""
    w = word.lower()
    if len(w) <= 3:
        return w
    for suffix in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 3:
            w = w[: -len(suffix)]
            if suffix in ("ied", "ies"):
                w += "y"
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "lsz":
        w = w[:-1]  # running -> runn -> run
    if w.endswith("e") and len(w) > 4:
        w = w[:-1]  # release/released -> releas
    return w


def words(text: str) -> list[str]:
    """Lowercased words of a text, in order."""
    return [m.group(0).lower().strip("'-") for m in _WORD.finditer(text)]


def keywords(text: str) -> list[str]:
    """Stems of the meaningful words (stopwords dropped), in order, without repeats."""
    seen: dict[str, None] = {}
    for w in words(text):
        if w not in STOPWORDS and len(w) > 1:
            seen.setdefault(stem(w), None)
    return list(seen)


def similarity(a: str, b: str) -> float:
    """Similarity of two texts after normalising, 0..1 (difflib ratio)."""
    na, nb = normalise(a), normalise(b)
    if not na or not nb:
        return 1.0 if na == nb else 0.0
    return SequenceMatcher(None, na, nb, autojunk=False).ratio()


def ratio_at_least(na: str, nb: str, threshold: float) -> float:
    """difflib's ratio of two normalised texts when it reaches ``threshold``, else 0.0.

    The cheap bounds go first (the length bound, then quick_ratio), so scanning many
    candidates for a near-duplicate rarely runs the full comparison.
    """
    n, m = len(na), len(nb)
    if not n or not m or 2 * min(n, m) / (n + m) < threshold:
        return 0.0
    sm = SequenceMatcher(None, na, nb, autojunk=False)
    if sm.quick_ratio() < threshold:
        return 0.0
    score = sm.ratio()
    return score if score >= threshold else 0.0


# -- prose: what extractors read and how summaries are cut --------------------------------

MAX_SENTENCES = 40
"""Sentences read per text: long assistant essays rarely hold more memory further down."""
SUMMARY_CHARS = 200

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.S)
_TAG_BLOCK = re.compile(
    r"<(system-reminder|command-[a-z-]+|local-command-[a-z-]+|bash-[a-z-]+|task-notification)"
    r"\b[^>]*>.*?(?:</\1>|\Z)", re.S,
)
_PASTED_JSON = re.compile(r"^[ \t]*(?:\{\s*[\"']|\[\s*[{\"]).*$", re.M)
"""A line of pasted machine output: a JSON object or array (a log record, a transcript
line), whose quoted strings are a program's words, never the person's."""
_HARNESS = re.compile(r"^\s*\[(request interrupted|image|pasted text)[^\]]*\]\s*$", re.I | re.M)
_SENTENCE_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'`(*])|(?<=[!?])\s+(?=[a-z])|\n+")
"""After a full stop a sentence starts with a capital ("e.g. this" is one sentence); after a
question or exclamation mark people typing in lower case start one anyway ("should I use
February? which is cleaner")."""
_BULLET = re.compile(r"^\s*(?:[-*•>]+|\d{1,2}[.)]|#+)\s*")
_MARKUP = re.compile(r"\*\*|__|`")
_SPACE = re.compile(r"\s+")


def clean(text: str) -> str:
    """Visible prose only: no code blocks, pasted JSON lines, harness tags or
    interruption markers."""
    if "```" in text:
        text = _FENCE.sub("\n", text)
    if "{" in text or "[" in text:
        text = _PASTED_JSON.sub("", text)
    if "<" in text:
        text = _TAG_BLOCK.sub("\n", text)
    if "[" in text:
        text = _HARNESS.sub("", text)
    if "  \n" in text:
        text = _unscreened(text)
    return text


SCREEN_LINES = 3
"""Lines of one padded width that make a copied terminal screen (``_unscreened``)."""
_SCREEN_WIDTH = 40


def _unscreened(text: str) -> str:
    """The text without what was copied off a terminal screen: a run of lines all padded
    with spaces to the screen's width (a pasted diff, a log, another TUI's output), whose
    words are a program's, not the person's. Prose lines never share one width."""
    lines = text.split("\n")
    keep = [True] * len(lines)
    start = 0
    while start < len(lines):
        width = len(lines[start])
        end = start + 1
        while end < len(lines) and abs(len(lines[end]) - width) <= 1:
            end += 1
        run = lines[start:end]
        if (end - start >= SCREEN_LINES and width >= _SCREEN_WIDTH
                and sum(line.endswith(" ") for line in run) * 2 >= len(run)):
            # the copy's first and last lines, cut short where the selection began
            # and ended, are padded too
            first = start
            while first > 0 and lines[first - 1].endswith("  "):
                first -= 1
            while end < len(lines) and lines[end].endswith("  "):
                end += 1
            keep[first:end] = [False] * (end - first)
        start = end
    return "\n".join(line for line, k in zip(lines, keep, strict=True) if k)


def sentences(text: str) -> list[str]:
    """The sentences and list items of a text, markers dropped (the first ``MAX_SENTENCES``)."""
    out: list[str] = []
    for part in _SENTENCE_SPLIT.split(text):
        s = _BULLET.sub("", part).strip()
        if len(s) >= 2:
            out.append(s)
            if len(out) >= MAX_SENTENCES:
                break
    return out


def capital(text: str) -> str:
    """The text with its first letter in upper case, the rest as it is."""
    return text[:1].upper() + text[1:]


def shorten(text: str, limit: int = SUMMARY_CHARS) -> str:
    """One line, markup dropped, cut at a word boundary with an ellipsis."""
    text = _SPACE.sub(" ", _MARKUP.sub("", text)).strip()
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"


# -- domains -----------------------------------------------------------------------------

_DOMAINS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(r"\b(?:" + words + r")\b", re.I))
    for name, words in (
        ("deploy", r"deploy\w*|release\w*|rollout|rollback|staging|production|prod|ci|cd|"
                   r"pipeline|github actions"),
        ("testing", r"tests?|testing|pytest|unit tests?|coverage|flaky|spec|e2e"),
        ("database", r"db|database|postgres\w*|mysql|sqlite|migrations?|schema|sql|redis|"
                     r"queries|query|index(?:es)?"),
        ("git", r"git|branch(?:es)?|commits?|merge|rebase|pull request|pr|push"),
        ("infra", r"docker|kubernetes|k8s|server|nginx|terraform|aws|gcp|vm|ssh|dns|cron|"
                  r"systemd|container"),
        ("security", r"secrets?|passwords?|tokens?|auth\w*|credentials?|permissions?|ssl|tls"),
        ("dependencies", r"npm|pnpm|yarn|pip|poetry|uv|cargo|mix|dependenc\w+|packages?|"
                         r"versions?|upgrade"),
        ("frontend", r"ui|css|html|frontend|react|vue|tailwind|layout|styles?|components?"),
        ("docs", r"docs?|documentation|readme|changelog"),
        ("api", r"api|endpoints?|http|rest|graphql|webhooks?|requests?"),
    )
)


def domain_of(text: str) -> str:
    """A coarse domain from keywords; "general" when none applies."""
    for name, pattern in _DOMAINS:
        if pattern.search(text):
            return name
    return "general"


# -- control characters: stripped on the way in, made visible on the way out --------------

_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"             # CSI: colours, cursor moves, clearing the screen
    r"|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # OSC: window title, hyperlinks
    r"|\x1b[PX^_][^\x1b\x9c]*(?:\x1b\\|\x9c)?"  # DCS, SOS, PM, APC strings
    r"|\x1b[ -/]*[0-~]"                     # the other escapes (charset, keypad, reset)
    r"|\x9b[0-?]*[ -/]*[@-~]"               # 8-bit CSI
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"  # 8-bit strings
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 controls except tab and newline, DEL, and the C1 controls."""
_BREAKS = re.compile(r"\r\n?|[\u2028\u2029]")
"""Line breaks that are not ``\n``: CR, CRLF and the Unicode line and paragraph separators."""
_NEEDS_WORK = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def strip_controls(text: str) -> str:
    """Text safe to store: terminal escape sequences and control characters removed.

    Tab and newline stay; CR, CRLF and U+2028/U+2029 become a newline. Every way into
    memory (the stores, the markdown writers) calls this, so stored text can neither drive
    a terminal nor carry NUL bytes, and every reader agrees where its lines end.
    """
    if _NEEDS_WORK.search(text) is None:
        return text
    text = _BREAKS.sub("\n", text)
    return _CONTROL.sub("", _ESCAPE_SEQUENCE.sub("", text))


def _visible(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    if code < 0x20:
        return chr(0x2400 + code)  # the Unicode control pictures: ␀ … ␛ …
    return "\u2421" if code == 0x7F else f"<{code:02X}>"


def show_controls(text: str) -> str:
    """Text safe to print: each control character (not tab or newline) shown as a visible
    symbol, ``ESC`` as ``␛``, so what a file or an old row holds is seen, never obeyed."""
    if _CONTROL.search(text) is None:
        return text
    return _CONTROL.sub(_visible, text)


# -- search terms (the search room's region of this file) -------------------------------
#
# Two tokenisers on purpose. ``words``/``keywords``/``stem`` compare short texts in Python
# (rules, gates, flows, recall, consolidation): identifiers stay whole and the light
# ``stem`` folds deploy/deploys/deployed; the thresholds of those matchers were set with
# it. ``terms`` turns a search query into the words FTS5 indexed: the index tokenises
# with ``porter unicode61``, which splits at ``_``, ``-`` and ``.`` and knows every
# script, so a query split like ``words`` would look up tokens the index never has. FTS5
# applies its own Porter stemmer to those terms inside SQLite.

# Letters and digits of any script, joined by inner apostrophes ("don't", "o'neil").
_TERM = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)


def terms(query: str) -> list[str]:
    """The words of a query in order, lowercased and NFKC-normalised, without repeats."""
    text = unicodedata.normalize("NFKC", query.replace("\x00", " "))
    seen: dict[str, None] = {}
    for match in _TERM.finditer(text):
        seen.setdefault(match.group(0).replace("’", "'").lower(), None)
    return list(seen)
