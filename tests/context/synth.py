"""Synthetic OpenClaw v3 transcripts of a chosen size, for the context tests and bench."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

WORDS = ("deploy migration index postgres nginx backup restic slot replication latency "
         "funnel export newsletter draft review schedule timeout rollback disk journal "
         "certificate alert region probe worker queue ingest dashboard").split()


class Writer:
    """Builds entries with ids, parent links, timestamps and running usage numbers."""

    def __init__(self, seed: int = 7, model: str = "claude-sonnet-4-5",
                 start: datetime | None = None) -> None:
        self.rng = random.Random(seed)
        self.model = model
        self.n = 0
        self.parent: str | None = None
        self.clock = start or datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
        self.chars = 40_000  # a system prompt of ~10k tokens

    def _id(self) -> str:
        self.n += 1
        return f"{self.n:08x}"

    def _entry(self, kind: str, **body: Any) -> dict[str, Any]:
        self.clock += timedelta(seconds=7)
        entry = {"type": kind, "id": self._id(), "parentId": self.parent,
                 "timestamp": self.clock.isoformat().replace("+00:00", "Z"), **body}
        self.parent = entry["id"]
        return entry

    def header(self) -> list[dict[str, Any]]:
        return [{"type": "session", "version": 3, "id": "synthetic-session",
                 "timestamp": self.clock.isoformat(), "cwd": "/tmp/ws"},
                self._entry("model_change", provider="anthropic", modelId=self.model)]

    def text(self, chars: int) -> str:
        out: list[str] = []
        size = 0
        while size < chars:
            word = self.rng.choice(WORDS)
            out.append(word)
            size += len(word) + 1
        return " ".join(out)[:chars]

    def user(self, text: str) -> dict[str, Any]:
        self.chars += len(text)
        return self._entry("message", message={"role": "user", "content": [
            {"type": "text", "text": text}]})

    def assistant(self, text: str, call: tuple[str, str, dict[str, Any]] | None = None,
                  usage: bool = True) -> dict[str, Any]:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        if call:
            content.append({"type": "toolCall", "id": call[0], "name": call[1],
                            "arguments": call[2]})
        msg: dict[str, Any] = {"role": "assistant", "content": content,
                               "model": self.model, "provider": "anthropic"}
        if usage:
            prompt = self.chars // 4
            msg["usage"] = {"input": 12, "output": len(text) // 4 + 20,
                            "cacheRead": max(0, prompt - 300), "cacheWrite": 288}
        self.chars += len(text) + (len(json.dumps(call[2])) if call else 0)
        return self._entry("message", message=msg)

    def result(self, call_id: str, name: str, text: str) -> dict[str, Any]:
        self.chars += len(text)
        return self._entry("message", message={
            "role": "toolResult", "toolCallId": call_id, "toolName": name,
            "content": [{"type": "text", "text": text}], "isError": False})

    def exchange(self, big: bool = False) -> list[dict[str, Any]]:
        """A user request, a tool call and its result, and the assistant's answer."""
        call_id = f"toolu_{self.n:06d}"
        name = self.rng.choice(["exec", "read", "web_fetch"])
        size = self.rng.randint(4_500, 12_000) if big else self.rng.randint(100, 1_200)
        return [self.user(self.text(self.rng.randint(60, 300))),
                self.assistant("Checking.", (call_id, name, {"command": self.text(40)})),
                self.result(call_id, name, self.text(size)),
                self.assistant(self.text(self.rng.randint(100, 600)))]


def entries(tokens: int, seed: int = 7) -> Iterator[dict[str, Any]]:
    """Entries of a session whose window holds about ``tokens`` tokens."""
    w = Writer(seed)
    yield from w.header()
    i = 0
    while w.chars // 4 < tokens:
        yield from w.exchange(big=i % 6 == 0)
        i += 1


def write(path: Path, tokens: int, seed: int = 7) -> Path:
    with path.open("w", encoding="utf-8") as fh:
        for entry in entries(tokens, seed):
            fh.write(json.dumps(entry) + "\n")
    return path
