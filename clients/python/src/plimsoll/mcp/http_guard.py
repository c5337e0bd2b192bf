"""The MCP server's HTTP front door: ``Host``, ``Origin`` and the bearer token, checked on every
request before the MCP SDK sees it.

Whoever reaches the endpoint can run code in the sandbox, so a request passes only when

- its one ``Host`` header is on the allow-list (:func:`allowed_hosts`): the bound address and
  port, for a loopback bind ``localhost``, ``127.0.0.1`` and ``[::1]`` with the port, and the
  names the operator added. A DNS-rebinding page reaches a loopback server under its own name
  (``Host: attacker.example:8471``), so this is checked whatever the bind address, never only for
  the SDK's three names;
- its ``Origin``, when it has one, is ``http://`` (or for an operator's name also ``https://``)
  followed by an allowed ``Host`` value: a browser page of any other origin is refused even with
  the right ``Host``;
- when the operator set a token, its one ``Authorization`` header is ``Bearer <token>``, the token
  compared in constant time (the SHA-256 digests of both, compared with
  :func:`hmac.compare_digest`, so neither its content nor its length leaks through timing).

Refusals: 400 (more than one ``Host``), 421 (a ``Host`` not allowed), 403 (an ``Origin`` not
allowed), 401 with ``WWW-Authenticate: Bearer`` (no token, or the wrong one). Only the standard
library: the module is importable without the SDK.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
from typing import Any, Awaitable, Callable, Dict, FrozenSet, Iterable, List, Optional, Tuple

__all__ = ["HttpGuard", "allowed_hosts", "allowed_origins", "is_loopback", "check_token_text"]

Scope = Dict[str, Any]
Receive = Callable[[], Awaitable[Dict[str, Any]]]
Send = Callable[[Dict[str, Any]], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]

LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` serves loopback only (``localhost`` or a loopback address)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_value(host: str) -> str:
    """``host`` as it appears in a ``Host`` header: IPv6 addresses in brackets, lowercase."""
    bare = host.strip("[]")
    try:
        if ipaddress.ip_address(bare).version == 6:
            return f"[{bare}]".lower()
    except ValueError:
        pass
    return host.lower()


def _has_port(value: str) -> bool:
    return value.rsplit("]", 1)[-1].count(":") == 1


def allowed_hosts(bind_host: str, port: int, names: Iterable[str] = ()) -> FrozenSet[str]:
    """Every ``Host`` value the server accepts, lowercase.

    ``bind_host:port``; for a loopback bind also ``localhost``, ``127.0.0.1`` and ``[::1]`` with
    the port; and each of the operator's ``names`` as written, plus with ``:port`` when it names
    none (a proxy in front may forward ``Host: mcp.example`` or ``mcp.example:8471``). On port 80
    a client may leave the port out, so the bare names count too.
    """
    bases = [_host_value(bind_host)]
    if is_loopback(bind_host):
        bases.extend(LOOPBACK_NAMES)
    hosts = {f"{base}:{port}" for base in bases}
    if port == 80:
        hosts.update(bases)
    for name in names:
        value = _host_value(name.strip())
        if not value:
            continue
        hosts.add(value)
        if not _has_port(value):
            hosts.add(f"{value}:{port}")
    return frozenset(hosts)


def allowed_origins(bind_host: str, port: int, names: Iterable[str] = ()) -> FrozenSet[str]:
    """Every ``Origin`` the server accepts: ``http://`` and an allowed ``Host`` value, and for the
    operator's names ``https://`` too (a TLS proxy in front)."""
    own = allowed_hosts(bind_host, port)
    theirs = allowed_hosts(bind_host, port, names) - own
    return frozenset({f"http://{host}" for host in own | theirs}
                     | {f"https://{host}" for host in theirs})


def check_token_text(token: str) -> Optional[str]:
    """Why ``token`` cannot be a bearer token (None when it can): it must be printable ASCII
    without spaces, at least 16 characters."""
    if len(token) < 16:
        return "the MCP token is shorter than 16 characters"
    if not all(33 <= ord(c) <= 126 for c in token):
        return "the MCP token must be printable ASCII without spaces"
    return None


def _digest(text: bytes) -> bytes:
    return hashlib.sha256(text).digest()


class HttpGuard:
    """ASGI middleware in front of the MCP app: the checks of the module docstring."""

    def __init__(self, app: App, *, hosts: Iterable[str], origins: Iterable[str],
                 token: Optional[str] = None) -> None:
        self._app = app
        self._hosts = frozenset(h.lower() for h in hosts)
        self._origins = frozenset(o.lower() for o in origins)
        self._token_digest = _digest(token.encode("ascii")) if token else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope.get("type") not in ("http", "websocket"):
            await self._app(scope, receive, send)  # lifespan
            return
        headers = scope.get("headers") or []
        refusal = self.refusal(headers)
        if refusal is None:
            # Host and Origin are case-insensitive; what passes on is the form checked, so the
            # SDK's own (case-sensitive) check of the same lists agrees with this one.
            lowered = [(name, value.lower() if name.lower() in (b"host", b"origin") else value)
                       for name, value in headers]
            await self._app({**scope, "headers": lowered}, receive, send)
            return
        status, message, extra = refusal
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 1008})
            return
        body = (message + "\n").encode()
        await send({"type": "http.response.start", "status": status,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"),
                                (b"content-length", str(len(body)).encode()), *extra]})
        await send({"type": "http.response.body", "body": body})

    def refusal(self, raw_headers: Iterable[Tuple[bytes, bytes]]
                ) -> Optional[Tuple[int, str, List[Tuple[bytes, bytes]]]]:
        """(status, message, extra headers) when the request is refused, else None."""
        hosts: List[str] = []
        origins: List[str] = []
        authorizations: List[bytes] = []
        for name, value in raw_headers:
            key = name.lower()
            if key == b"host":
                hosts.append(value.decode("latin-1").strip().lower())
            elif key == b"origin":
                origins.append(value.decode("latin-1").strip().lower())
            elif key == b"authorization":
                authorizations.append(value.strip())
        if len(hosts) != 1:
            return 400, "exactly one Host header is required", []
        if hosts[0] not in self._hosts:
            return 421, "this server does not answer for that Host", []
        if any(origin not in self._origins for origin in origins):
            return 403, "requests from that Origin are not allowed", []
        if self._token_digest is not None:
            scheme, _, given = (authorizations[0] if len(authorizations) == 1 else b"").partition(b" ")
            # Both sides hashed first: compare_digest then sees equal lengths, always.
            matches = hmac.compare_digest(_digest(given.strip()), self._token_digest)
            if scheme.lower() != b"bearer" or not matches:
                return 401, "a bearer token is required (Authorization: Bearer ...)", [
                    (b"www-authenticate", b'Bearer realm="plimsoll-mcp"')]
        return None
