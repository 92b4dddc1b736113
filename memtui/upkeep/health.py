"""Infrastructure health checks: run the configured commands and keep their last results."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass

from memtui.db import Database
from memtui.errors import NotFound
from memtui.home import Home
from memtui.stores import jobs


@dataclass(frozen=True)
class HealthResult:
    name: str
    ok: bool
    message: str
    job_id: int


def run_checks(home: Home, db: Database, only: str | None = None) -> list[HealthResult]:
    """Run each configured check (exit 0 = healthy) and record it as a `health` job."""
    results = []
    timeout = home.settings.health.timeout_seconds
    if only and only not in home.settings.health.checks:
        raise NotFound(f"no health check named {only!r} ([health] checks in "
                       f"{home.config_path})")
    for name, command in home.settings.health.checks.items():
        if only and name != only:
            continue
        job_id = jobs.start(db, "health", name)
        try:
            done = subprocess.run(command, shell=True, cwd=home.root, capture_output=True,
                                  text=True, timeout=timeout)
            ok = done.returncode == 0
            output = (done.stdout + done.stderr).strip().splitlines()
            message = output[-1][:200] if output else f"exit {done.returncode}"
        except subprocess.TimeoutExpired:
            ok, message = False, f"timed out after {timeout}s"
        jobs.finish(db, job_id, "ok" if ok else "failed", {}, message)
        results.append(HealthResult(name, ok, message, job_id))
    return results
