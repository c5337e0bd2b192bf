#!/usr/bin/env python3
"""Checks real plimsolld answers against api/openapi.yaml.

Starts the daemon binary (embedded provider, --dev, port 0), sends one request
per documented answer kind, and validates status, headers and body against
the contract: bodies with JSON Schema 2020-12 (OpenAPI 3.1's schema dialect),
the request-ID echo and the Plimsoll-Not-Dispatched mark by hand.

Usage: daemon_openapi_test.py PLIMSOLLD OPENAPI_YAML
Exits 77 (CTest: skipped) when PyYAML or jsonschema is missing.
"""
import json
import os
import secrets
import signal
import subprocess
import sys
import urllib.error
import urllib.request

try:
    import jsonschema
    import yaml
except ImportError as missing:  # pragma: no cover
    print(f"skipped: {missing} (install python3-yaml and python3-jsonschema)")
    sys.exit(77)


def validator_for(document, name):
    schema = dict(document)
    schema["$ref"] = f"#/components/schemas/{name}"
    return jsonschema.Draft202012Validator(schema)


def call(port, method, path, body=None, content_type="application/json"):
    request_id = secrets.token_hex(16)
    data = None if body is None else body.encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, method=method)
    request.add_header("Plimsoll-Request-Id", request_id)
    if data is not None and content_type:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers, response.read(), request_id
    except urllib.error.HTTPError as error:
        return error.code, error.headers, error.read(), request_id


def main():
    binary, contract = sys.argv[1], sys.argv[2]
    with open(contract, encoding="utf-8") as handle:
        document = yaml.safe_load(handle)
    daemon = subprocess.Popen(
        [binary, "--provider", "embedded", "--dev", "--listen", "127.0.0.1:0",
         "--metrics-listen", "127.0.0.1:0"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={"PATH": os.environ.get("PATH", "")})
    failures = []
    try:
        line = daemon.stdout.readline()
        port = int(line.split("api=127.0.0.1:")[1].split()[0])
        metrics_port = int(line.split("metrics=127.0.0.1:")[1].split()[0])
        run = json.dumps({"protocol": 1, "javascript": {"code": "console.log(6*7)"}})
        floor = json.dumps({"protocol": 1, "minimum_isolation": "vm", "javascript": {"code": "1"}})
        cases = [
            ("GET", "/v1/describe", None, None, 200, "Description", None),
            ("POST", "/v1/runs", run, "application/json", 200, "Result", None),
            ("POST", "/v1/runs", floor, "application/json", 409, "ErrorAnswer", "isolation"),
            ("POST", "/v1/runs", '{"protocol": 2}', "application/json", 409, "ErrorAnswer", "protocol"),
            ("POST", "/v1/runs", "{", "application/json", 400, "ErrorAnswer", "request"),
            ("POST", "/v1/runs", run, "text/plain", 415, "ErrorAnswer", "request"),
            ("GET", "/v1/runs", None, None, 405, "ErrorAnswer", "request"),
            ("GET", "/v1/nothing", None, None, 404, "ErrorAnswer", "request"),
            ("POST", "/v1/sessions", "{}", "application/json", 501, "ErrorAnswer", "unsupported"),
            ("DELETE", "/v1/sessions/abc", None, None, 501, "ErrorAnswer", "unsupported"),
            ("GET", "/healthz", None, None, 200, None, None),
            ("GET", "/readyz", None, None, 200, None, None),
        ]
        for method, path, body, content_type, want_status, schema, mark in cases:
            where = f"{method} {path} -> {want_status}"
            status, headers, raw, request_id = call(port, method, path, body, content_type)
            if status != want_status:
                failures.append(f"{where}: status {status}: {raw[:200]!r}")
                continue
            operation = document["paths"].get(path.replace("/abc", "/{id}"), {}).get(method.lower())
            if operation is not None and str(status) not in operation["responses"]:
                failures.append(f"{where}: status {status} is not documented for this route")
            if headers.get("Plimsoll-Request-Id") != request_id:
                failures.append(f"{where}: request ID not echoed")
            if headers.get("Plimsoll-Not-Dispatched") != mark:
                failures.append(f"{where}: mark header {headers.get('Plimsoll-Not-Dispatched')!r}")
            parsed = json.loads(raw)
            if schema:
                for error in validator_for(document, schema).iter_errors(parsed):
                    failures.append(f"{where}: {schema}: {error.message} at {list(error.path)}")
            if mark and parsed["error"].get("not_dispatched") != mark:
                failures.append(f"{where}: body mark {parsed['error'].get('not_dispatched')!r}")
        with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as response:
            if not response.headers["Content-Type"].startswith("text/plain; version=0.0.4"):
                failures.append("metrics: content type")
    finally:
        daemon.send_signal(signal.SIGTERM)
        code = daemon.wait(timeout=60)
        if code != 0:
            failures.append(f"plimsolld exited {code} after SIGTERM: {daemon.stderr.read()[-2000:]}")
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
