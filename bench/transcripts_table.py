"""The table of the shared real transcripts in docs/stenographer.md: what is read, what is kept.

Run: .venv/bin/python bench/transcripts_table.py [DIR ...]

For every ``*.jsonl`` under the folders given (default: the vendored copies in
tests/data: claude-code, claude-code-viewer, pi-mono), one markdown row: its lines, its
turns by author (person / agent / sub-agent / machine), what the reader reported
(problems, unknown types, replays and errors), and what the local extractor made of it
in a fresh home (state entries by category, episodes by kind, facts).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memtui.extract import stenographer as steno  # noqa: E402
from memtui.home import Home  # noqa: E402
from memtui.stores import sources  # noqa: E402
from memtui.transcripts import AUTHORS, read_transcript  # noqa: E402

DEFAULT = [ROOT / "tests" / "data" / d for d in ("claude-code", "claude-code-viewer", "pi-mono")]
SHORT = {"rejected": "rej", "decision": "dec", "discovery": "disc", "learning": "learn",
         "agent_state": "status", "context": "ctx", "task": "task"}


def _counts(counter: Counter[str], short: dict[str, str] | None = None) -> str:
    parts = [f"{n} {short.get(k, k) if short else k}" for k, n in counter.most_common()]
    return ", ".join(parts) or "–"


def reader_row(path: Path) -> tuple[int, str, str]:
    """Lines, turns by author, and what the reader reported, for one file."""
    result = read_transcript(path, final=True)
    by = Counter(str(t.author) for t in result.turns)
    authors = " / ".join(str(by.get(a, 0)) for a in AUTHORS)
    notes: list[str] = []
    if result.problems:
        notes.append(f"{len(result.problems)} problems")
    if result.unknown_types:
        notes.append("unknown " + _counts(Counter(result.unknown_types)))
    replayed = result.skipped.get("message (replayed)", 0)
    if replayed:
        notes.append(f"{replayed} replayed")
    errors = sum(1 for t in result.turns if t.error)
    failed = sum(r.is_error for t in result.turns for r in t.tool_results)
    if errors:
        notes.append(f"{errors} model-call error{'s' * (errors > 1)}")
    if failed:
        notes.append(f"{failed} failed tool results")
    if result.title:
        notes.append(f"title “{result.title[:40]}”")
    lines = sum(1 for _ in path.open("rb"))
    return lines, authors, "; ".join(notes) or "none"


def extracted(path: Path) -> str:
    """What the stenographer's local pipeline stores from the file in a new home."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Home(Path(tmp) / "home")
        home.init(["main"])
        db = home.open_db()
        try:
            sources.add(db, str(path), agent="main", actor="cli")
            steno.run(home, db, steno.Options())
            state = Counter({r["category"]: r["n"] for r in db.query(
                "SELECT category, count(*) AS n FROM state GROUP BY category")})
            episodes = Counter({r["kind"]: r["n"] for r in db.query(
                "SELECT kind, count(*) AS n FROM episodes GROUP BY kind")})
            facts = int(db.scalar("SELECT count(*) FROM facts"))
        finally:
            db.close()
    tools = episodes.pop("tool_call", 0)
    return (f"state: {_counts(state, SHORT)}; episodes: {tools} tool calls, "
            f"{_counts(episodes)}; {facts} facts")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dirs", nargs="*", type=Path, default=DEFAULT)
    args = parser.parse_args()
    print("| file | lines | turns: person / agent / sub-agent / machine | read | extracted |")
    print("|---|---|---|---|---|")
    for folder in args.dirs:
        for path in sorted(folder.glob("*.jsonl")):
            lines, authors, notes = reader_row(path)
            name = f"{folder.name}/{path.name if len(path.name) < 28 else path.name[:12] + '…'}"
            print(f"| {name} | {lines:,} | {authors} | {notes} | {extracted(path)} |")


if __name__ == "__main__":
    main()
