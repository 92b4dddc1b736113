"""`memtui policy test`: the stenographer's pipeline turn by turn, writing nothing.

Each turn of a transcript goes through the same preparation (redaction, the capture
policy) and enforcement as in a real run, and the report says what would be captured
where, what was refused and why, and what the policy switched off.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memtui.extract.candidates import Extractor
from memtui.extract.capture import Policy
from memtui.extract.enforce import enforce
from memtui.extract.prepare import FileContext, Preparer
from memtui.text import shorten
from memtui.transcripts import read_transcript


@dataclass
class TurnReport:
    """What the stenographer would do with one turn."""

    id: str
    role: str
    at: str | None
    text: str
    refused: str | None = None
    """The policy's reason when it refused the text."""
    redacted: list[str] = field(default_factory=list)
    captures: list[str] = field(default_factory=list)
    """The policy's captures: "layer/kind: reason"."""
    state: list[str] = field(default_factory=list)
    episodes: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    """Candidates the extractor proposed and the policy switched off."""
    skipped: str | None = None


def explain(path: str, policy: Policy | None, extractor: Extractor, *, fmt: str = "auto"
            ) -> list[TurnReport]:
    """Each turn of a transcript, with what would be captured where and what was refused."""
    result = read_transcript(path, fmt=fmt, final=True)
    ctx = FileContext()
    preparer = Preparer(policy)
    out: list[TurnReport] = []
    for turn in result.turns:
        prep = preparer.prepare(turn, ctx)
        tr = TurnReport(turn.id, turn.role,
                        turn.timestamp.strftime("%Y-%m-%dT%H:%M:%SZ") if turn.timestamp else None,
                        shorten(turn.text, 160) if turn.text else "",
                        refused=prep.refusal, redacted=sorted(prep.redacted))
        pt = prep.turn
        if pt is None:
            tr.skipped = tr.refused or prep.skipped or "skipped"
            out.append(tr)
            continue
        tr.captures = [f"{c.layer}/{c.kind}: {c.reason}" for c in pt.captures]
        raw = extractor.extract([pt])
        kept = enforce(policy, raw, [pt]) if policy is not None else raw
        tr.state = [f"state/{s.category} [{s.domain}]: {s.summary}"
                    + (" (waits for review)" if s.status == "proposed" else "")
                    for s in kept.state]
        tr.episodes = [f"episode/{e.kind}: {e.summary}" for e in kept.episodes]
        tr.facts = [f"fact: {f.key} = {f.value}" for f in kept.facts]
        kept_keys = {(s.category, s.summary) for s in kept.state}
        tr.dropped = [f"state/{s.category}: {s.summary}" for s in raw.state
                      if (s.category, s.summary) not in kept_keys]
        tr.dropped += [f"episode/{e.kind}: {e.summary}" for e in raw.episodes
                       if e not in kept.episodes]
        if raw.facts and not kept.facts:
            tr.dropped += [f"fact: {f.key} = {f.value}" for f in raw.facts]
        out.append(tr)
    return out
