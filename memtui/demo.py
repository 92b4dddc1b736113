"""The bundled sample memory home: where it lives and how `memtui demo` builds a home from it.

The sample is text (JSONL, YAML, markdown) under ``sample-data/home``; the demo copies it into
a fresh folder and loads it through the stores, so the packaged copy is never changed. Its
history is dated 2026-11-11..24; dates are shifted so that the history ends yesterday, which
keeps decay and archiving behaving as they would on a live box.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

from memtui import timeutil
from memtui.errors import MemtuiError, NotFound
from memtui.home import Home
from memtui.stores import flows, rules, state

ENV_SAMPLE = "MEMTUI_SAMPLE_DATA"
ANCHOR = date(2026, 11, 25)
"""The day after the sample history ends; the demo moves it to today."""
ACTOR = "demo"


def sample_root() -> Path:
    """The sample home folder: $MEMTUI_SAMPLE_DATA, else sample-data/home beside the package."""
    env = os.environ.get(ENV_SAMPLE)
    root = Path(env) if env else Path(__file__).resolve().parents[1] / "sample-data" / "home"
    if not (root / "seed").is_dir():
        raise NotFound(f"no sample data at {root} (set {ENV_SAMPLE} to the sample-data/home "
                       f"folder of a memtui checkout)")
    return root


def _shift(value: str | None, days: int) -> str | None:
    if not value:
        return value
    if len(value) == 10:
        return (date.fromisoformat(value) + timedelta(days=days)).isoformat()
    return timeutil.iso(timeutil.parse(value) + timedelta(days=days))


def _jsonl(path: Path) -> list[dict[str, Any]]:
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise MemtuiError(f"{path}:{n}: invalid JSON: {exc.msg}") from exc
    return rows


def load_seed(home: Home, seed: Path, *, days: int = 0) -> dict[str, int]:
    """Load state, rules and flows from a seed folder into the home's memory.db."""
    import yaml

    db = home.open_db()
    try:
        with db.write():
            entries = _jsonl(seed / "state.jsonl")
            news = [state.NewState(
                agent=e["agent"], category=e["category"], summary=e["summary"],
                domain=e.get("domain") or "general", detail=e.get("detail") or "",
                status=e.get("status", "active"),
                session_date=_shift(e.get("session_date"), days),
                completed_at=_shift(e.get("completed_at"), days),
                source_file=e.get("source_file"), source_entry=e.get("source_entry"),
                confidence=float(e.get("confidence", 1.0)),
                created_at=_shift(e["created_at"], days)) for e in entries]
            ids = dict(zip((e["ref"] for e in entries),
                           state.add_many(db, news, actor=ACTOR), strict=True))
            chains = 0
            for e in entries:
                if e.get("supersedes"):
                    state.link_superseded(db, ids[e["supersedes"]], ids[e["ref"]], actor=ACTOR)
                    chains += 1
            rule_rows = _jsonl(seed / "rules.jsonl")
            for r in rule_rows:
                rules.add(db, r["rule"], actor=ACTOR, score=float(r["score"]),
                          domain=r.get("domain") or "general", agent=r.get("agent"),
                          source=r.get("source", "manual"), violations=int(r.get("violations", 0)),
                          created_at=_shift(r.get("created_at"), days),
                          last_reinforced=_shift(r.get("last_reinforced"), days))
            flow_rows = yaml.safe_load((seed / "flows.yaml").read_text(encoding="utf-8")) or []
            runs = 0
            for f in flow_rows:
                flows.add(db, f["name"], actor=ACTOR, steps=f["steps"],
                          trigger_phrases=f.get("trigger_phrases", []),
                          domain=f.get("domain", "general"), agent=f.get("agent"),
                          needs_approval=bool(f.get("needs_approval")),
                          status=f.get("status", "active"),
                          created_at=_shift(f.get("created_at"), days))
                for run in sorted(f.get("runs", []), key=lambda r: str(r["at"])):
                    flows.record(db, f["name"], run["outcome"], actor=ACTOR,
                                 agent=run.get("agent"), note=run.get("note", ""),
                                 at=_shift(str(run["at"]), days))
                    runs += 1
    finally:
        db.close()
    return {"state entries": len(entries), "supersessions": chains, "rules": len(rule_rows),
            "flows": len(flow_rows), "flow runs": runs}


def _copy_workspaces(src: Path, home: Home, days: int) -> None:
    for agent_dir in sorted((src / "agents").iterdir()):
        if not agent_dir.is_dir():
            continue
        target = home.workspace(agent_dir.name)
        for path in sorted(agent_dir.rglob("*")):
            if not path.is_file():
                continue
            rel = path.relative_to(agent_dir)
            if rel.parent.name == "memory" and len(path.stem) == 10:
                rel = rel.with_name(f"{_shift(path.stem, days)}{path.suffix}")
            (target / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target / rel)


def build_demo_home(root: Path, *, today: date | None = None) -> tuple[Home, dict[str, int]]:
    """A fresh memory home in ``root`` (which must be empty or absent) from the sample data."""
    src = sample_root()
    if root.exists() and any(root.iterdir()):
        raise MemtuiError(f"{root} is not empty; the demo builds a fresh home")
    days = ((today or datetime.now().date()) - ANCHOR).days
    root.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src / "memtui.toml", root / "memtui.toml")
    if (src / "tools").is_dir():
        shutil.copytree(src / "tools", root / "tools")
    home = Home(root)
    home.init()
    _copy_workspaces(src, home, days)
    summary = load_seed(home, src / "seed", days=days)
    transcripts = src.parent / "transcripts"
    if transcripts.is_dir():
        shutil.copytree(transcripts, root / "transcripts")
        summary["transcript sources"] = register_sample_sources(home)
    return home, summary


SAMPLE_SOURCES = {
    "coordinator": ["openclaw/coordinator/*.jsonl"],
    "content": ["openclaw/content/*.jsonl"],
    "ops": ["openclaw/ops/*.jsonl", "claude-code/*/*.jsonl"],
}
"""Which copied sample transcripts belong to which agent."""


def register_sample_sources(home: Home) -> int:
    """Register the demo home's copied transcripts as sources (not extracted yet)."""
    from memtui.stores import sources

    db = home.open_db()
    count = 0
    try:
        for agent, patterns in SAMPLE_SOURCES.items():
            for pattern in patterns:
                sources.add(db, str(home.root / "transcripts" / pattern), agent=agent,
                            actor=ACTOR)
                count += 1
    finally:
        db.close()
    return count
