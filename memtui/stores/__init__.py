"""The structured stores of memory.db: dataclasses in, dataclasses out, one write path.

Every function that changes memory.db runs in one ``db.write()`` transaction and records
what it did in the audit log with the actor that asked for it.
"""

from __future__ import annotations

ACTORS = ("cli", "tui", "mcp", "extractor", "maintenance", "gate", "demo", "test")
"""Who may change memory: the audit log names one of these for every write."""
