"""plimsoll's Python MCP server, driven by the TypeScript MCP SDK's own Client as a real peer.

Run by clients/python/integrations/mcp/run-mcp-tests (it sets PLIMSOLL_MCP_PEER_DIR: peer/ with
its node_modules installed, and PLIMSOLL_MCP_PYTHON: a venv with the built wheel and the pinned
MCP SDK). Over stdio (the peer spawns ``python -m plimsoll.mcp``) and streamable HTTP (the test
starts the server on a free loopback port), against the harness's real daemons: embedded (tier
process) and linux (tier container: python, sessions). The daemon is reached through a small
recording proxy, so the test learns the daemon's session IDs (which the server never shows the
model) and asks the daemon itself whether each session is still open.
"""

from __future__ import annotations

import http.client
import json
import os
import secrets
import signal
import subprocess
import threading
import time
import urllib.parse
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

import pytest

from conftest import linux_url, need, under_harness

PEER_DIR = os.environ.get("PLIMSOLL_MCP_PEER_DIR", "")
PYTHON = os.environ.get("PLIMSOLL_MCP_PYTHON", "")
if not PEER_DIR or not PYTHON:
    if under_harness():
        raise RuntimeError("PLIMSOLL_MCP_PEER_DIR / PLIMSOLL_MCP_PYTHON are not set: "
                           "clients/python/integrations/mcp/run-mcp-tests sets them")
    pytest.skip("the MCP peer tests run through clients/python/integrations/mcp/run-mcp-tests",
                allow_module_level=True)

TRANSPORTS = ("stdio", "http")
TOOLS = {"run_code", "open_session", "run_cell", "close_session", "describe"}


def embedded_url() -> str:
    return need("PLIMSOLL_TEST_EMBEDDED_URL")



# -- the daemon, seen through a recording proxy ------------------------------------------------


