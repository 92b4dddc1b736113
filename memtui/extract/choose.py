"""What a run works with: the sources it reads, the extractor and the capture policy."""

from __future__ import annotations

import os
from pathlib import Path

from memtui.db import Database
from memtui.errors import MemtuiError, NotFound
from memtui.extract.candidates import Extractor
from memtui.extract.capture import Policy
from memtui.extract.local import LocalExtractor
from memtui.home import Home
from memtui.stores.sources import Source, list_sources


def make_extractor(home: Home, name: str) -> Extractor:
    """The extractor called ``name`` ("local" or "llm")."""
    if name == "local":
        if home.settings.extract.classifier:
            from memtui.extract.classify.head import Classifier

            return LocalExtractor(classifier=Classifier(),
                                  review_below=home.settings.maintenance.promote_min_confidence)
        return LocalExtractor()
    if name == "llm":
        from memtui.extract.llm import LLMExtractor

        return LLMExtractor.from_settings(home.settings.extract)
    raise MemtuiError(f"unknown extractor {name!r}; expected local or llm")


def choose_extractor(home: Home, requested: str | None) -> tuple[str, str | None]:
    """The extractor to use and a warning: llm needs ANTHROPIC_API_KEY.

    Asked for on the command line without a key is an error; configured in memtui.toml
    without a key falls back to the local extractor with a warning.
    """
    name = requested or home.settings.extract.extractor
    if name == "llm" and not os.environ.get("ANTHROPIC_API_KEY"):
        if requested:
            raise MemtuiError("--extractor llm needs ANTHROPIC_API_KEY in the environment")
        return "local", ("[extract] extractor is llm but ANTHROPIC_API_KEY is not set; "
                         "using the local extractor")
    return name, None


def load_capture_policy(home: Home) -> Policy:
    """The home's capture policy: policy.yaml, else the default one."""
    from memtui.extract import policy

    if home.policy_path.exists():
        return policy.load_policy(home.policy_path)
    return policy.default_policy()


def select_sources(db: Database, agent: str | None, source: str | None) -> list[Source]:
    """The agent's sources (all agents' when None), or the one ``source`` names: an id, a
    pattern, or a file one of the sources names."""
    found = list_sources(db, agent)
    if source is None:
        return found
    if source.isdigit():
        chosen = [s for s in found if s.id == int(source)]
    else:
        absolute = os.path.abspath(os.path.expanduser(source))
        chosen = [s for s in found if s.pattern == absolute]
        if not chosen:
            chosen = [s for s in found if Path(absolute) in s.files()]
    if not chosen:
        raise NotFound(f"no registered source matches {source!r} "
                       f"(add it: memtui sources add {source})")
    return chosen
