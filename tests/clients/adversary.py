#!/usr/bin/env python3
"""The adversarial proxy of the client conformance suite (tests/clients/README.md).

It stands between a client and a real plimsolld and changes answers the way an attacker on the
path could: drops the echo, swaps answers, changes one byte of stdout, lowers the tier (and, since
the record's digests are plain SHA-256, recomputes them so that they all match), replays an old
session answer, or sends a body of 10 GiB. The first path segment picks the mode; a second
segment that is not an API route is a key that scopes the mode's state (the previous answer).
One mode changes nothing: `record/KEY` passes every exchange through and appends it (method,
route, request and answer bodies) as a JSON line to RECORD_DIR/KEY.jsonl, for the replay pages
of the agent integrations (tests/clients/examples.py).

    adversary.py --upstream 127.0.0.1:PORT [--listen 127.0.0.1:0] [--record-dir DIR]

prints "adversary: serving 127.0.0.1:PORT" as its first line, then serves until SIGTERM.
Standard library only; the digests come from tests/records/digest.py.
"""
import argparse
import http.client
import http.server
import json
import os
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "records"))
import digest  # noqa: E402  (tests/records/digest.py)

MODES = ("pass", "record", "drop_echo", "swap", "flip_stdout", "lower_tier", "replay_session", "huge_body",
         "huge_chunked", "refuse_isolation")
API_ROOTS = ("v1", "healthz", "readyz")
ECHO = "Plimsoll-Request-Id"
LOWER = {"vm": "kernel", "kernel": "container", "container": "process"}
HUGE_BYTES = 10 * 1024 ** 3
HUGE_SECONDS = 60  # a client that never hangs up is cut off after this


class Answer:
    """One upstream answer, as the proxy will send it on."""

    def __init__(self, status, reason, headers, body):
        self.status = status
        self.reason = reason
        self.headers = headers  # list of (name, value), hop-by-hop headers removed
        self.body = body

    def header(self, name):
        return next((v for k, v in self.headers if k.lower() == name.lower()), None)

    def without(self, name):
        return [(k, v) for k, v in self.headers if k.lower() != name.lower()]

    def with_echo(self, request_id):
        """This answer as if it were for `request_id`: the header and an error body's field."""
        body = self.body
        try:
            document = json.loads(body)
        except ValueError:
            document = None
        if isinstance(document, dict) and isinstance(document.get("error"), dict) \
                and "request_id" in document["error"]:
            document["error"]["request_id"] = request_id
            body = json.dumps(document).encode()
        headers = self.without(ECHO) + ([(ECHO, request_id)] if request_id else [])
        return Answer(self.status, self.reason, headers, body)


def split_path(path):
    """'/swap/key/v1/runs' -> ('swap', 'swap/key', '/v1/runs')."""
    parts = path.lstrip("/").split("/")
    mode = parts[0]
    key = mode
    rest = parts[1:]
    if rest and rest[0].split("?")[0] not in API_ROOTS:
        key = f"{mode}/{rest[0]}"
        rest = rest[1:]
    return mode, key, "/" + "/".join(rest)


class State:
    def __init__(self, record_dir=None):
        self.lock = threading.Lock()
        self.previous = {}  # key -> Answer
        self.record_dir = record_dir

    def record(self, key, method, path, body, answer):
        """Appends one exchange to RECORD_DIR/NAME.jsonl (key "record/NAME"); False if it cannot."""
        name = key.partition("/")[2]
        if not self.record_dir or not name or not all(c.isalnum() or c in "._-" for c in name):
            return False
        line = {"method": method, "path": path, "status": answer.status,
                "request": decoded(body), "answer": decoded(answer.body)}
        with self.lock, open(os.path.join(self.record_dir, name + ".jsonl"), "a") as out:
            out.write(json.dumps(line) + "\n")
        return True


def decoded(body):
    """A body as JSON when it is JSON, else as text (None when empty)."""
    if not body:
        return None
    try:
        return json.loads(body)
    except ValueError:
        return body.decode("utf-8", "replace")


def lower_tier(answer):
    """The answer one tier lower, with result_sha256 and record_sha256 recomputed.

    Every 200 answer that states a tier is lowered: a single run's, each call of a session (a
    cell, a snippet, a project) and a session's state. A session's open (201) passes as it is,
    so the session is opened at its floor and only what follows is lowered: the client must hold
    every answer of the session to the floor it was opened with."""
    try:
        result = json.loads(answer.body)
    except ValueError:
        return answer
    if answer.status != 200 or not isinstance(result, dict) or result.get("isolation") not in LOWER:
        return answer
    lowered = LOWER[result["isolation"]]
    result["isolation"] = lowered
    record = result.get("record")
    if not isinstance(record, dict):  # a session's state: a tier and no record
        return Answer(answer.status, answer.reason, answer.headers, json.dumps(result).encode())
    record["isolation"] = lowered
    record["result_sha256"] = digest.result_digest({k: v for k, v in result.items() if k != "record"})
    record["record_sha256"] = digest.record_digest(record)
    return Answer(answer.status, answer.reason, answer.headers, json.dumps(result).encode())


