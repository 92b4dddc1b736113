"""The warm search service on a Unix socket: used when it answers, named when it does not."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.search import service
from memtui.search.service import Service, ask, socket_path
from memtui.stores import state
from tests.conftest import run_cli


@pytest.fixture
def kw(home: Home) -> Home:
    """A keyword-only home (no model to load) with one decision in state."""
    with home.config_path.open("a", encoding="utf-8") as fh:
        fh.write('\n[search]\nprovider = "none"\n')
    db = home.open_db()
    try:
        state.add(db, state.NewState(agent="main", category="decision",
                                     summary="The pelican cache lives on redis 7"), actor="test")
    finally:
        db.close()
    run_cli("remember", "pelican cache warmup takes ninety seconds", home=home)
    return home


@pytest.fixture
def running(kw: Home) -> Iterator[Service]:
    svc = Service(kw)
    svc.serve_in_thread()
    yield svc
    svc.stop()


def test_searches_go_through_the_socket_when_it_answers(kw: Home, running: Service) -> None:
    mode = stat.S_IMODE(os.stat(socket_path(kw)).st_mode)
    assert mode == 0o600
    found = service.search(kw, "main", "pelican cache warmup")
    assert found["served_by"] == "service" and found["results"]
    recalled = service.recall(kw, "main", "pelican cache")
    assert recalled["served_by"] == "service"
    assert any(h["cite"].startswith("state:") for h in recalled["hits"])
    # The CLI uses it too, and says so.
    cli = json.loads(run_cli("search", "pelican cache warmup", "--json", home=kw).stdout)
    assert cli["served_by"] == "service" and cli["results"][0]["path"].startswith("memory/")
    with pytest.raises(MemtuiError, match="unknown request"):
        ask(kw, {"op": "nonsense", "agent": "main"})
    with pytest.raises(MemtuiError, match="invalid agent id"):
        ask(kw, {"op": "search", "agent": "../x", "query": "q"})


def test_without_the_service_the_fallback_is_named(kw: Home) -> None:
    answer, why = ask(kw, {"op": "ping"})
    assert answer is None and why == "no service (memtui daemon is not running)"
    local = service.search(kw, "main", "pelican cache warmup")
    assert local["served_by"] == "in-process" and local["service"] == why
    # A socket left behind by a daemon that died: refused connections, same fallback.
    dead = Service(kw)
    dead.server_close()
    assert socket_path(kw).exists()
    answer, why = ask(kw, {"op": "ping"})
    assert answer is None and why.startswith("no service (ConnectionRefusedError")
    assert service.recall(kw, "main", "pelican")["served_by"] == "in-process"


def test_the_daemon_serves_and_cleans_up(kw: Home) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("MEMTUI_HOME", None)
    proc = subprocess.Popen([sys.executable, "-m", "memtui.cli.main", "--home", str(kw.root),
                             "daemon"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while ask(kw, {"op": "ping"})[0] is None and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.1)
        hooked = subprocess.run(
            [sys.executable, "-m", "memtui.cli.main", "--home", str(kw.root), "hook",
             "claude-code", "UserPromptSubmit"], input=json.dumps({"prompt": "pelican cache"}),
            capture_output=True, text=True, env=env, timeout=60)
        context = json.loads(hooked.stdout)["hookSpecificOutput"]["additionalContext"]
        assert "pelican" in context
        assert "memories, service" in (kw.root / "hooks.log").read_text()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert not socket_path(kw).exists()
