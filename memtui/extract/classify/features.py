"""What the classifier reads: a cheap filter, the turn's context, and the feature vector.

The feature vector of a turn is ``[t, c, t * c, has_context, words, chars, asked]``:

- ``t`` the embedding of the turn, ``c`` that of its context (the proposal or question
  the turn answers: the last asking sentence of the open offer, else of the preceding
  turn, else its last two sentences; ``PreparedTurn.answering``), both L2-normalised
  MiniLM vectors. The product lets a linear head see
  agreement between the two ("no" after "should I ...?" is not "no" after "Done.").
- ``words``: the turn's words, word pairs and opening words, ``chars``: its character
  3- and 4-grams, ``asked``: the context's words, each hashed into buckets
  (``Buckets``) and L2-normalised. A sentence embedding is mostly about the topic, so
  "don't restart the pod" and "restart the pod" sit close together; the words carry the
  stance ("hold off", "rather not", "go ahead") whatever the topic, the character grams
  survive typos and word forms ("dont", "nope", "nah"), and the context's words say
  what kind of turn is being answered (an offer, a report, a question).

Measured out of fold on the corpus (``bench/train_classifier.py``): the words lifted the
head's rejection recall from 0.64 to 0.87; the character grams and the context's words
then its macro F1 over the nine labels from 0.72 to 0.78.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memtui.extract.asked import ASKING
from memtui.text import clean, sentences, shorten

if TYPE_CHECKING:
    import numpy as np

MAX_WORDS = 80
"""Longer turns are instructions or pasted text, not a reply to a proposal: not embedded."""
CONTEXT_CHARS = 300
PROPOSING = re.compile(
    ASKING.pattern + r"|\b(?:i'm (?:going to|about to|thinking of|planning to)|i am going to|"
    r"i'll|i will|i'd|i would|i want to|let me|we could|could|option|plan|propose|suggest|"
    r"recommend|draft(?:ed)?|here's|here is)\b"
    r"|\?\s*[(\[][^()\[\]\n]{1,16}[)\]]\s*$", re.I)
"""An agent's turn that offers something a reply can turn down: a question (one that
ends in a prompt's answer key, "(y/n)" or "[y/N]", too), an intent ("I'm going to …",
"I'd …", "let me …"), a suggestion, options or a draft."""
_WORDS = re.compile(r"[^\W\d_]{2,}")
_TOKENS = re.compile(r"[\w']+|[^\w\s]")


@dataclass(frozen=True)
class Buckets:
    """How many hashed buckets each block of words gets (0: the block is absent)."""

    words: int = 2048
    chars: int = 2048
    asked: int = 1024

    @property
    def total(self) -> int:
        return self.words + self.chars + self.asked


BUCKETS = Buckets()

Embed = Callable[[Sequence[str]], "np.ndarray"]
"""Texts in, one L2-normalised row each out."""


_COMMAND = re.compile(r"^/[a-z][\w:-]*(?:\s+\S+)?\s*$", re.I)
"""A harness's slash command typed as a turn ("/clear", "/model sonnet"): not a reply."""


def worth_embedding(text: str) -> bool:
    """Cheap test: a short piece of prose that could reject or decide something."""
    words = text.split()
    return (0 < len(words) <= MAX_WORDS and "```" not in text
            and bool(_WORDS.search(text) or len(text) <= 4) and not _COMMAND.match(text))


def context_of(previous: str) -> str:
    """The part of the preceding turn a reply answers (empty when there is none)."""
    if not previous:
        return ""
    parts = sentences(clean(previous))
    for s in reversed(parts):
        if ASKING.search(s):
            return shorten(s, CONTEXT_CHARS)
    return shorten(" ".join(parts[-2:]), CONTEXT_CHARS)


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKENS.findall(text.replace("’", "'"))]


def lexical(text: str, dims: int = BUCKETS.words, prefix: str = "t") -> list[int]:
    """The buckets of the text's words, word pairs and opening words (hashing is crc32,
    the same in every process and on every machine)."""
    toks = _tokens(text)
    grams = [*toks, *(f"{a} {b}" for a, b in zip(toks, toks[1:], strict=False))]
    grams += [f"^{' '.join(toks[:n])}" for n in (1, 2) if len(toks) >= n]
    return sorted({zlib.crc32(f"{prefix}:{g}".encode()) % dims for g in grams})


def characters(text: str, dims: int) -> list[int]:
    """The buckets of the text's character 3- and 4-grams (lower case, spaces folded)."""
    folded = " " + " ".join(_tokens(text)) + " "
    grams = {folded[i:i + n] for n in (3, 4) for i in range(len(folded) - n + 1)}
    return sorted({zlib.crc32(f"c:{g}".encode()) % dims for g in grams})


def proposes(previous: str) -> bool:
    """Whether the preceding turn offers anything to turn down (``PROPOSING``)."""
    return bool(previous) and PROPOSING.search(clean(previous)) is not None


def features(texts: Sequence[str], contexts: Sequence[str], embed: Embed,
             buckets: Buckets = BUCKETS) -> np.ndarray:
    """One feature row per (turn, context) pair; each distinct string embedded once."""
    import numpy as np

    distinct = sorted({*texts, *(c for c in contexts if c)})
    index = {s: i for i, s in enumerate(distinct)}
    vectors = np.asarray(embed(distinct), dtype=np.float32) if distinct else np.zeros((0, 1))
    dims = vectors.shape[1] if len(distinct) else 384
    t = vectors[[index[s] for s in texts]] if texts else np.zeros((0, dims), np.float32)
    c = np.zeros_like(t)
    has = np.zeros((len(texts), 1), dtype=np.float32)
    for row, ctx in enumerate(contexts):
        if ctx:
            c[row] = vectors[index[ctx]]
            has[row] = 1.0
    blocks = [(buckets.words, texts, lambda x, n: lexical(x, n)),
              (buckets.chars, texts, characters),
              (buckets.asked, contexts, lambda x, n: lexical(x, n, "p"))]
    hashed = []
    for n, source, buckets_of in blocks:
        if not n:
            continue
        block = np.zeros((len(texts), n), dtype=np.float32)
        for row, text in enumerate(source):
            on = buckets_of(text, n) if text else []
            if on:  # L2-normalised, like the embeddings beside it
                block[row, on] = 1.0 / float(np.sqrt(len(on)))
        hashed.append(block)
    return np.hstack([t, c, t * c, has, *hashed]).astype(np.float32)


def model_embed(model: str = "all-MiniLM-L6-v2") -> Embed:
    """Embedding with the search embedder memtui already shares in this process.

    Short texts go through its fast query encoder (ONNX Runtime or numpy, no torch), the
    same vectors at training and at extraction time, many at a time (``embed_queries``:
    texts of one length share a run) where the embedder offers it.
    """
    from memtui.search.encoders.embedder import get_embedder

    embedder = get_embedder("local", model)
    many = getattr(embedder, "embed_queries", None)

    def embed(texts: Sequence[str]) -> np.ndarray:
        import numpy as np

        if not texts:
            return np.zeros((0, embedder.dims), dtype=np.float32)
        if many is not None:
            return np.asarray(many(texts), dtype=np.float32)
        return np.vstack([embedder.embed_query(t) for t in texts])

    return embed
