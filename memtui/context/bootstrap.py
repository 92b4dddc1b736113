"""What an agent injects before the conversation: workspace files, skills and tool schemas."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.text import estimate_tokens

HEAD_SHARE = 0.7
TAIL_SHARE = 0.2
PRIVATE_FILES = frozenset({"MEMORY.md", "memory.md"})
"""Files a group or shared session never gets: the agent's curated private memory."""

_FRONT = re.compile(r"^---\s*\n(.*?)\n---\s*\n", re.S)


@dataclass(frozen=True)
class InjectedFile:
    """One workspace file as the agent's system prompt gets it."""

    name: str
    status: str
    """OK, TRUNCATED, MISSING, or EXCLUDED (private, in a group session)."""
    raw_chars: int
    injected_chars: int
    tokens: int


@dataclass(frozen=True)
class Skill:
    name: str
    chars: int
    tokens: int


@dataclass(frozen=True)
class ToolSchema:
    name: str
    chars: int
    tokens: int


@dataclass(frozen=True)
class Bootstrap:
    """The injected part of an agent's context, each part estimated (chars/4)."""

    workspace: Path
    max_chars: int
    files: tuple[InjectedFile, ...]
    skills: tuple[Skill, ...]
    tools: tuple[ToolSchema, ...]

    @property
    def file_tokens(self) -> int:
        return sum(f.tokens for f in self.files)

    @property
    def skill_tokens(self) -> int:
        return sum(s.tokens for s in self.skills)

    @property
    def tool_tokens(self) -> int:
        return sum(t.tokens for t in self.tools)


def truncate_file(name: str, text: str, max_chars: int) -> str:
    """The file as injected: whole, or 70% of the budget from the head, 20% from the tail
    and a marker between them saying what was left out."""
    if len(text) <= max_chars:
        return text
    head, tail = int(max_chars * HEAD_SHARE), int(max_chars * TAIL_SHARE)
    left_out = len(text) - head - tail
    marker = (f"\n\n[... {name}: {left_out:,} of {len(text):,} chars left out here; "
              "read the file for the rest ...]\n\n")
    return text[:head] + marker + (text[-tail:] if tail else "")


def injected_files(home: Home, agent: str, *, group: bool = False) -> tuple[InjectedFile, ...]:
    """Each configured workspace file with its raw and injected size."""
    cfg = home.settings.context
    workspace = home.workspace(agent)
    out = []
    for name in cfg.bootstrap_files:
        path = workspace / name
        if group and name in PRIVATE_FILES:
            out.append(InjectedFile(name, "EXCLUDED", _size(path), 0, 0))
            continue
        if not path.is_file():
            out.append(InjectedFile(name, "MISSING", 0, 0, 0))
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        injected = truncate_file(name, text, cfg.bootstrap_max_chars)
        status = "TRUNCATED" if injected != text else "OK"
        out.append(InjectedFile(name, status, len(text), len(injected),
                                estimate_tokens(injected)))
    return tuple(out)


def _size(path: Path) -> int:
    try:
        return len(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return 0


def skills(workspace: Path) -> tuple[Skill, ...]:
    """Skills under ``skills/*/SKILL.md``: the prompt lists name, description and location."""
    root = workspace / "skills"
    if not root.is_dir():
        return ()
    out = []
    for path in sorted(root.glob("*/SKILL.md")):
        text = path.read_text(encoding="utf-8", errors="replace")
        meta = _frontmatter(text)
        name = meta.get("name") or path.parent.name
        entry = f"- {name}: {meta.get('description', '')} ({path})"
        out.append(Skill(name, len(entry), estimate_tokens(entry)))
    return tuple(out)


def _frontmatter(text: str) -> dict[str, str]:
    match = _FRONT.match(text)
    if not match:
        return {}
    meta = {}
    for line in match.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() in ("name", "description"):
            meta[key.strip()] = value.strip().strip("\"'")
    return meta


def tool_schemas(home: Home, workspace: Path) -> tuple[ToolSchema, ...]:
    """Tool schemas from [context] tools_file: a JSON list of {name, ...} objects."""
    configured = home.settings.context.tools_file
    if not configured:
        return ()
    path = Path(configured).expanduser()
    path = path if path.is_absolute() else workspace / path
    if not path.is_file():
        return ()
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise MemtuiError(f"{path}: not valid JSON ({exc}); [context] tools_file must name a "
                          "JSON list of tool schemas") from exc
    if isinstance(data, dict) and isinstance(data.get("tools"), list):
        data = data["tools"]
    if not isinstance(data, list):
        raise MemtuiError(f"{path}: expected a JSON list of tool schemas")
    out = []
    for item in data:
        if isinstance(item, dict) and isinstance(item.get("name"), str):
            body = json.dumps(item, ensure_ascii=False)
            out.append(ToolSchema(item["name"], len(body), estimate_tokens(body)))
    return tuple(out)


def load_bootstrap(home: Home, agent: str, *, group: bool = False) -> Bootstrap:
    workspace = home.workspace(agent)
    return Bootstrap(workspace, home.settings.context.bootstrap_max_chars,
                     injected_files(home, agent, group=group), skills(workspace),
                     tool_schemas(home, workspace))
