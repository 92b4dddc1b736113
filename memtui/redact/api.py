"""The public face of redaction: :func:`redact`, :func:`scrub` and their results."""

from __future__ import annotations

from bisect import bisect_right
from typing import Any, NamedTuple

from memtui.redact.patterns import PATTERNS, PLACEHOLDER
from memtui.redact.scanner import Span, echoes_of, merge, scan
from memtui.text import strip_controls

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


def _apply(text: str, spans: list[Span]) -> tuple[str, list[tuple[int, int]]]:
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
    span: Span, pieces: list[tuple[int, int]], spans: list[Span], text_len: int
) -> Span | None:
    i = bisect_right([p[0] for p in pieces], span.start) - 1
    out_start, orig_start = pieces[i]
    # A kept piece ends where the next replaced span starts (or at the end of the text).
    orig_end_of_piece = spans[i].start if i < len(spans) else text_len
    start = orig_start + span.start - out_start
    end = orig_start + span.end - out_start
    if end > orig_end_of_piece:  # pragma: no cover - placeholders are never overlapped
        return None
    return Span(start, end, span.rank)


def redact(text: str) -> Redacted:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]``.

    Findings give each secret's kind and span in ``text``. Never raises on any string;
    idempotent; existing placeholders are left alone.
    """
    spans = scan(text, {})
    if not spans:
        return Redacted(text, [])
    out, pieces = _apply(text, spans)
    for _ in range(_MAX_PASSES):
        extra = scan(out, echoes_of(text, spans, {}))
        if not extra:
            break
        mapped = [_to_original(s, pieces, spans, len(text)) for s in extra]
        spans = merge(spans + [s for s in mapped if s is not None])
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
    return bool(scan(text, {}))
