"""Secret redaction: replace credentials in transcript text with ``[REDACTED:<kind>]``.

Everything the stenographer reads passes through :func:`redact` before it is stored or sent
to a model, so this runs on every transcript turn and must be fast on ordinary prose.

The package, in the order a text goes through it:

- :mod:`~memtui.redact.patterns`: what a secret looks like -- :data:`PATTERNS` (one per
  kind, with its anchors and value check) and :data:`REDACTION_VERSION`;
- :mod:`~memtui.redact.checks`: the value checks (entropy, placeholders, "looks like a
  secret");
- :mod:`~memtui.redact.scanner`: where the secrets are -- anchor finding, matching,
  merging overlaps and echoes into spans;
- :mod:`~memtui.redact.api`: :func:`redact`, :func:`scrub` and friends, which replace the
  spans with placeholders until nothing new is found.

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
"""

from __future__ import annotations

from memtui.redact.api import (
    Finding,
    Redacted,
    contains_secret,
    redact,
    scrub,
    scrub_value,
)
from memtui.redact.checks import (
    is_placeholder_value,
    looks_generated,
    looks_like_secret,
    shannon_entropy,
)
from memtui.redact.patterns import (
    KINDS,
    PATTERNS,
    PLACEHOLDER,
    PLACEHOLDER_RE,
    REDACTION_VERSION,
    SecretPattern,
)
from memtui.redact.scanner import MAX_ECHOES, MIN_ECHO_LENGTH

__all__ = [
    "KINDS",
    "MAX_ECHOES",
    "MIN_ECHO_LENGTH",
    "PATTERNS",
    "PLACEHOLDER",
    "PLACEHOLDER_RE",
    "REDACTION_VERSION",
    "Finding",
    "Redacted",
    "SecretPattern",
    "contains_secret",
    "is_placeholder_value",
    "looks_generated",
    "looks_like_secret",
    "redact",
    "scrub",
    "scrub_value",
    "shannon_entropy",
]
