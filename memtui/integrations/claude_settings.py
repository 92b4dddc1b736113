"""Installing memtui's hooks into Claude Code's settings.json, and taking them out again.

``install`` merges one hook group per event into ``hooks`` of the settings file (the
project's ``.claude/settings.json`` or the user's ``~/.claude/settings.json``), after a
backup copy of the file. It is idempotent: groups already there are not added twice.
What it added, and the file's bytes before the first install, are kept in the home
(``integrations/claude-code.json``), so ``uninstall`` removes exactly those groups and,
when nothing else changed, restores the file byte for byte (or removes a file it made).
"""

from __future__ import annotations

import base64
import json
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memtui import timeutil
from memtui.errors import MemtuiError
from memtui.home import Home, atomic_write

TOOLS = "Bash|Write|Edit|MultiEdit|NotebookEdit"
"""The tool calls that get the pre-action gate and episodic capture."""
EVENTS: dict[str, tuple[str | None, int]] = {
    "SessionStart": (None, 15),
    "UserPromptSubmit": (None, 10),
    "PreToolUse": (TOOLS, 10),
    "PreCompact": (None, 30),
    "PostToolUse": (TOOLS, 10),
    "Stop": (None, 10),
}
"""Event -> (tool matcher or None, timeout in seconds)."""
MANIFEST = "claude-code.json"


@dataclass
class Change:
    """What install or uninstall did to one settings file."""

    path: str
    changed: bool
    events: list[str] = field(default_factory=list)
    backup: str | None = None
    restored: bool = False
    removed_file: bool = False


def settings_path(project: Path | None = None, user: bool = False) -> Path:
    """``DIR/.claude/settings.json`` for a project, else ``~/.claude/settings.json``."""
    if project is not None and user:
        raise MemtuiError("give --project DIR or --user, not both")
    if project is not None:
        return project.resolve() / ".claude" / "settings.json"
    return Path.home() / ".claude" / "settings.json"


def hook_command(home: Home, agent: str, event: str) -> str:
    """The command line Claude Code runs for ``event`` (absolute interpreter and home)."""
    parts = [sys.executable, "-m", "memtui.cli.main", "--home", str(home.root.resolve()),
             "hook", "claude-code", event, "--agent", agent]
    return shlex.join(parts)


def groups(home: Home, agent: str) -> dict[str, dict[str, Any]]:
    """The hook group memtui adds for each event."""
    out: dict[str, dict[str, Any]] = {}
    for event, (matcher, timeout) in EVENTS.items():
        group: dict[str, Any] = {"hooks": [{"type": "command",
                                            "command": hook_command(home, agent, event),
                                            "timeout": timeout}]}
        if matcher:
            group = {"matcher": matcher, **group}
        out[event] = group
    return out


def _read(path: Path) -> tuple[bytes | None, dict[str, Any]]:
    if not path.exists():
        return None, {}
    raw = path.read_bytes()
    if not raw.strip():
        return raw, {}
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise MemtuiError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg}); fix it first, "
                          "memtui changes nothing in a file it cannot read") from exc
    if not isinstance(data, dict):
        raise MemtuiError(f"{path}: expected a JSON object at the top")
    if not isinstance(data.get("hooks", {}), dict):
        raise MemtuiError(f"{path}: 'hooks' is not an object")
    return raw, data


def _manifest(home: Home) -> tuple[Path, dict[str, Any]]:
    path = home.root / "integrations" / MANIFEST
    if not path.exists():
        return path, {}
    return path, json.loads(path.read_text(encoding="utf-8"))


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def install(home: Home, agent: str, path: Path) -> Change:
    """Merge memtui's hook groups into ``path`` (backup first); a no-op when present."""
    raw, data = _read(path)
    wanted = groups(home, agent)
    hooks = data.setdefault("hooks", {})
    added: dict[str, dict[str, Any]] = {}
    for event, group in wanted.items():
        present = hooks.setdefault(event, [])
        if not isinstance(present, list):
            raise MemtuiError(f"{path}: hooks.{event} is not a list")
        if group not in present:
            present.append(group)
            added[event] = group
    if not added:
        return Change(str(path), False)
    mpath, manifest = _manifest(home)
    entry = manifest.setdefault(str(path), {
        "original": None if raw is None else base64.b64encode(raw).decode(),
        "created_dirs": [str(d) for d in _missing_dirs(path.parent)], "added": {}})
    for event, group in added.items():
        entry["added"].setdefault(event, [])
        if group not in entry["added"][event]:
            entry["added"][event].append(group)
    backup = None
    if raw is not None:
        stamp = timeutil.now().strftime("%Y%m%dT%H%M%S")
        backup = str(path.with_name(f"{path.name}.memtui-backup-{stamp}"))
        shutil.copy2(path, backup)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(mpath, _dump(manifest))
    atomic_write(path, _dump(data))
    return Change(str(path), True, sorted(added), backup)


def _missing_dirs(folder: Path) -> list[Path]:
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    return missing


def uninstall(home: Home, path: Path) -> Change:
    """Remove exactly the groups ``install`` added; restore the original bytes when the
    rest of the file is as it was, remove the file when memtui created it."""
    mpath, manifest = _manifest(home)
    entry = manifest.get(str(path))
    if entry is None or not path.exists():
        return Change(str(path), False)
    _raw, data = _read(path)
    hooks = data.get("hooks", {})
    events = []
    for event, added in entry["added"].items():
        present = hooks.get(event, [])
        kept = [g for g in present if g not in added]
        if len(kept) != len(present):
            events.append(event)
        if kept:
            hooks[event] = kept
        else:
            hooks.pop(event, None)
    original = None if entry["original"] is None else base64.b64decode(entry["original"])
    _orig_raw, before = (None, {}) if original is None else _parse(original)
    if not hooks and "hooks" not in before:
        data.pop("hooks", None)
    change = Change(str(path), True, sorted(events))
    if original is not None and data == before:
        path.write_bytes(original)  # nothing else changed: the very bytes it had
        change.restored = True
    elif original is None and not data:
        path.unlink()
        for folder in entry.get("created_dirs", []):
            try:
                Path(folder).rmdir()
            except OSError:
                break
        change.removed_file = True
    else:
        atomic_write(path, _dump(data))
    del manifest[str(path)]
    atomic_write(mpath, _dump(manifest))
    return change


def _parse(raw: bytes) -> tuple[bytes, dict[str, Any]]:
    try:
        data = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        data = {}
    return raw, data if isinstance(data, dict) else {}
