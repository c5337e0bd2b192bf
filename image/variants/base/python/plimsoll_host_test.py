#!/usr/bin/env python3
"""plimsoll_host against a stand-in for the agent's relay: a Unix-socket HTTP server that answers
as the relay does (an upstream's answer; `Plimsoll-Refused` when the broker refused)."""
import json
import os
import socketserver
import sys
import tempfile
import threading
import unittest
import http.server

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plimsoll_host  # noqa: E402

SEEN = []


class Relay(http.server.BaseHTTPRequestHandler):
    def handle_one(self, method):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        SEEN.append((method, self.path, self.headers.get("Content-Type"), body))
        if self.path == "/admin":
            payload = json.dumps({"error": "not_allowed", "message": "No allow entry matches."})
            self.answer(403, payload.encode(), {"Plimsoll-Refused": "not_allowed",
                                                "Content-Type": "application/json"})
        elif self.path == "/big":
            self.answer(200, b"\xff" * 10, {"Plimsoll-Truncated": "true",
                                             "Content-Type": "application/octet-stream"})
        else:
            self.answer(200, b'{"id": 7}', {"Content-Type": "application/json"})

    def answer(self, status, body, headers):
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):  # noqa: N802
        self.handle_one("GET")

    def do_POST(self):  # noqa: N802
        self.handle_one("POST")

    def address_string(self):
        return "relay"

    def log_message(self, *args):
        pass


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class PlimsollHostTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.scratch = tempfile.TemporaryDirectory(prefix="host-module-test-")
        cls.path = os.path.join(cls.scratch.name, "api.sock")
        cls.server = UnixServer(cls.path, Relay)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        plimsoll_host.SOCKET = cls.path

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()
        cls.scratch.cleanup()

    def setUp(self):
        SEEN.clear()

    def test_get_and_post_answer_with_status_type_and_bytes(self):
        answer = plimsoll_host.get("/items/7")
        self.assertEqual((answer.status, answer.content_type), (200, "application/json"))
        self.assertEqual(answer.json(), {"id": 7})
        made = plimsoll_host.post("/items/7/reservations", {"qty": 2})
        self.assertEqual(made.status, 200)
        self.assertEqual(SEEN[1], ("POST", "/items/7/reservations", "application/json",
                                   b'{"qty":2}'))
        plimsoll_host.post("/notes", "text", content_type="text/plain")
        self.assertEqual(SEEN[2][2:], ("text/plain", b"text"))

    def test_a_refusal_raises_with_the_brokers_code_and_message(self):
        with self.assertRaises(plimsoll_host.Refused) as caught:
            plimsoll_host.get("/admin")
        self.assertEqual(caught.exception.code, "not_allowed")
        self.assertEqual(str(caught.exception), "No allow entry matches.")

    def test_a_cut_body_is_flagged_and_kept_as_bytes(self):
        answer = plimsoll_host.get("/big")
        self.assertTrue(answer.truncated)
        self.assertEqual(answer.body, b"\xff" * 10)

    def test_no_socket_means_no_grant(self):
        saved = plimsoll_host.SOCKET
        plimsoll_host.SOCKET = os.path.join(self.scratch.name, "absent.sock")
        try:
            with self.assertRaises(plimsoll_host.NoGrant):
                plimsoll_host.get("/items/1")
        finally:
            plimsoll_host.SOCKET = saved


if __name__ == "__main__":
    unittest.main()