def flip_stdout(answer):
    try:
        result = json.loads(answer.body)
    except ValueError:
        return answer
    stdout = result.get("stdout") if isinstance(result, dict) else None
    if answer.status != 200 or not isinstance(stdout, str) or not stdout:
        return answer
    first = stdout[0]
    flipped = chr(ord(first) ^ 1) if ord(first) < 0x80 else "x"
    result["stdout"] = flipped + stdout[1:]
    return Answer(answer.status, answer.reason, answer.headers, json.dumps(result).encode())


def refusal(request_id):
    body = {"error": {"code": "failed_precondition",
                      "message": "The adversary says: below the floor.",
                      "not_dispatched": "isolation"}}
    if request_id:
        body["error"]["request_id"] = request_id
    headers = [("Content-Type", "application/json"), ("Plimsoll-Not-Dispatched", "isolation")]
    if request_id:
        headers.append((ECHO, request_id))
    return Answer(409, "Conflict", headers, json.dumps(body).encode())


def make_handler(upstream, state):
    host, port = upstream.rsplit(":", 1)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "adversary"

        def log_message(self, *_):
            pass

        def do_GET(self):
            self.proxy()

        def do_POST(self):
            self.proxy()

        def do_DELETE(self):
            self.proxy()

        def forward(self, path, body):
            connection = http.client.HTTPConnection(host, int(port), timeout=600)
            try:
                headers = {k: v for k, v in self.headers.items()
                           if k.lower() not in ("host", "connection", "keep-alive", "content-length",
                                                "transfer-encoding")}
                connection.request(self.command, path, body=body, headers=headers)
                response = connection.getresponse()
                data = response.read()
                kept = [(k, v) for k, v in response.getheaders()
                        if k.lower() not in ("connection", "keep-alive", "content-length",
                                             "transfer-encoding")]
                return Answer(response.status, response.reason, kept, data)
            finally:
                connection.close()

        def proxy(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else None
            mode, key, path = split_path(self.path)
            request_id = self.headers.get(ECHO)
            if mode not in MODES:
                self.send(Answer(404, "Not Found", [("Content-Type", "text/plain")],
                                 f"adversary: unknown mode {mode!r}\n".encode()))
                return
            if mode in ("huge_body", "huge_chunked"):
                self.huge(request_id, chunked=mode == "huge_chunked")
                return
            if mode == "refuse_isolation" and path.startswith("/v1/") and self.command == "POST":
                self.send(refusal(request_id))
                return
            answer = self.forward(path, body)
            if mode == "record" and not state.record(key, self.command, path, body, answer):
                answer = Answer(500, "Internal Server Error", [("Content-Type", "text/plain")],
                                f"adversary: cannot record {key!r} (--record-dir, a plain name)\n"
                                .encode())
            if mode == "drop_echo":
                answer = answer.with_echo(None)
            elif mode == "flip_stdout":
                answer = flip_stdout(answer)
            elif mode == "lower_tier":
                answer = lower_tier(answer)
            elif mode == "swap" or (mode == "replay_session" and self.command == "POST"
                                    and path.startswith("/v1/sessions/") and path.endswith("/runs")):
                with state.lock:
                    earlier = state.previous.get(key)
                    if mode == "swap" or earlier is None:
                        state.previous[key] = answer
                if earlier is not None:
                    answer = earlier.with_echo(request_id)
            self.send(answer)

        def send(self, answer):
            self.send_response(answer.status, answer.reason)
            for name, value in answer.headers:
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(answer.body)))
            self.end_headers()
            self.wfile.write(answer.body)

        def huge(self, request_id, chunked):
            self.close_connection = True
            self.send_response(200, "OK")
            self.send_header("Content-Type", "application/json")
            if request_id:
                self.send_header(ECHO, request_id)
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            else:
                self.send_header("Content-Length", str(HUGE_BYTES))
            self.send_header("Connection", "close")
            self.end_headers()
            block = b'{"stdout":"' + b"A" * (1 << 20)
            sent, deadline = 0, time.monotonic() + HUGE_SECONDS
            try:
                while sent < HUGE_BYTES and time.monotonic() < deadline:
                    piece = block[: min(len(block), HUGE_BYTES - sent)]
                    if chunked:
                        self.wfile.write(b"%x\r\n" % len(piece) + piece + b"\r\n")
                    else:
                        self.wfile.write(piece)
                    sent += len(piece)
            except (BrokenPipeError, ConnectionResetError):
                pass

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--upstream", required=True, help="HOST:PORT of the daemon")
    parser.add_argument("--listen", default="127.0.0.1:0")
    parser.add_argument("--record-dir", help="where mode `record` writes its exchanges")
    options = parser.parse_args()
    host, port = options.listen.rsplit(":", 1)
    server = http.server.ThreadingHTTPServer((host, int(port)),
                                             make_handler(options.upstream,
                                                          State(options.record_dir)))
    server.daemon_threads = True
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
    print(f"adversary: serving {host}:{server.server_address[1]}", flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
