"""Console themes as files: every ``*.toml`` in themes/ becomes a Textual theme at start."""

from __future__ import annotations

import os
import tomllib
from dataclasses import fields
from pathlib import Path

from textual.theme import Theme

from memtui.errors import ConfigError

ENV_THEMES = "MEMTUI_THEMES"
DEFAULT = "memtui-dark"


def theme_dirs(home_root: Path | None = None) -> list[Path]:
    """Where themes are read from, later ones overriding earlier: the checkout's themes/,
    $MEMTUI_THEMES, and themes/ in the memory home."""
    dirs = [Path(__file__).resolve().parents[2] / "themes"]
    if os.environ.get(ENV_THEMES):
        dirs.append(Path(os.environ[ENV_THEMES]))
    if home_root is not None:
        dirs.append(home_root / "themes")
    return [d for d in dirs if d.is_dir()]


_FIELDS = {f.name for f in fields(Theme)}


def load_theme(path: Path) -> Theme:
    """One theme file; a wrong key or value is an error naming the file and the key."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(path, "(syntax)", f"a valid TOML theme: {exc}") from exc
    data.setdefault("name", path.stem)
    unknown = set(data) - _FIELDS
    if unknown:
        raise ConfigError(path, sorted(unknown)[0], f"a Textual theme field "
                          f"({', '.join(sorted(_FIELDS))})")
    if "primary" not in data:
        raise ConfigError(path, "primary", "a colour (every theme needs a primary colour)")
    try:
        return Theme(**data)
    except (TypeError, ValueError) as exc:
        raise ConfigError(path, "(theme)", f"valid theme values: {exc}") from exc


def load_themes(home_root: Path | None = None) -> dict[str, Theme]:
    """Every theme file found, by name."""
    found: dict[str, Theme] = {}
    for folder in theme_dirs(home_root):
        for path in sorted(folder.glob("*.toml")):
            theme = load_theme(path)
            found[theme.name] = theme
    return found
