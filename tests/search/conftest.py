"""Fixtures for search tests: a deterministic fake embedder, transcripts, the real model."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memtui.home import Home
from memtui.search.encoders.embedder import Progress
from memtui.stores import sources as source_store


class FakeEmbedder:
    """Bag of hashed word stems: similar words make similar vectors, instantly."""

    provider = "fake"
    model = "fake-hash-64"
    dims = 64
    max_tokens = 512

    def __init__(self) -> None:
        self.calls = 0
        self.texts = 0

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(self.dims, dtype=np.float32)
        for word in re.findall(r"\w+", text.lower()):
            stem = word[:5]
            h = int.from_bytes(hashlib.blake2b(stem.encode(), digest_size=4).digest(), "little")
            v[h % self.dims] += 1.0 if (h >> 8) & 1 else -1.0
        n = float(np.linalg.norm(v))
        if n == 0:
            v[0] = 1.0
            return v
        return v / n

    def embed_documents(self, texts: Sequence[str], *,
                        progress: Progress | None = None) -> np.ndarray:
        self.calls += 1
        self.texts += len(texts)
        if progress:
            progress(len(texts), len(texts))
        if not texts:
            return np.zeros((0, self.dims), dtype=np.float32)
        return np.stack([self._vec(t) for t in texts])

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)


@pytest.fixture
def fake() -> FakeEmbedder:
    return FakeEmbedder()


def write_transcript(path: Path, messages: Sequence[dict[str, Any]]) -> Path:
    """Generic JSONL per shared/eval/README.md."""
    with path.open("w", encoding="utf-8") as out:
        for m in messages:
            row = {"type": "message", "session": "s1", "role": "user", **m}
            out.write(json.dumps(row) + "\n")
    return path


def add_transcript(home: Home, path: Path, agent: str = "main") -> None:
    db = home.open_db()
    try:
        source_store.add(db, str(path), agent=agent, fmt="generic", actor="test")
    finally:
        db.close()


CONVERSATION = [
    {"id": "m1", "name": "Ana", "ts": "2024-05-01T10:00:00+00:00",
     "content": "I adopted a grey kitten called Pixel from the shelter yesterday."},
    {"id": "m2", "name": "Ben", "role": "assistant", "ts": "2024-05-01T10:01:00+00:00",
     "content": "Congratulations! How is Pixel settling in at home?"},
    {"id": "m3", "name": "Ana", "ts": "2024-05-01T10:02:00+00:00",
     "content": "She hides under the sofa but loves the feather toy."},
    {"id": "m4", "name": "Ben", "role": "assistant", "ts": "2024-05-02T09:00:00+00:00",
     "session": "s2", "content": "The database migration to PostgreSQL finished at noon."},
    {"id": "m5", "name": "Ana", "ts": "2024-05-02T09:05:00+00:00", "session": "s2",
     "content": "Great, then we can retire the old MySQL replica next week."},
]


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    return write_transcript(tmp_path / "chat.jsonl", CONVERSATION)


@pytest.fixture(scope="session")
def real_embedder() -> Iterator[Any]:
    """The real all-MiniLM-L6-v2, loaded once for the few tests that need it."""
    from memtui.search.encoders.embedder import EmbeddingUnavailable, LocalEmbedder

    try:
        embedder = LocalEmbedder()
    except EmbeddingUnavailable as exc:  # pragma: no cover - the package is a dependency
        pytest.skip(f"model unavailable: {exc}")
    yield embedder