class RecordingProxy:
    """Forwards every call to the daemon unchanged and notes the session IDs it opened."""

    def __init__(self, upstream: str) -> None:
        parsed = urllib.parse.urlsplit(upstream)
        self.upstream_host = parsed.hostname or "127.0.0.1"
        self.upstream_port = parsed.port or 80
        self.session_ids: List[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("host", "connection", "keep-alive")}
                upstream = http.client.HTTPConnection(proxy.upstream_host, proxy.upstream_port,
                                                      timeout=120)
                try:
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    data = answer.read()
                    answer_headers = answer.getheaders()
                    status = answer.status
                finally:
                    upstream.close()
                if self.command == "POST" and self.path == "/v1/sessions" and status in (200, 201):
                    proxy.session_ids.append(str(json.loads(data)["session_id"]))
                self.send_response(status)
                for key, value in answer_headers:
                    if key.lower() not in ("content-length", "transfer-encoding", "connection",
                                           "keep-alive"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_DELETE = forward

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> "RecordingProxy":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._server.shutdown()
        self._server.server_close()

    def session_status(self, session_id: str) -> Tuple[int, str]:
        """``GET /v1/sessions/{id}`` straight to the daemon: (HTTP status, error code or "")."""
        connection = http.client.HTTPConnection(self.upstream_host, self.upstream_port,
                                                timeout=30)
        try:
            connection.request("GET", f"/v1/sessions/{session_id}",
                               headers={"Plimsoll-Request-Id": secrets.token_hex(16)})
            answer = connection.getresponse()
            body = json.loads(answer.read() or b"{}")
        finally:
            connection.close()
        error = body.get("error") if isinstance(body, dict) else None
        return answer.status, str(error.get("code", "")) if isinstance(error, dict) else ""

    def wait_closed(self, session_id: str, within: float = 10.0) -> Tuple[int, str]:
        deadline = time.monotonic() + within
        while True:
            status = self.session_status(session_id)
            if status[0] == 404 or time.monotonic() > deadline:
                return status
            time.sleep(0.1)


# -- the server and the peer -------------------------------------------------------------------


def server_env(url: str, floor: Optional[str]) -> Dict[str, str]:
    env = {"PLIMSOLL_URL": url, "PYTHONDONTWRITEBYTECODE": "1"}
    if floor:
        env["PLIMSOLL_MCP_FLOOR"] = floor
    return env


@contextmanager
def http_server(url: str, floor: Optional[str]) -> Iterator[Tuple[str, "subprocess.Popen[str]"]]:
    """``python -m plimsoll.mcp --transport http --port 0``; yields its endpoint and process."""
    env = {k: v for k, v in os.environ.items() if k != "PLIMSOLL_MCP_FLOOR"}
    env.update(server_env(url, floor))
    process = subprocess.Popen([PYTHON, "-m", "plimsoll.mcp", "--transport", "http", "--port", "0"],
                               env=env, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert first.startswith("plimsoll-mcp: serving http://127.0.0.1:"), first
        endpoint = first.split("serving ", 1)[1].strip()
        threading.Thread(target=process.stderr.read, daemon=True).start()  # keep it drained
        yield endpoint, process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def peer(scenario: str, transport: str, url: str, floor: Optional[str] = None,
         endpoint: str = "", on_ready: Optional[Callable[[], None]] = None,
         token: str = "") -> Dict[str, Any]:
    """Runs ``node peer.mjs SCENARIO`` and returns its report (over HTTP with ``token`` as its
    bearer token, when given)."""
    env = dict(os.environ)
    env.pop("PLIMSOLL_MCP_FLOOR", None)
    env.pop("PEER_HTTP_TOKEN", None)
    env.update({"PEER_TRANSPORT": transport, "PEER_PYTHON": PYTHON,
                "PEER_SERVER_ENV": json.dumps(server_env(url, floor)), "PEER_HTTP_URL": endpoint})
    if token:
        env["PEER_HTTP_TOKEN"] = token
    process = subprocess.Popen(["node", os.path.join(PEER_DIR, "peer.mjs"), scenario],
                               cwd=PEER_DIR, env=env, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdin is not None and process.stdout is not None
    report: Optional[Dict[str, Any]] = None
    try:
        for line in process.stdout:
            message = json.loads(line)
            if message.get("ready"):
                if on_ready is not None:
                    on_ready()
                process.stdin.write("go\n")
                process.stdin.close()
            elif "report" in message:
                report = message["report"]
        process.wait(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    errors = process.stderr.read() if process.stderr is not None else ""
    assert process.returncode == 0 and report is not None, errors
    return report


@contextmanager
def served(transport: str, url: str, floor: Optional[str]) -> Iterator[str]:
    """The HTTP endpoint of a server started for the test, or "" for stdio (the peer spawns)."""
    if transport == "stdio":
        yield ""
        return
    with http_server(url, floor) as (endpoint, _):
        yield endpoint


def structured(call: Dict[str, Any]) -> Dict[str, Any]:
    assert call["isError"] is False, call
    data = call["structured"]
    assert isinstance(data, dict)
    return data


# -- the tests ---------------------------------------------------------------------------------


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_tools_are_listed_with_their_output_schemas(transport: str) -> None:
    url = embedded_url()
    with served(transport, url, None) as endpoint:
        report = peer("tools", transport, url, endpoint=endpoint)
    assert report["server"]["name"] == "plimsoll"
    tools = {tool["name"]: tool for tool in report["tools"]}
    assert set(tools) == TOOLS
    for tool in tools.values():
        assert tool["outputSchema"]["type"] == "object", tool["name"]
    run = tools["run_code"]["outputSchema"]
    assert {"ran", "summary"} <= set(run["required"])
    for name in ("refused", "exit_code", "timed_out", "stdout", "stdout_truncated", "stderr",
                 "stderr_truncated", "value", "displays", "isolation", "record_sha256",
                 "state_kept", "interpreter_started", "error"):
        assert name in run["properties"], name
    assert {"type": "boolean"} in run["properties"]["ran"]["anyOf"]
    assert tools["run_cell"]["outputSchema"]["properties"] == run["properties"]
    arguments = tools["run_code"]["inputSchema"]
    assert set(arguments["required"]) == {"language", "code"}
    assert {"files", "floor"} <= set(arguments["properties"])
    assert set(tools["run_cell"]["inputSchema"]["required"]) == {"session_id", "language", "code"}
    assert "session_id" in tools["open_session"]["outputSchema"]["properties"]
    assert "ended" in tools["close_session"]["outputSchema"]["properties"]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_run_code_runs_and_a_non_zero_exit_is_a_result(transport: str) -> None:
    url = embedded_url()
    with served(transport, url, "process") as endpoint:
        report = peer("runs", transport, url, floor="process", endpoint=endpoint)
    described = structured(report["describe"])
    assert described["provider"] == "embedded" and described["floor"] == "process"
    assert described["meets_floor"] is True
    ok = structured(report["ok"])
    assert ok["ran"] is True and ok["exit_code"] == 0 and ok["stdout"] == "42\n"
    assert ok["summary"] == "ran: exit 0" and ok["isolation"] == "process"
    assert len(ok["record_sha256"]) == 64 and ok["stdout_truncated"] is False
    assert "state_kept" not in ok
    failed = structured(report["failed"])
    assert failed["ran"] is True and failed["exit_code"] == 1 and "boom" in failed["stderr"]
    # The model may ask for a stronger floor than the operator's: then nothing runs here.
    stronger = structured(report["stronger"])
    assert stronger["ran"] is False and stronger["refused"] == "isolation"
    assert stronger["summary"] == "nothing ran: isolation"
    assert report["bad_language"]["isError"] is True


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_default_floor_container_refuses_the_embedded_daemon(transport: str) -> None:
    url = embedded_url()
    with served(transport, url, None) as endpoint:
        report = peer("refused", transport, url, endpoint=endpoint)
    described = structured(report["describe"])
    assert described["floor"] == "container" and described["meets_floor"] is False
    for name in ("run", "weaker"):  # a weaker floor from the model does not lower the server's
        shaped = structured(report[name])
        assert shaped["ran"] is False and shaped["refused"] == "isolation", name
        assert shaped["summary"] == "nothing ran: isolation"
        assert "exit_code" not in shaped and "stdout" not in shaped
    opened = structured(report["open"])
    assert opened["opened"] is False and opened["refused"] == "isolation"
    assert "session_id" not in opened


@pytest.mark.parametrize("transport", TRANSPORTS)
@pytest.mark.linux
def test_a_session_keeps_state_is_bound_to_its_mcp_session_and_ends_with_it(
        transport: str) -> None:
    url = linux_url()
    with RecordingProxy(url) as proxy, served(transport, proxy.url, None) as endpoint:
        seen: Dict[str, Tuple[int, str]] = {}

        def while_a_is_open() -> None:
            assert len(proxy.session_ids) == 2
            seen["first"] = proxy.session_status(proxy.session_ids[0])
            seen["kept"] = proxy.session_status(proxy.session_ids[1])

        report = peer("sessions", transport, proxy.url, endpoint=endpoint,
                      on_ready=while_a_is_open)
        # The MCP session ended (stdio: EOF; HTTP: DELETE, the server still running).
        kept_after = proxy.wait_closed(proxy.session_ids[1])

    first = structured(report["first"])
    assert first["opened"] is True and first["isolation"] == "container"
    assert first["session_id"] not in proxy.session_ids  # a handle, not the daemon's secret
    cell1, cell2 = structured(report["cell1"]), structured(report["cell2"])
    assert cell1["ran"] is True and cell1["stdout"] == "set\n" and cell1["displays"] == []
    assert cell2["ran"] is True and cell2["value"] == "42" and cell2["state_kept"] is True
    assert cell2["interpreter_started"] is False
    assert structured(report["file"])["stdout"] == "from the peer\n"
    closed = structured(report["closed"])
    assert closed["closed"] is True and closed["ended"] == "closed" and closed["calls"] == 4
    assert structured(report["closed_again"])["closed"] is False
    after = structured(report["after_close"])
    assert after["ran"] is False and after["error"]["code"] == "not_found"
    # Another MCP session can neither use nor close this one's session.
    from_b = structured(report["from_b_cell"])
    assert from_b["ran"] is False and from_b["refused"] == "request"
    assert from_b["error"]["code"] == "not_found"
    assert structured(report["from_b_close"])["closed"] is False
    still = structured(report["a_still"])
    assert still["ran"] is True and still["value"] == "42" and still["state_kept"] is True
    # Through the daemon: the closed one is gone, the kept one was open until A ended.
    assert seen["first"] == (404, "not_found")
    assert seen["kept"][0] == 200
    assert kept_after == (404, "not_found")


@pytest.mark.linux
def test_stopping_the_http_server_closes_the_sessions_left_open() -> None:
    url = linux_url()
    with RecordingProxy(url) as proxy:
        with http_server(proxy.url, None) as (endpoint, process):
            report = peer("leave_open", "http", proxy.url, endpoint=endpoint)
            assert structured(report["opened"])["opened"] is True
            assert len(proxy.session_ids) == 1
            assert proxy.session_status(proxy.session_ids[0])[0] == 200
            process.send_signal(signal.SIGTERM)
            assert process.wait(timeout=20) == 0
        assert proxy.session_status(proxy.session_ids[0]) == (404, "not_found")
