"""The MCP server's streamable HTTP front door (clients/python/src/plimsoll/mcp/http_guard.py).

Whoever reaches the endpoint runs code in the sandbox, so every request's ``Host`` and ``Origin``
are checked against an allow-list whatever the loopback address bound (a DNS-rebinding page
reaches ``127.0.0.2`` under its own name just as it reaches ``127.0.0.1``), and an operator's
token is asked of every request. Each case is a raw HTTP ``initialize`` against
``python -m plimsoll.mcp --transport http`` (the server started as an operator would, from the
venv with the built wheel); the right token is also shown to work end to end, through the
TypeScript SDK's own client running code on the embedded daemon. Run by run-mcp-tests, like the
peer tests.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import signal
import subprocess
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Dict, Iterator, List, Optional, Tuple

import pytest

from conftest import need, under_harness

PYTHON = os.environ.get("PLIMSOLL_MCP_PYTHON", "")
if not PYTHON or not os.environ.get("PLIMSOLL_MCP_PEER_DIR"):
    if under_harness():
        raise RuntimeError("PLIMSOLL_MCP_PEER_DIR / PLIMSOLL_MCP_PYTHON are not set: "
                           "clients/python/integrations/mcp/run-mcp-tests sets them")
    pytest.skip("the MCP tests run through clients/python/integrations/mcp/run-mcp-tests",
                allow_module_level=True)

from test_mcp_peer import peer, structured  # noqa: E402  (the same guard above skips both)

INITIALIZE = json.dumps({
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "http-guard-test", "version": "1"}}}).encode()


class Served:
    def __init__(self, bind: str, port: int, path: str) -> None:
        self.bind, self.port, self.path = bind, port, path

    def post(self, host: Optional[str] = None, headers: Optional[Dict[str, str]] = None
             ) -> Tuple[int, Dict[str, str], str]:
        """An ``initialize`` with these headers (``host`` defaults to the bound address)."""
        sent = {"Host": host if host is not None else f"{self.bind}:{self.port}",
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream", **(headers or {})}
        connection = http.client.HTTPConnection(self.bind, self.port, timeout=30)
        try:
            connection.request("POST", self.path, body=INITIALIZE, headers=sent)
            answer = connection.getresponse()
            body = answer.read().decode(errors="replace")
            return answer.status, {k.lower(): v for k, v in answer.getheaders()}, body
        finally:
            connection.close()


def server_env(extra: Optional[Dict[str, str]] = None) -> Dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("PLIMSOLL_MCP_TOKEN", "PLIMSOLL_MCP_ALLOWED_HOSTS", "PLIMSOLL_MCP_FLOOR")}
    env.update({"PLIMSOLL_URL": need("PLIMSOLL_TEST_EMBEDDED_URL"),
                "PYTHONDONTWRITEBYTECODE": "1", **(extra or {})})
    return env


@contextmanager
def serving(bind: str = "127.0.0.1", arguments: Optional[List[str]] = None,
            env: Optional[Dict[str, str]] = None) -> Iterator[Served]:
    """``python -m plimsoll.mcp --transport http --host BIND --port 0 ARGUMENTS``."""
    process = subprocess.Popen(
        [PYTHON, "-m", "plimsoll.mcp", "--transport", "http", "--host", bind, "--port", "0",
         *(arguments or [])], env=server_env(env), stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert first.startswith(f"plimsoll-mcp: serving http://{bind}:"), first
        endpoint = first.split("serving ", 1)[1].strip()
        port = int(endpoint.rsplit(":", 1)[1].split("/", 1)[0])
        threading.Thread(target=process.stderr.read, daemon=True).start()  # keep it drained
        yield Served(bind, port, "/mcp")
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def refused_at_start(arguments: List[str], env: Optional[Dict[str, str]] = None
                     ) -> Tuple[int, str]:
    """Runs the server expecting it to refuse before it binds: (exit status, stderr)."""
    done = subprocess.run([PYTHON, "-m", "plimsoll.mcp", "--transport", "http", "--port", "0",
                           *arguments], env=server_env(env), capture_output=True, text=True,
                          timeout=15)
    return done.returncode, done.stderr


def accepted(answer: Tuple[int, Dict[str, str], str]) -> bool:
    status, _, body = answer
    return status == 200 and '"serverInfo"' in body and '"plimsoll"' in body


# 127.0.0.1 is one of the SDK's three names; 127.0.0.2 is loopback too, and the SDK left it open.
@pytest.mark.parametrize("bind", ["127.0.0.1", "127.0.0.2"])
def test_a_forged_host_is_refused_on_every_loopback_bind(bind: str) -> None:
    with serving(bind) as served:
        port = served.port
        for forged in (f"attacker.example:{port}", f"localhost.attacker.example:{port}",
                       f"{bind}.attacker.example:{port}", "attacker.example",
                       f"{bind}:{port + 1}", f"localhost:{port}@attacker.example", ""):
            status, _, body = served.post(host=forged)
            assert status in (400, 421), (forged, status, body)
        for honest in (f"{bind}:{port}", f"localhost:{port}", f"127.0.0.1:{port}",
                       f"[::1]:{port}", f"LOCALHOST:{port}"):
            assert accepted(served.post(host=honest)), honest


def test_a_forged_origin_is_refused_whatever_the_host() -> None:
    with serving("127.0.0.2") as served:
        port = served.port
        for forged in ("http://attacker.example", f"http://attacker.example:{port}",
                       f"https://127.0.0.2:{port}", f"http://127.0.0.2:{port + 1}", "null",
                       f"http://127.0.0.2:{port}.attacker.example"):
            status, _, body = served.post(headers={"Origin": forged})
            assert status == 403, (forged, status, body)
        for honest in (f"http://127.0.0.2:{port}", f"http://localhost:{port}"):
            assert accepted(served.post(headers={"Origin": honest})), honest


def test_the_operators_names_are_answered_for() -> None:
    with serving("127.0.0.2", ["--allow-host", "mcp.internal"],
                 env={"PLIMSOLL_MCP_ALLOWED_HOSTS": "proxy.internal:9443"}) as served:
        port = served.port
        for host, origin in ((f"mcp.internal:{port}", "https://mcp.internal"),
                             ("mcp.internal", f"http://mcp.internal:{port}"),
                             ("proxy.internal:9443", "https://proxy.internal:9443")):
            assert accepted(served.post(host=host, headers={"Origin": origin})), (host, origin)
        assert served.post(host="proxy.internal")[0] == 421  # a name with a port: that port only


def test_the_bearer_token_is_asked_of_every_request() -> None:
    token = secrets.token_urlsafe(32)
    with serving(env={"PLIMSOLL_MCP_TOKEN": token, "PLIMSOLL_MCP_FLOOR": "process"}) as served:
        missing = served.post()
        assert missing[0] == 401 and missing[1]["www-authenticate"].startswith("Bearer"), missing
        for wrong in (f"Bearer {token}x", f"Bearer {token[:-1]}", f"Basic {token}",
                      f"Bearer {secrets.token_urlsafe(32)}", "Bearer ", token):
            assert served.post(headers={"Authorization": wrong})[0] == 401, wrong
        # A forged Host is refused before the token is even looked at.
        assert served.post(host="attacker.example",
                           headers={"Authorization": f"Bearer {token}"})[0] == 421
        assert accepted(served.post(headers={"Authorization": f"Bearer {token}"}))
        assert accepted(served.post(headers={"Authorization": f"bearer {token}"}))
        # The right token through a real MCP client: tools listed, code run on the daemon.
        endpoint = f"http://127.0.0.1:{served.port}/mcp"
        url = need("PLIMSOLL_TEST_EMBEDDED_URL")
        report = peer("runs", "http", url, floor="process", endpoint=endpoint, token=token)
        ok = structured(report["ok"])
        assert ok["ran"] is True and ok["stdout"] == "42\n"


def test_a_token_file_is_read_and_a_bad_token_stops_the_start(tmp_path: Path) -> None:
    token = secrets.token_hex(24)
    path = str(tmp_path / "mcp-token")
    with open(path, "w") as handle:
        handle.write(token + "\n")
    with serving(arguments=["--token-file", path]) as served:
        assert served.post()[0] == 401
        assert accepted(served.post(headers={"Authorization": f"Bearer {token}"}))
    for env, arguments, why in (({"PLIMSOLL_MCP_TOKEN": ""}, [], "PLIMSOLL_MCP_TOKEN is empty"),
                                ({"PLIMSOLL_MCP_TOKEN": "short"}, [], "shorter than 16"),
                                ({}, ["--token-file", path + ".absent"], "cannot read")):
        status, errors = refused_at_start(arguments, env)
        assert status == 2 and why in errors, (status, errors)


def test_a_non_loopback_bind_needs_a_token() -> None:
    # Refused before anything is bound, so nothing listens on 0.0.0.0 during the test.
    status, errors = refused_at_start(["--host", "0.0.0.0"])
    assert status == 2 and "not a loopback address" in errors and "--allow-non-loopback" in errors
    status, errors = refused_at_start(["--host", "0.0.0.0", "--allow-non-loopback"])
    assert status == 2 and "no token is set" in errors and "--allow-no-token" in errors, errors
