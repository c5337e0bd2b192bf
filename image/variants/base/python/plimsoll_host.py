"""Call the operator's APIs from a granted plimsoll run (SPEC §8, docs/grants.md).

The sandbox has no network. A run that names a grant profile has one way out: the agent's relay
on the Unix socket /run/plimsoll/api.sock, which hands each call to plimsoll's broker outside the
sandbox. The broker checks the call against the profile's allow list, counts it, attaches the
credential (which never enters the sandbox) and calls the API.

    import plimsoll_host
    answer = plimsoll_host.get("/items/42")
    item = answer.json()
    plimsoll_host.post("/items/42/reservations", {"qty": 2})

`get` and `post` return an `Answer` (status, content_type, body as bytes, truncated) for any
status the API gave. A call the broker refused raises `Refused` (its `code` says why:
not_allowed, bad_path, max_calls, ...); a run without a grant raises `NoGrant`. Any HTTP client
works on the socket as well, e.g. `curl --unix-socket /run/plimsoll/api.sock http://x/items/42`.
"""

import http.client
import json as _json
import os
import socket

__all__ = ["Answer", "NoGrant", "Refused", "call", "get", "post", "SOCKET"]

SOCKET = "/run/plimsoll/api.sock"
TIMEOUT_S = 60.0


class NoGrant(RuntimeError):
    """This run has no grant: there is no way to the operator's APIs."""


class Refused(RuntimeError):
    """The broker refused the call (or could not complete it); nothing or no answer came back."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class Answer:
    """What the API answered: any status, its content type and body (bytes)."""

    def __init__(self, status, content_type, body, truncated):
        self.status = status
        self.content_type = content_type
        self.body = body
        self.truncated = truncated

    def text(self):
        return self.body.decode("utf-8", errors="replace")

    def json(self):
        return _json.loads(self.body)

    def __repr__(self):
        return (f"Answer(status={self.status}, content_type={self.content_type!r}, "
                f"{len(self.body)} bytes{', truncated' if self.truncated else ''})")


class _Connection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("plimsoll", timeout=TIMEOUT_S)
        self._path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self._path)


def call(method, path, body=None, content_type=None):
    """One call through the broker. A `body` that is not bytes or str is sent as JSON."""
    if not os.path.exists(SOCKET):
        raise NoGrant("This run has no grant: host calls are refused (ask for a grant profile "
                      "to call the operator's APIs).")
    headers = {}
    if body is not None and not isinstance(body, (bytes, str)):
        body = _json.dumps(body, separators=(",", ":"))
        content_type = content_type or "application/json"
    if isinstance(body, str):
        body = body.encode("utf-8")
    if content_type:
        headers["Content-Type"] = content_type
    connection = _Connection(SOCKET)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        data = response.read()
    except OSError as error:
        raise Refused("relay", f"The host call failed on the relay's socket: {error}.") from None
    finally:
        connection.close()
    refused = response.getheader("Plimsoll-Refused")
    if refused:
        try:
            message = _json.loads(data).get("message") or refused
        except (ValueError, AttributeError):
            message = f"The broker refused the call ({refused})."
        raise Refused(refused, message)
    return Answer(response.status, response.getheader("Content-Type", ""), data,
                  response.getheader("Plimsoll-Truncated") == "true")


def get(path):
    return call("GET", path)


def post(path, body=None, content_type=None):
    return call("POST", path, body, content_type)
