"""The warm search service: `memtui daemon` answers searches on a Unix socket in the home.

A one-shot search pays for opening the index and loading the query encoder every time
(a 1M-chunk searcher takes over 20 s to load). The daemon keeps one warm searcher per
agent and answers on ``<home>/search.sock`` (mode 0600: only the home's owner may ask).
The protocol is one JSON object per line each way: ``{"op": "search", "agent", "query",
"options"}`` or ``{"op": "recall", "agent", "query", "layer", "since", "limit"}`` or
``{"op": "ping"}``; the answer is ``{"ok": true, "result": ...}`` or ``{"ok": false,
"error": ...}``.

Callers use ``search``/``recall`` here: through the socket when it answers, else in
their own process, and the answer says which (``served_by``) and why (``service``).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import socketserver
import stat
import threading
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from memtui.errors import MemtuiError
from memtui.home import Home

SOCKET_NAME = "search.sock"
CONNECT_TIMEOUT = 0.2
"""Seconds to wait for the daemon to accept: a missing daemon must cost next to nothing."""
ANSWER_TIMEOUT = 30.0
"""Seconds to wait for an answer (a first search of a big index loads it)."""
MAX_LINE = 1 << 20


def socket_path(home: Home) -> Path:
    return home.root / SOCKET_NAME


# -- client -----------------------------------------------------------------------------------


def ask(home: Home, request: dict[str, Any], *, timeout: float = ANSWER_TIMEOUT
        ) -> tuple[dict[str, Any] | None, str]:
    """Send one request; returns (answer, "") or (None, why the service did not answer)."""
    path = socket_path(home)
    try:
        st = os.stat(path)
    except OSError:
        return None, "no service (memtui daemon is not running)"
    if not stat.S_ISSOCK(st.st_mode) or st.st_uid != os.getuid():
        return None, f"no service ({path} is not this user's socket)"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(str(path))
        sock.settimeout(timeout)
        sock.sendall(json.dumps(request).encode() + b"\n")
        with sock.makefile("rb") as reader:
            line = reader.readline(MAX_LINE * 16)
    except OSError as exc:
        return None, f"no service ({type(exc).__name__}: {exc})"
    finally:
        sock.close()
    try:
        answer = json.loads(line)
    except ValueError:
        return None, "no service (an unreadable answer)"
    if not answer.get("ok"):
        raise MemtuiError(str(answer.get("error") or "the search service failed"))
    return answer, ""


def search(home: Home, agent: str, query: str, opts: Any = None, *,
           embedder: Any = "auto", use_service: bool = True,
           local: Warm | None = None) -> dict[str, Any]:
    """A search as a JSON-ready dict: through the service, else in this process (with
    ``local``'s warm searchers when given, as a long-running MCP server does).

    ``served_by`` is "service" or "in-process"; ``service`` says why it was not used.
    """
    from memtui.search import engine

    opts = opts or engine.options(home)
    request = {"op": "search", "agent": agent, "query": query, "options": asdict(opts)}
    return _served(home, request, use_service, local, lambda: engine.search(
        home, agent, query, opts, embedder=embedder).as_dict(explain=True))


def _served(home: Home, request: dict[str, Any], use_service: bool, local: Warm | None,
            one_shot: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The service's answer, else ``local``'s, else ``one_shot()``'s, saying which."""
    why = "not asked"
    if use_service:
        answer, why = ask(home, request)
        if answer is not None:
            return {**answer["result"], "served_by": "service"}
    result = local.answer(request) if local is not None else one_shot()
    return {**result, "served_by": "in-process", "service": why}


def search_response(home: Home, agent: str, query: str, opts: Any = None
                    ) -> tuple[Any, dict[str, str]]:
    """``search`` as a ``SearchResponse`` (for renderers) and how it was served."""
    from memtui.search.results import Hit, SearchResponse

    answer = search(home, agent, query, opts)
    how = {"served_by": answer.pop("served_by")}
    if "service" in answer:
        how["service"] = answer.pop("service")
    hits = [Hit(path=h["path"], start_line=h["start_line"], end_line=h["end_line"],
                score=h["score"], snippet=h["snippet"], source=h["source"],
                message_ids=h["message_ids"], vector_score=h.get("vector_score"),
                text_score=h.get("text_score"), chunk_id=-1, session=h.get("session"),
                ts=h.get("ts"), ref=h.get("ref"), current=h.get("current", True),
                meta=h.get("meta") or {}) for h in answer["results"]]
    return SearchResponse(query=answer["query"], results=hits, provider=answer["provider"],
                          model=answer["model"], fallback=answer["fallback"],
                          weights=answer.get("weights") or {}, fusion=answer.get("fusion", "")
                          ), how


def recall(home: Home, agent: str, query: str, *, layer: str | None = None,
           since: str | None = None, limit: int = 10, history: bool = False,
           embedder: Any = "auto", use_service: bool = True,
           local: Warm | None = None) -> dict[str, Any]:
    """A layered recall as a JSON-ready dict, through the service when it answers."""
    from memtui.search.recall import recall as one_shot

    request = {"op": "recall", "agent": agent, "query": query, "layer": layer,
               "since": since, "limit": limit, "history": history}
    return _served(home, request, use_service, local, lambda: one_shot(
        home, agent, query, layer=layer, since=since, limit=limit, history=history,
        embedder=embedder).as_dict())


# -- server -----------------------------------------------------------------------------------


class Warm:
    """One warm searcher per agent, each used by one request at a time."""

    def __init__(self, home: Home) -> None:
        self.home = home
        self._lock = threading.Lock()
        self._agents: dict[str, tuple[threading.Lock, Any]] = {}

    def _searcher(self, agent: str) -> tuple[threading.Lock, Any]:
        from memtui.search.engine import open_searcher

        with self._lock:
            if agent not in self._agents:
                self._agents[agent] = (threading.Lock(),
                                       open_searcher(self.home, agent, warm=True))
            return self._agents[agent]

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        from memtui.home import check_agent_id
        from memtui.search import engine
        from memtui.search.recall import recall as layered
        from memtui.search.results import SearchOptions

        op = request.get("op")
        if op == "ping":
            return {"agents": sorted(self._agents)}
        agent = check_agent_id(str(request.get("agent") or ""))
        query = str(request.get("query") or "")
        lock, searcher = self._searcher(agent)
        with lock:
            engine.ensure_fresh(searcher)
            if op == "search":
                fields = dict(request.get("options") or {})
                fields["sources"] = tuple(fields.get("sources") or ())
                return searcher.search(query, SearchOptions(**fields)).as_dict(explain=True)
            if op == "recall":
                return layered(self.home, agent, query, layer=request.get("layer"),
                               since=request.get("since"), limit=int(request.get("limit") or 10),
                               history=bool(request.get("history")),
                               searcher=searcher).as_dict()
        raise MemtuiError(f"unknown request {op!r}")

    def close(self) -> None:
        with self._lock:
            for _lock, searcher in self._agents.values():
                searcher.index.close()
            self._agents.clear()


class _Handler(socketserver.StreamRequestHandler):
    server: Service

    def handle(self) -> None:
        line = self.rfile.readline(MAX_LINE)
        try:
            request = json.loads(line)
            if not isinstance(request, dict):
                raise ValueError("expected a JSON object")
            out: dict[str, Any] = {"ok": True, "result": self.server.warm.answer(request)}
        except Exception as exc:  # every failure goes back to the caller, never kills us
            out = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        self.wfile.write(json.dumps(out, ensure_ascii=False, default=str).encode() + b"\n")


class Service(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    """The socket server; ``serve_in_thread`` runs it beside the daemon's scheduler."""

    daemon_threads = True

    def __init__(self, home: Home) -> None:
        self.path = socket_path(home)
        if len(str(self.path).encode()) > 100:
            raise MemtuiError(f"the search socket path {self.path} is too long for a Unix "
                              "socket (over 100 bytes): use a shorter home path")
        with contextlib.suppress(FileNotFoundError):
            if stat.S_ISSOCK(os.lstat(self.path).st_mode):
                self.path.unlink()  # a socket left by a daemon that died
        self.warm = Warm(home)
        old = os.umask(0o177)
        try:
            super().__init__(str(self.path), _Handler)
        finally:
            os.umask(old)
        os.chmod(self.path, 0o600)

    def serve_in_thread(self) -> threading.Thread:
        thread = threading.Thread(target=self.serve_forever, name="memtui-search-service",
                                  daemon=True)
        thread.start()
        return thread

    def stop(self) -> None:
        self.shutdown()
        self.server_close()
        self.warm.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()
