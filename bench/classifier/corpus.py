"""The labelled extraction corpus: hand-written conversations, templated turns and SGD turns.

Every example is a turn in context (the preceding turn and the turn) with one label.
Splits are by conversation, fixed by a hash of the conversation id, so no conversation
is in two splits:

- ``heldout``: a third of the hand-written conversations. Never read while training,
  tuning thresholds or calibrating; ``train_classifier.py`` refuses examples of this
  split and a test checks the shipped weights' manifest lists no held-out id.
- ``dev`` and ``train``: the other two thirds. Training reads both; the temperature and
  the combination thresholds are fitted on out-of-fold readings of them (a head that
  never saw the conversation) and on SGD's dev turns, which are never trained on.
- Every templated turn and SGD's train turns are ``train``; SGD's test turns are
  ``sgd-test``, a cross-domain check only.

SGD turns (CC BY-SA 4.0, see ``bench/data/extract-corpus/sgd/LICENSE``) are mapped:
rejected → rejected, except a "no" with new details after a confirmation → correction;
accepted after an offer of an action or a confirmation → decision; the rest → none.
"""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memtui.extract.asked import OpenOffer

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "bench/data/extract-corpus"
LABELS = ("rejected", "decision", "preference", "task", "fact", "discovery", "learning",
          "correction", "none")
CODES = dict(zip("RDPTFSLCN", LABELS, strict=True))
DOMAINS = ("ops", "coding", "writing", "personal", "data", "support")


@dataclass(frozen=True)
class Example:
    id: str
    conv: str
    domain: str
    source: str
    """hand, generated or sgd."""
    prev: str
    text: str
    label: str
    split: str = "train"
    offer: str = ""
    """The agent's earlier offer when the agent's last words ask nothing and the person
    has only asked about it since (``memtui.extract.asked.OpenOffer``)."""

    @property
    def answering(self) -> str:
        """What the turn answers, as the extractor reads it (``PreparedTurn.answering``):
        the open offer, else the preceding turn."""
        return self.offer or self.prev


def hand_split(conv: str) -> str:
    """The split of a hand-written conversation: fixed by its id, a third each."""
    return ("heldout", "dev", "train")[zlib.crc32(conv.encode()) % 3]


def read_hand(path: Path) -> Iterator[Example]:
    """Examples of one hand-written file (format in ops.txt's header)."""
    domain = path.stem.split("-")[0]
    conv, prev, n = "", "", 0
    agent: str | None = None
    offer = OpenOffer()
    for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("== "):
            conv, prev, n = line[3:].strip(), "", 0
            agent, offer = None, OpenOffer()
            continue
        if line.startswith("> "):
            prev, agent = line[2:].strip(), f"hand/{conv}/line{lineno}"
            offer.agent(prev, agent)
            continue
        code, _, text = line.partition(" ")
        if code not in CODES or not text or not conv:
            raise ValueError(f"{path}:{lineno}: expected '> text', '== id' or 'X text'")
        yield Example(id=f"hand/{conv}/{n}", conv=conv, domain=domain, source="hand",
                      prev=prev, text=text, label=CODES[code], split=hand_split(conv),
                      offer=offer.behind(agent)[0])
        offer.person(text)
        prev, n = text, n + 1


def sgd_label(row: dict[str, object]) -> str:
    label, acts = str(row["label"]), set(row["acts"])  # type: ignore[call-overload]
    prev_acts = set(row["prev_acts"])  # type: ignore[call-overload]
    if label == "rejected":
        if "NEGATE" in acts and "INFORM" in acts and "CONFIRM" in prev_acts:
            return "correction"
        return "rejected"
    if label == "accepted" and prev_acts & {"OFFER_INTENT", "CONFIRM"}:
        return "decision"
    return "none"


def read_sgd() -> Iterator[Example]:
    path = DATA / "sgd/pairs-subset.jsonl"
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        split = {"train": "train", "dev": "dev"}.get(row["split"], "sgd-test")
        yield Example(id=f"sgd/{row['id']}", conv=f"sgd/{row['id'].rsplit('/', 1)[0]}",
                      domain=f"sgd:{row['service'].split('_')[0].lower()}", source="sgd",
                      prev=row["prev"], text=row["text"], label=sgd_label(row), split=split)


def load(*, generated: bool = True, sgd: bool = True) -> list[Example]:
    """The whole corpus, every example carrying its split."""
    from bench.classifier.generate import generate

    out = [ex for path in sorted((DATA / "hand").glob("*.txt")) for ex in read_hand(path)]
    if generated:
        out += generate()
    if sgd:
        out += list(read_sgd())
    return out
