"""The operator's API behind a granted daemon's broker, for the tests that start a real plimsolld
with --grants (tests/clients/harness.py, tests/integration/attest_cli_test.py): a loopback HTTP
server and the grants file whose profile `inventory` points at it."""

import http.server
import json
import os
import threading


class InventoryUpstream:
    """The operator's API behind the granted daemon's broker: a loopback HTTP server that answers
    GET /items (three items) and GET /items/<id>, and records the Authorization header of every
    request it received (the clients' grant tests never see the token; this checks it arrived)."""

    def __init__(self):
        self.authorizations = []
        upstream = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                upstream.authorizations.append(self.headers.get("Authorization", ""))
                if self.path == "/items":
                    body = b'[{"id":"1"},{"id":"2"},{"id":"3"}]'
                else:
                    body = json.dumps({"id": self.path.rsplit("/", 1)[-1]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *_):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.origin = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def calls(self):
        """How many requests it has received."""
        return len(self.authorizations)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *_):
        self.server.shutdown()
        self.server.server_close()
        return False


def grants_file(directory, origin):
    """A grants file whose profile `inventory` the --dev caller may use, in sessions too."""
    path = os.path.join(directory, "grants.yaml")
    with open(path, "w") as out:
        out.write(f"""version: 1
profiles:
  inventory:
    base_url: {origin}
    allow: ["GET /items", "GET /items/*"]
    allowed_callers: [dev]
    token: {{source: static, env: PLIMSOLL_TEST_INVENTORY_TOKEN}}
    max_calls: 20
    allow_in_sessions: true
    batch_of: {{"GET /items/*": "GET /items"}}
""")
    return path
