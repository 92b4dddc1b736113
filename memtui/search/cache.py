"""Values a searcher derives from its index, each kept until the index generation moves on.

Every sync that changes chunks bumps the index's generation (``SearchIndex.generation``);
a warm searcher reads it once per search and every cache below compares against that one
reading, so all of them see the same index within a search.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class PerGeneration(Generic[T]):
    """``compute()``'s value, recomputed when ``generation()`` differs from the one it was
    computed at."""

    def __init__(self, generation: Callable[[], int], compute: Callable[[], T]) -> None:
        self._generation = generation
        self._compute = compute
        self._held: tuple[int, T] | None = None

    def get(self) -> T:
        gen = self._generation()
        held = self._held
        if held is None or held[0] != gen:
            held = self._held = (gen, self._compute())
        return held[1]

    @property
    def generation(self) -> int | None:
        """The generation the held value belongs to; None before the first ``get``."""
        return None if self._held is None else self._held[0]
