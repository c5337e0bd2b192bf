"""The command line of plimsoll's MCP server (``python -m plimsoll.mcp``, ``plimsoll-mcp``).

The daemon comes from the environment (``PLIMSOLL_URL``, ``PLIMSOLL_TOKEN``) or ``--url``; the
token is only ever read from the environment, so it never shows in a process list. Streamable
HTTP binds loopback unless ``--allow-non-loopback`` is given: the endpoint has no authentication
of its own, and whoever reaches it can run code in the sandbox.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import signal
import socket
import sys
from typing import List, Optional

import anyio  # type: ignore[import-not-found, unused-ignore]

from .server import FLOORS, PlimsollMCP

LOOPBACK_NAMES = ("localhost",)


def _is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


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
                        help="HTTP: allow binding a non-loopback address")
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
    if options.transport == "http" and not (_is_loopback(options.host)
                                            or options.allow_non_loopback):
        print(f"plimsoll-mcp: {options.host} is not a loopback address; the MCP endpoint has no "
              "authentication of its own (pass --allow-non-loopback to bind it anyway)",
              file=sys.stderr)
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
            _serve_http(app, options.host, options.port, options.path)
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


def _serve_http(app: PlimsollMCP, host: str, port: int, path: str) -> None:
    """Serves streamable HTTP until SIGTERM or SIGINT; prints the endpoint first (stderr)."""
    import uvicorn  # type: ignore[import-not-found, unused-ignore]

    starlette = app.server.streamable_http_app(streamable_http_path=path, host=host)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind((host, port))
    listener.listen(128)
    bound = listener.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(f"plimsoll-mcp: serving http://{shown}:{bound}{path}", file=sys.stderr, flush=True)
    config = uvicorn.Config(starlette, log_level=app.log_level.lower(), lifespan="on")
    # uvicorn shuts down gracefully on SIGTERM/SIGINT (the SDK's session manager ends every MCP
    # session, and with it their sandbox sessions), then raises the signal again for the
    # handler it found: let that be one that returns, so main() closes what is left and exits 0.
    for number in (signal.SIGTERM, signal.SIGINT):
        signal.signal(number, lambda *_: None)
    uvicorn.Server(config).run(sockets=[listener])
