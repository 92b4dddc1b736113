"""The memory home: where settings, policy, memory.db, agent workspaces and indexes live."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from memtui.config import AGENT_ID, Settings, load_settings, render_settings
from memtui.db import (
    Database,
    header_user_version,
    newer_schema,
    open_memory_db,
    supported_version,
)
from memtui.errors import MemtuiError, NotFound

ENV_HOME = "MEMTUI_HOME"

WORKSPACE_FILES = {
    "MEMORY.md": "# Long-term memory\n\nCurated facts this agent keeps across sessions.\n",
    "SESSION-STATE.md": "# Session state\n\nWhat the agent is in the middle of right now.\n",
    "HEARTBEAT.md": "# Heartbeat\n\nChecks to run on every heartbeat, one per line.\n",
}


def atomic_write(path: Path, text: str) -> None:
    """Write a file so readers see the old or the new content, never half of it.

    Temp file in the same folder, fsync, rename over the target, fsync the folder.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        # mkstemp makes 0600 files; keep the target's mode, or what umask gives a new file.
        try:
            mode = os.stat(path).st_mode & 0o7777
        except FileNotFoundError:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def check_agent_id(agent: str) -> str:
    if not AGENT_ID.match(agent):
        raise MemtuiError(
            f"invalid agent id {agent!r}: use letters, digits, '.', '_' or '-' (at most 64)"
        )
    return agent


def default_home() -> Path:
    """The home when neither --home nor MEMTUI_HOME names one."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("memtui", appauthor=False))


@dataclass
class InitReport:
    """What `memtui init` did: the paths it created and the ones that already existed."""

    created: list[Path] = field(default_factory=list)
    existing: list[Path] = field(default_factory=list)


class Home:
    """One memory home on disk. Cheap to construct; files are read when asked for."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root).expanduser().absolute()
        self._settings: Settings | None = None

    @classmethod
    def resolve(cls, explicit: str | os.PathLike[str] | None = None) -> Home:
        """--home beats MEMTUI_HOME beats the platform default."""
        if explicit:
            return cls(explicit)
        env = os.environ.get(ENV_HOME)
        return cls(env) if env else cls(default_home())

    # -- paths --------------------------------------------------------------------------

    @property
    def config_path(self) -> Path:
        return self.root / "memtui.toml"

    @property
    def policy_path(self) -> Path:
        return self.root / "policy.yaml"

    @property
    def db_path(self) -> Path:
        return self.root / "memory.db"

    @property
    def agents_dir(self) -> Path:
        return self.root / "agents"

    @property
    def index_dir(self) -> Path:
        return self.root / "index"

    def index_path(self, agent: str) -> Path:
        return self.index_dir / f"{check_agent_id(agent)}.sqlite"

    def workspace(self, agent: str) -> Path:
        """The agent's workspace: a configured path, or agents/<id>/ in the home."""
        check_agent_id(agent)
        configured = self.settings.agents.workspaces.get(agent)
        return Path(configured).expanduser() if configured else self.agents_dir / agent

    # -- contents -----------------------------------------------------------------------

    def exists(self) -> bool:
        return self.config_path.exists() and self.db_path.exists()

    def require(self) -> Home:
        """Fail with the fix in words when the home was never initialised, or when a newer
        memtui wrote its memory.db (refused before anything opens it)."""
        if not self.exists():
            raise NotFound(
                f"no memory home at {self.root} (run: memtui init --home {self.root})"
            )
        self.refuse_newer()
        return self

    def refuse_newer(self) -> None:
        """Raise NewerSchema when memory.db's header names a schema newer than this memtui's."""
        found = header_user_version(self.db_path)
        if found is not None and found > supported_version():
            raise newer_schema(self.db_path, found, supported_version())

    @property
    def settings(self) -> Settings:
        if self._settings is None:
            self._settings = load_settings(self.config_path)
        return self._settings

    def agents(self) -> list[str]:
        return list(self.settings.agents.ids)

    def agent(self, name: str | None, db: Database | None = None) -> str:
        """The named agent (validated), or the default one.

        With ``db``, the agent must be known: configured in memtui.toml, or the owner of a
        transcript source or of state entries (the LoCoMo eval registers ad-hoc agents).
        """
        if not name:
            return self.settings.default_agent()
        check_agent_id(name)
        if db is None or name in self.settings.agents.ids:
            return name
        if db.scalar("SELECT 1 FROM sources WHERE agent = ? UNION ALL "
                     "SELECT 1 FROM state WHERE agent = ? LIMIT 1", (name, name)):
            return name
        raise NotFound(f"unknown agent {name!r}: configured agents are "
                       f"{', '.join(self.settings.agents.ids)} ([agents] ids in "
                       f"{self.config_path})")

    def open_db(self) -> Database:
        return open_memory_db(self.db_path)

    def init(self, agents: list[str] | None = None) -> InitReport:
        """Create what is missing; never overwrite what is there."""
        report = InitReport()
        self.refuse_newer()
        if self.config_path.exists():
            # Validate before touching anything: nothing starts half-configured.
            settings = load_settings(self.config_path)
            missing = [a for a in agents or [] if a not in settings.agents.ids]
            if missing:
                raise MemtuiError(
                    f"agent(s) {', '.join(missing)} are not in {self.config_path}: add them to "
                    f"[agents] ids there, then run memtui init again to create their workspaces"
                )
        self.root.mkdir(parents=True, exist_ok=True)
        if self.config_path.exists():
            report.existing.append(self.config_path)
        else:
            settings = Settings()
            if agents:
                settings.agents.ids = [check_agent_id(a) for a in agents]
            atomic_write(self.config_path, render_settings(settings))
            report.created.append(self.config_path)
            self._settings = None
        if self.policy_path.exists():
            report.existing.append(self.policy_path)
        else:
            text = resources.files("memtui.extract").joinpath("default_policy.yaml").read_text(
                encoding="utf-8"
            )
            atomic_write(self.policy_path, text)
            report.created.append(self.policy_path)
        (report.existing if self.db_path.exists() else report.created).append(self.db_path)
        self.open_db().close()
        self.index_dir.mkdir(exist_ok=True)
        for agent in self.agents():
            ws = self.workspace(agent)
            for name, text in WORKSPACE_FILES.items():
                target = ws / name
                if target.exists():
                    report.existing.append(target)
                else:
                    atomic_write(target, text)
                    report.created.append(target)
            daily = ws / "memory"
            (report.existing if daily.exists() else report.created).append(daily)
            daily.mkdir(parents=True, exist_ok=True)
        return report
