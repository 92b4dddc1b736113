"""The HTTP transport against a real server on loopback: Host, Origin and token checks."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from memtui.errors import MemtuiError
from memtui.home import Home
from memtui.mcp.http import check_bind
from tests.conftest import run_cli

TOKEN = "t0k3n-" + "9f" * 16
INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "probe", "version": "1"}}}
HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def served(kw_home: Home) -> Iterator[str]:
    """`memtui mcp --transport http` running on a free loopback port; yields its URL."""
    port = _free_port()
    with kw_home.config_path.open("a", encoding="utf-8") as fh:
        fh.write(f'\n[mcp]\ntoken = "{TOKEN}"\nport = {port}\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    env.pop("MEMTUI_HOME", None)
    proc = subprocess.Popen([sys.executable, "-m", "memtui.cli.main", "--home",
                             str(kw_home.root), "mcp", "--transport", "http", "--no-service"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None:
                    err = proc.stderr.read().decode() if proc.stderr else ""
                    raise AssertionError(err) from None
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _post(url: str, **headers: str) -> httpx2.Response:
    return httpx2.post(url, json=INIT, headers={**HEADERS, **headers}, timeout=10)


def test_host_origin_and_token_are_checked(served: str) -> None:
    good = {"authorization": f"Bearer {TOKEN}"}
    assert _post(served, host="evil.example:80", **good).status_code == 421
    assert _post(served, origin="https://evil.example", **good).status_code == 403
    missing = _post(served)
    assert missing.status_code == 401 and "bearer" in missing.headers["www-authenticate"].lower()
    assert _post(served, authorization="Bearer wrong").status_code == 401
    assert _post(served, authorization=f"Basic {TOKEN}").status_code == 401
    port = served.split(":")[2].split("/")[0]
    ok = _post(served, origin=f"http://localhost:{port}", **good)
    assert ok.status_code == 200, ok.text


def test_the_sdk_client_works_with_the_token(served: str) -> None:
    async def scenario() -> set[str]:
        with anyio.fail_after(60):
            http = httpx2.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"})
            async with http, Client(streamable_http_client(served, http_client=http),
                                    mode="legacy") as client:
                return {t.name for t in (await client.list_tools()).tools}

    assert {"recall", "forget", "memory_get"} <= anyio.run(scenario)


def test_wildcard_and_remote_addresses_need_the_flag(kw_home: Home) -> None:
    refused = run_cli("mcp", "--transport", "http", "--host", "0.0.0.0", home=kw_home)
    assert refused.returncode == 1 and "--allow-remote" in refused.stderr
    with pytest.raises(MemtuiError, match="every interface"):
        check_bind("::", allow_remote=False)
    with pytest.raises(MemtuiError, match="10.0.0.5"):
        check_bind("10.0.0.5", allow_remote=False)
    assert "warning" in (check_bind("0.0.0.0", allow_remote=True) or "")
    assert check_bind("127.0.0.1", allow_remote=False) is None
    assert check_bind("::1", allow_remote=False) is None


def test_no_token_no_http_server(kw_home: Home) -> None:
    result = run_cli("mcp", "--transport", "http", "--port", str(_free_port()), home=kw_home)
    assert result.returncode == 1 and "[mcp] token" in result.stderr
