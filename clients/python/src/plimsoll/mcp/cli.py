"""The command line of plimsoll's MCP server (``python -m plimsoll.mcp``, ``plimsoll-mcp``).

The daemon comes from the environment (``PLIMSOLL_URL``, ``PLIMSOLL_TOKEN``) or ``--url``; the
token is only ever read from the environment, so it never shows in a process list.

Whoever reaches the streamable HTTP endpoint can run code in the sandbox. Every request's
``Host`` and ``Origin`` are checked against an allow-list whatever the bind address
(:mod:`.http_guard`; ``--allow-host`` / ``PLIMSOLL_MCP_ALLOWED_HOSTS`` add names), and with a
token (``PLIMSOLL_MCP_TOKEN`` or ``--token-file``; never a flag's value) every request must
carry ``Authorization: Bearer <token>``. It binds loopback unless ``--allow-non-loopback`` is
given, and a non-loopback bind also needs a token unless ``--allow-no-token`` says otherwise.
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import sys
from typing import List, Optional, Tuple

import anyio  # type: ignore[import-not-found, unused-ignore]

from .http_guard import HttpGuard, allowed_hosts, allowed_origins, check_token_text, is_loopback
from .server import FLOORS, PlimsollMCP


def parse(argv: Optional[List[str]]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m plimsoll.mcp",
        description="plimsoll as an MCP server: run_code, open_session, run_cell, "
                    "close_session, describe.")
    parser.add_argument("--transport", choices=("stdio", "http"), default="stdio",
                        help="stdio (default) or streamable HTTP")
    parser.add_argument("--url", default=None,
                        help="the daemon (default: $PLIMSOLL_URL); the token is $PLIMSOLL_TOKEN")
    parser.add_argument("--floor", choices=FLOORS, default=None,
                        help="minimum isolation (default: $PLIMSOLL_MCP_FLOOR, else container)")
    parser.add_argument("--timeout-ms", type=int, default=None,
                        help="bound on each run (default: the daemon's)")
    parser.add_argument("--host", default="127.0.0.1", help="HTTP: address to bind (loopback)")
    parser.add_argument("--port", type=int, default=8471, help="HTTP: port (0: any free port)")
    parser.add_argument("--path", default="/mcp", help="HTTP: the MCP endpoint's path")
    parser.add_argument("--allow-non-loopback", action="store_true",
                        help="HTTP: allow binding a non-loopback address (needs a token too)")
    parser.add_argument("--allow-host", action="append", default=[], metavar="HOST[:PORT]",
                        help="HTTP: another Host value to answer for, e.g. a proxy's name "
                             "(repeatable; also $PLIMSOLL_MCP_ALLOWED_HOSTS, comma-separated)")
    parser.add_argument("--token-file", default=None,
                        help="HTTP: the bearer token every request must carry, from this file "
                             "(default: $PLIMSOLL_MCP_TOKEN; none: no token asked)")
    parser.add_argument("--allow-no-token", action="store_true",
                        help="HTTP: allow a non-loopback bind without a token")
    parser.add_argument("--ca-file", default=None, help="https daemon: the CAs to trust")
    parser.add_argument("--log-level", default="WARNING",
                        choices=("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"))
    return parser.parse_args(argv)


def main(argv: Optional[List[str]] = None) -> int:
    options = parse(argv)
    url = options.url or os.environ.get("PLIMSOLL_URL", "")
    if not url:
        print("plimsoll-mcp: no daemon: set PLIMSOLL_URL (or pass --url)", file=sys.stderr)
        return 2
    floor = options.floor or os.environ.get("PLIMSOLL_MCP_FLOOR") or None
    if floor is not None and floor not in FLOORS:
        print(f"plimsoll-mcp: PLIMSOLL_MCP_FLOOR must be one of {', '.join(FLOORS)}",
              file=sys.stderr)
        return 2
    token: Optional[str] = None
    if options.transport == "http":
        token, problem = _endpoint_token(options.token_file)
        if problem is None and not is_loopback(options.host):
            if not options.allow_non_loopback:
                problem = (f"{options.host} is not a loopback address; whoever reaches the "
                           "endpoint runs code in the sandbox (pass --allow-non-loopback to bind "
                           "it anyway)")
            elif token is None and not options.allow_no_token:
                problem = (f"{options.host} is not a loopback address and no token is set: set "
                           "PLIMSOLL_MCP_TOKEN or --token-file (or pass --allow-no-token)")
        if problem is not None:
            print(f"plimsoll-mcp: {problem}", file=sys.stderr)
            return 2
    try:
        app = PlimsollMCP(url, floor=floor, timeout_ms=options.timeout_ms,
                          transport=options.transport,
                          log_level=options.log_level, ca_file=options.ca_file)
    except Exception as error:  # a bad URL or option: say which, never the token
        print(f"plimsoll-mcp: {error}", file=sys.stderr)
        return 2
    try:
        if options.transport == "stdio":
            anyio.run(_serve_stdio, app)
        else:
            names = [*options.allow_host,
                     *os.environ.get("PLIMSOLL_MCP_ALLOWED_HOSTS", "").split(",")]
            _serve_http(app, options.host, options.port, options.path,
                        names=[name.strip() for name in names if name.strip()], token=token)
    finally:
        app.close()
    return 0


async def _serve_stdio(app: PlimsollMCP) -> None:
    """Serves one MCP session on stdin/stdout until EOF, SIGTERM or SIGINT."""
    async with anyio.create_task_group() as group:
        async def stop_on_signal() -> None:
            with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                async for _ in signals:
                    group.cancel_scope.cancel()
                    return

        group.start_soon(stop_on_signal)
        await app.server.run_stdio_async()
        group.cancel_scope.cancel()


def _endpoint_token(token_file: Optional[str]) -> Tuple[Optional[str], Optional[str]]:
    """(the endpoint's bearer token or None, why it is unusable or None): ``--token-file``, else
    ``$PLIMSOLL_MCP_TOKEN``. A source that is given but empty is an error, never "no token"."""
    if token_file is not None:
        try:
            with open(token_file, encoding="utf-8") as handle:
                token = handle.read().strip()
        except (OSError, UnicodeDecodeError) as error:
            return None, f"cannot read --token-file: {error.__class__.__name__}"
        source = "--token-file"
    elif "PLIMSOLL_MCP_TOKEN" in os.environ:
        token, source = os.environ["PLIMSOLL_MCP_TOKEN"].strip(), "PLIMSOLL_MCP_TOKEN"
    else:
        return None, None
    if not token:
        return None, f"{source} is empty"
    problem = check_token_text(token)
    return (None, f"{source}: {problem}") if problem else (token, None)


def _serve_http(app: PlimsollMCP, host: str, port: int, path: str, *, names: List[str],
                token: Optional[str]) -> None:
    """Serves streamable HTTP until SIGTERM or SIGINT; prints the endpoint first (stderr).

    The listener is bound first, so the allow-lists name the port actually bound (``--port 0``).
    """
    import uvicorn  # type: ignore[import-not-found, unused-ignore]
    from mcp.server.transport_security import (  # type: ignore[import-not-found, unused-ignore]
        TransportSecuritySettings)

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(128)
    bound = listener.getsockname()[1]
    hosts, origins = allowed_hosts(host, bound, names), allowed_origins(host, bound, names)
    # The SDK's own check gets the same exact lists (its default, for three loopback names
    # only, allows any port); ours runs first, on every path.
    starlette = app.server.streamable_http_app(
        streamable_http_path=path, host=host,
        transport_security=TransportSecuritySettings(
            enable_dns_rebinding_protection=True, allowed_hosts=sorted(hosts),
            allowed_origins=sorted(origins)))
    guarded = HttpGuard(starlette, hosts=hosts, origins=origins, token=token)
    shown = f"[{host}]" if ":" in host else host
    print(f"plimsoll-mcp: serving http://{shown}:{bound}{path}", file=sys.stderr, flush=True)
    config = uvicorn.Config(guarded, log_level=app.log_level.lower(), lifespan="on")
    # uvicorn shuts down gracefully on SIGTERM/SIGINT (the SDK's session manager ends every MCP
    # session, and with it their sandbox sessions), then raises the signal again for the
    # handler it found: let that be one that returns, so main() closes what is left and exits 0.
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: None)
    uvicorn.Server(config).run(sockets=[listener])
