"""Watermarks: small named values (how far a reader got, when a cycle last ran)."""

from __future__ import annotations

from memtui import timeutil
from memtui.db import Database


def get(db: Database, key: str) -> str | None:
    value = db.scalar("SELECT value FROM watermarks WHERE key = ?", (key,))
    return None if value is None else str(value)


def put(db: Database, key: str, value: str) -> None:
    """Set a watermark; call inside the transaction whose writes it covers."""
    db.execute(
        "INSERT INTO watermarks(key, value, updated_at) VALUES (?,?,?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        (key, value, timeutil.iso(timeutil.now())),
    )
