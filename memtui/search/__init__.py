"""Hybrid search over an agent's memory: chunking, embeddings, the derived index, ranking.

Entry points live in ``memtui.search.engine`` (index, search, batch search, status) and
``memtui.search.recall`` (layered recall); importing this package loads no model.
"""

from __future__ import annotations
