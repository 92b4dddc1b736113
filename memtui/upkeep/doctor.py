"""`memtui doctor`: what works, what falls back, what is broken and how to fix it."""

from __future__ import annotations

from dataclasses import dataclass, field

import apsw

from memtui.db import Database
from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.schema import MIGRATIONS


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    """ok, warn (works, degraded) or fail (broken)."""
    detail: str
    fix: str = ""


@dataclass
class Report:
    home: str
    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(c.status != "fail" for c in self.checks)


def diagnose(home: Home) -> Report:
    """Run every check; never raises for a broken home, it reports it."""
    report = Report(str(home.root))
    add = report.checks.append
    if not home.root.exists():
        add(Check("home", "fail", f"{home.root} does not exist",
                  f"memtui init --home {home.root}"))
        return report
    add(Check("home", "ok", str(home.root)))
    try:
        settings = home.settings
        agents = ", ".join(settings.agents.ids)
        add(Check("settings", "ok", f"{home.config_path} (agents: {agents})"))
    except MemtuiError as exc:
        add(Check("settings", "fail", str(exc), f"edit {home.config_path}"))
        return report
    try:
        from memtui.extract.policy import load_policy

        load_policy(home.policy_path)
        add(Check("policy", "ok", str(home.policy_path)))
    except MemtuiError as exc:
        add(Check("policy", "fail", str(exc), f"edit {home.policy_path}"))
    except FileNotFoundError:
        add(Check("policy", "fail", f"{home.policy_path} is missing",
                  f"memtui init --home {home.root} (re-creates missing files only)"))
    if not home.db_path.exists():
        add(Check("memory.db", "fail", f"{home.db_path} is missing",
                  f"memtui init --home {home.root}"))
        return report

    restore = ("restore memory.db from a backup, or move it aside and run memtui init and "
               "memtui extract (markdown files and transcripts are intact)")
    try:
        db = Database(home.db_path)
    except MemtuiError as exc:
        add(Check("memory.db", "fail", str(exc), "check the file's permissions"))
        return report
    except apsw.Error as exc:
        add(Check("memory.db", "fail", f"{type(exc).__name__}: {exc}", restore))
        return report
    if db.readonly:  # a permissions problem, not a damaged file: say which
        from memtui.db import read_only_message

        add(Check("permissions", "warn", read_only_message(home.db_path),
                  f"give this user write permission on {home.db_path} and {home.root}, or "
                  "run memtui as the home's owner"))
    try:
        caps = db.capabilities()
        add(Check("sqlite", "ok", f"SQLite {caps.sqlite_version}"))
        add(Check("fts5", "ok" if caps.fts5 else "warn",
                  "available" if caps.fts5 else "missing: search falls back to vector-only",
                  "" if caps.fts5 else "pip install --upgrade apsw"))
        add(Check("sqlite-vec", "ok" if caps.sqlite_vec else "warn",
                  f"v{caps.sqlite_vec.lstrip('v')}" if caps.sqlite_vec
                  else f"{caps.sqlite_vec_error}: vector search falls back to numpy cosine",
                  "" if caps.sqlite_vec else "pip install sqlite-vec"))
        latest = max(v for v, _ in MIGRATIONS)
        version = db.schema_version()
        if version > latest:
            add(Check("schema", "fail", f"version {version} is newer than this memtui ({latest})",
                      "upgrade memtui"))
        else:
            add(Check("schema", "ok" if version == latest else "warn",
                      f"version {version} of {latest}",
                      "" if version == latest else "any memtui command migrates it"))
        try:
            problems = db.integrity_check()
        except apsw.Error as exc:
            problems = [f"{type(exc).__name__}: {exc}"]
        add(Check("integrity", "fail" if problems else "ok",
                  "; ".join(problems[:5]) if problems else "ok", restore if problems else ""))
        wal = db.wal_size()
        add(Check("wal", "warn" if wal > 64 * 2**20 else "ok", f"{wal / 2**20:.1f} MiB",
                  "a long reader keeps the WAL from checkpointing; stop stale processes"
                  if wal > 64 * 2**20 else ""))
        report.checks.extend(source_checks(db))
    except apsw.Error as exc:
        add(Check("memory.db", "fail", f"{type(exc).__name__}: {exc}", restore))
    finally:
        db.close()
    for agent in home.agents():
        ws = home.workspace(agent)
        add(Check(f"workspace {agent}", "ok" if ws.is_dir() else "fail", str(ws),
                  "" if ws.is_dir() else f"memtui init --home {home.root}"))
    report.checks.extend(index_checks(home))
    return report


def source_checks(db: Database) -> list[Check]:
    """Transcript sources that name no files now (moved or deleted): extraction reads
    nothing from them, so each is a warning."""
    from memtui.stores.sources import list_sources

    found = list_sources(db)
    gone = [s for s in found if not s.files()]
    if not gone:
        return [Check("sources", "ok", f"{len(found)} source(s), each naming files")]
    return [Check(f"source {s.id}", "warn", f"{s.pattern} (agent {s.agent}) names no files now",
                  f"memtui sources remove {s.id}, if the transcripts are gone for good")
            for s in gone]


def index_checks(home: Home) -> list[Check]:
    """One check per search index file: readable and sound (``PRAGMA quick_check``), read
    only. A damaged index is a warning, not a failure: it is derived, and the next
    search or ``memtui index`` sets it aside and rebuilds it."""
    out: list[Check] = []
    folder = home.index_dir
    for path in sorted(folder.glob("*.sqlite")) if folder.is_dir() else []:
        agent = path.stem
        rebuild = (f"memtui index --agent {agent} --rebuild (the damaged file is moved "
                   f"aside, not deleted)")
        try:
            conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
        except apsw.Error as exc:
            out.append(Check(f"index {agent}", "warn", f"{path}: {exc}", rebuild))
            continue
        try:
            problems = [str(r[0]) for r in conn.execute("PRAGMA quick_check")]
            problems = [] if problems == ["ok"] else problems
        except apsw.Error as exc:
            problems = [f"{type(exc).__name__}: {exc}"]
        finally:
            conn.close()
        out.append(Check(f"index {agent}", "warn" if problems else "ok",
                         f"{path}: {'; '.join(problems[:3])}" if problems else str(path),
                         rebuild if problems else ""))
    aside = sorted(folder.glob("*.damaged-*")) if folder.is_dir() else []
    kept = [p for p in aside if not p.name.endswith(("-wal", "-shm"))]
    if kept:
        out.append(Check("index set aside", "warn",
                         f"{len(kept)} damaged index file(s) kept: "
                         + ", ".join(p.name for p in kept[:3]),
                         f"look into them or delete them from {folder}"))
    return out
