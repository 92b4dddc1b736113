"""The LoCoMo dev slice for the search benchmarks: loading it and writing its transcripts.

The data is vendored in ``bench/data/locomo/`` (CC BY-NC 4.0, see the README there), so
the benchmarks run in any clone. ``--data FILE`` on each benchmark takes another LoCoMo
file (for example all ten conversations). A conversation becomes the generic JSONL
transcript of the evaluation contract: one message per turn, its id the turn's dia_id.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

DEV = Path(__file__).resolve().parent / "data" / "locomo" / "locomo-dev.json"
DIA_ID = re.compile(r"D(\d+):0*(\d+)")
SESSION = re.compile(r"session_(\d+)")


def load(path: Path = DEV) -> list[dict[str, Any]]:
    """The conversations of a LoCoMo JSON file; exits with a clear message when it is
    missing or is not one."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        sys.exit(f"no LoCoMo data at {path}: the dev slice ships in bench/data/locomo/; "
                 "give another file with --data FILE")
    except (OSError, ValueError) as exc:
        sys.exit(f"cannot read the LoCoMo data at {path}: {exc}")
    if not isinstance(data, list) or not all(isinstance(s, dict) and "conversation" in s
                                             for s in data):
        sys.exit(f"{path} is not LoCoMo data: expected a list of samples with a conversation")
    return data


def sessions(conv: dict[str, Any]) -> list[str]:
    """The conversation's session keys (session_1, session_2, ...) in order."""
    keys = [k for k in conv if SESSION.fullmatch(k)]
    return sorted(keys, key=lambda k: int(k.split("_")[1]))


def to_transcript(sample: dict[str, Any], path: Path) -> set[str]:
    """Write ``sample`` as a generic JSONL transcript at ``path``; the message ids."""
    conv = sample["conversation"]
    roles = {conv["speaker_a"]: "user", conv["speaker_b"]: "assistant"}
    ids: set[str] = set()
    lines = []
    for key in sessions(conv):
        # '1:56 pm on 8 May, 2023'; the turns of a session get its minute, a second each.
        start = datetime.strptime(conv[f"{key}_date_time"].strip(), "%I:%M %p on %d %B, %Y")
        for i, turn in enumerate(conv[key]):
            text = turn["text"]
            if turn.get("blip_caption"):
                text += f" [shares a photo: {turn['blip_caption']}]"
            at = start.replace(second=min(59, i), tzinfo=UTC)
            lines.append(json.dumps({
                "type": "message", "id": turn["dia_id"], "session": key,
                "ts": at.isoformat(), "role": roles.get(turn["speaker"], "user"),
                "name": turn["speaker"], "content": text}, ensure_ascii=False) + "\n")
            ids.add(turn["dia_id"])
    path.write_text("".join(lines), encoding="utf-8")
    return ids


def evidence_ids(qa: dict[str, Any], known: set[str]) -> list[str]:
    """The question's evidence turns that are in the transcript, normalised (D3:05 -> D3:5)."""
    found: list[str] = []
    for item in qa.get("evidence") or []:
        for session, turn in DIA_ID.findall(str(item)):
            dia = f"D{int(session)}:{int(turn)}"
            if dia in known and dia not in found:
                found.append(dia)
    return found
