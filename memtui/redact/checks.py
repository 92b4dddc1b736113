"""The value checks of redaction: is a candidate a secret, or a word, a number or a stand-in.

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
from collections import Counter


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
