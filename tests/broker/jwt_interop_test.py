#!/usr/bin/env python3
"""The broker's per-run JWT checked by an independent implementation (PyJWT), end to end.

A real upstream (http.server on loopback) records the Authorization header it receives; guest
JavaScript calls host.get through `plimsoll run --grant minted` (embedded provider, in process);
PyJWT then verifies the token the upstream got: HS256 under the profile's secret, the audience,
sub = the caller ("local"), scope, a 128-bit hex jti, exp = iat + min(ttl, run budget + 5 s). The
token appears nowhere in what the run answered, and a wrong secret or audience fails verification.

    jwt_interop_test.py PLIMSOLL_BINARY
"""
import http.server
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import threading
import unittest

import jwt  # PyJWT (Debian's python3-jwt)

PLIMSOLL = sys.argv.pop(1) if len(sys.argv) > 1 else "plimsoll"
SECRET = secrets.token_hex(32)
AUDIENCE = "inventory-api"
RECEIVED = []


class Upstream(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the standard library's name)
        RECEIVED.append(self.headers.get("Authorization", ""))
        body = b'{"id": 1}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class JwtInteropTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
        threading.Thread(target=cls.server.serve_forever, daemon=True).start()
        cls.scratch = tempfile.TemporaryDirectory(prefix="broker-jwt-test-")
        cls.grants = os.path.join(cls.scratch.name, "grants.yaml")
        with open(cls.grants, "w") as out:
            out.write(f"""version: 1
profiles:
  minted:
    base_url: http://127.0.0.1:{cls.server.server_address[1]}
    allow: ["GET /items/*"]
    scopes: [inventory.read, inventory.reserve]
    allowed_callers: [local]
    token: {{source: jwt, secret_env: MINTED_SECRET, audience: {AUDIENCE}, ttl_seconds: 120}}
""")

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.scratch.cleanup()

    def run_granted(self, timeout_ms):
        RECEIVED.clear()
        done = subprocess.run(
            [PLIMSOLL, "run", "--provider", "embedded", "--grant", "minted", "--grants",
             self.grants, "--timeout", str(timeout_ms), "--json", "-e",
             "const a = host.get('/items/1'); console.log(a.status)"],
            capture_output=True, text=True, timeout=120,
            env=dict(os.environ, MINTED_SECRET=SECRET))
        self.assertEqual(done.returncode, 0, done.stdout + done.stderr)
        result = json.loads(done.stdout)
        self.assertEqual(result["stdout"], "200\n")
        self.assertEqual(len(RECEIVED), 1)
        scheme, _, token = RECEIVED[0].partition(" ")
        self.assertEqual(scheme, "Bearer")
        self.assertNotIn(token, done.stdout + done.stderr)
        self.assertNotIn(SECRET, done.stdout + done.stderr)
        return token

    def test_pyjwt_verifies_the_token_and_its_claims(self):
        token = self.run_granted(timeout_ms=3000)
        self.assertEqual(jwt.get_unverified_header(token), {"alg": "HS256", "typ": "JWT"})
        claims = jwt.decode(token, SECRET, algorithms=["HS256"], audience=AUDIENCE,
                            options={"require": ["exp", "iat", "sub", "aud", "jti"]})
        self.assertEqual(claims["sub"], "local")
        self.assertEqual(claims["aud"], AUDIENCE)
        self.assertEqual(claims["scope"], "inventory.read inventory.reserve")
        self.assertRegex(claims["jti"], r"^[0-9a-f]{32}$")
        # min(ttl 120 s, run budget 3 s + 5 s)
        self.assertEqual(claims["exp"] - claims["iat"], 8)

    def test_the_ttl_bounds_a_long_run_and_every_run_gets_a_fresh_jti(self):
        first = jwt.decode(self.run_granted(timeout_ms=30000), SECRET, algorithms=["HS256"],
                           audience=AUDIENCE)
        second = jwt.decode(self.run_granted(timeout_ms=30000), SECRET, algorithms=["HS256"],
                            audience=AUDIENCE)
        # min(ttl 120 s, run budget 30 s + 5 s)
        self.assertEqual(first["exp"] - first["iat"], 35)
        self.assertNotEqual(first["jti"], second["jti"])

    def test_a_wrong_secret_or_audience_fails(self):
        token = self.run_granted(timeout_ms=3000)
        with self.assertRaises(jwt.InvalidSignatureError):
            jwt.decode(token, SECRET[::-1], algorithms=["HS256"], audience=AUDIENCE)
        with self.assertRaises(jwt.InvalidAudienceError):
            jwt.decode(token, SECRET, algorithms=["HS256"], audience="another-api")
        self.assertTrue(re.fullmatch(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+", token))


if __name__ == "__main__":
    unittest.main()
