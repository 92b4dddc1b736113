"""The Streamable HTTP transport, locked down: loopback by default, Host/Origin checks, a token.

- It binds 127.0.0.1 unless told otherwise; any other address needs ``allow_remote`` and
  prints a warning; the wildcard addresses (0.0.0.0, ::) are refused without it.
- DNS rebinding: a request whose Host is not this server's address gets 421, one whose
  Origin is a foreign site gets 403 (checked before anything else, and again by the SDK).
- Every request must carry ``Authorization: Bearer <[mcp] token>`` (401 otherwise,
  compared in constant time); without a token in memtui.toml the server does not start.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from memtui.errors import MemtuiError

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1")
WILDCARDS = ("0.0.0.0", "::", "")


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_bind(host: str, allow_remote: bool) -> str | None:
    """Refuse a non-loopback address without ``allow_remote``; returns a warning to print
    when one is allowed, else None."""
    if is_loopback(host):
        return None
    if not allow_remote:
        what = "every interface" if host in WILDCARDS else host
        raise MemtuiError(f"refusing to serve MCP on {what}: it would expose this agent's memory "
                          "beyond this machine; pass --allow-remote to do it anyway")
    return (f"warning: serving MCP on {host or 'every interface'}: anyone who can reach it and "
            "holds the token can read and change this agent's memory")


def allowed_hosts(host: str, port: int) -> list[str]:
    names = {host, *LOOPBACK_NAMES} if is_loopback(host) else {host}
    out = []
    for name in sorted(names):
        shown = f"[{name}]" if ":" in name else name
        out += [f"{shown}:{port}", shown]
    return out


def allowed_origins(host: str, port: int) -> list[str]:
    return [f"{scheme}://{h}" for h in allowed_hosts(host, port) for scheme in ("http", "https")]


class Guard:
    """ASGI middleware: Host (421), Origin (403), then the bearer token (401)."""

    def __init__(self, app: ASGIApp, *, token: str, hosts: list[str], origins: list[str]):
        if not token:
            raise MemtuiError("the HTTP transport needs a token: set [mcp] token in "
                              "memtui.toml (e.g. the output of: openssl rand -hex 32)")
        self.app = app
        self.token = token.encode()
        self.hosts = {h.lower() for h in hosts}
        self.origins = {o.lower() for o in origins}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        if headers.get("host", "").lower() not in self.hosts:
            await _reply(send, 421, "Misdirected request: unexpected Host header")
            return
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            await _reply(send, 403, "Forbidden: cross-origin request")
            return
        scheme, _, value = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(value.strip().encode(),
                                                                 self.token):
            await _reply(send, 401, "Unauthorized: a valid bearer token is required",
                         [(b"www-authenticate", b'Bearer realm="memtui"')])
            return
        await self.app(scope, receive, send)


async def _reply(send: Send, status: int, text: str,
                 extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *(extra or [])]})
    await send({"type": "http.response.body", "body": body})


def app(server: Any, *, host: str, port: int, token: str) -> ASGIApp:
    """The guarded Starlette app of an MCPServer, served at /mcp."""
    from mcp.server.transport_security import TransportSecuritySettings

    hosts, origins = allowed_hosts(host, port), allowed_origins(host, port)
    security = TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                         allowed_hosts=hosts, allowed_origins=origins)
    inner = server.streamable_http_app(transport_security=security, host=host)
    return Guard(inner, token=token, hosts=hosts, origins=origins)


def serve(server: Any, *, host: str, port: int, token: str, log_level: str = "warning"
          ) -> None:
    """Run the guarded app with uvicorn until interrupted."""
    import uvicorn

    guarded = app(server, host=host, port=port, token=token)
    uvicorn.Server(uvicorn.Config(guarded, host=host, port=port, log_level=log_level,
                                  lifespan="on")).run()
