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
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plimsolld  # noqa: E402

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


def call(daemon, method, path, body=None, content_type="application/json"):
    request_id = secrets.token_hex(16)
    headers = {"Plimsoll-Request-Id": request_id}
    if body is not None and content_type:
        headers["Content-Type"] = content_type
    status, answer_headers, raw = daemon.request(method, path, body, headers, timeout=30)
    return status, answer_headers, raw, request_id


def main():
    binary, contract = sys.argv[1], sys.argv[2]
    with open(contract, encoding="utf-8") as handle:
        document = yaml.safe_load(handle)
    failures = []
    with plimsolld.Daemon(binary, ["--provider", "embedded", "--dev"], metrics=True) as daemon:
        run = json.dumps({"protocol": 1, "javascript": {"code": "console.log(6*7)"}})
        floor = json.dumps({"protocol": 1, "minimum_isolation": "vm", "javascript": {"code": "1"}})
        module = json.dumps({"protocol": 1, "module": {"model": "cartpole", "rows": [[0, 0, 0.05, 0], []],
                                                      "end_time": 1, "step": 0.01}})
        bad_module = json.dumps({"protocol": 1, "module": {"model": "Cart", "rows": [], "end_time": 1,
                                                          "step": 0.01}})
        # The contract and the daemon agree on what a module request is.
        requests = validator_for(document, "RunRequest")
        errors = list(requests.iter_errors(json.loads(module)))
        if errors:
            failures.append(f"RunRequest {module}: {errors[0].message}")
        if requests.is_valid(json.loads(bad_module)):
            failures.append(f"RunRequest accepts {bad_module}, which the daemon refuses")
        cases = [
            ("GET", "/v1/describe", None, None, 200, "Description", None),
            ("POST", "/v1/runs", run, "application/json", 200, "Result", None),
            ("POST", "/v1/runs", module, "application/json", 200, "Result", None),
            ("POST", "/v1/runs", bad_module, "application/json", 400, "ErrorAnswer", "request"),
            ("POST", "/v1/runs", floor, "application/json", 409, "ErrorAnswer", "isolation"),
            ("POST", "/v1/runs", '{"protocol": 2}', "application/json", 409, "ErrorAnswer", "protocol"),
            ("POST", "/v1/runs", "{", "application/json", 400, "ErrorAnswer", "request"),
            ("POST", "/v1/runs", run, "text/plain", 415, "ErrorAnswer", "request"),
            ("GET", "/v1/runs", None, None, 405, "ErrorAnswer", "request"),
            ("GET", "/v1/nothing", None, None, 404, "ErrorAnswer", "request"),
            ("POST", "/v1/sessions", '{"protocol": 1}', "application/json", 201, "SessionOpened",
             None),
            ("POST", "/v1/sessions", "{}", "application/json", 409, "ErrorAnswer", "protocol"),
            ("POST", "/v1/sessions/abc/runs", run, "application/json", 404, "ErrorAnswer",
             "request"),
            ("GET", "/v1/sessions/abc", None, None, 404, "ErrorAnswer", "request"),
            ("DELETE", "/v1/sessions/abc", None, None, 404, "ErrorAnswer", "request"),
            ("GET", "/healthz", None, None, 200, None, None),
            ("GET", "/readyz", None, None, 200, None, None),
        ]
        for method, path, body, content_type, want_status, schema, mark in cases:
            where = f"{method} {path} -> {want_status}"
            status, headers, raw, request_id = call(daemon, method, path, body, content_type)
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
        # A session's whole life: each answer against its schema.
        status, _, raw, _ = call(daemon, "POST", "/v1/sessions", '{"protocol": 1}', "application/json")
        session_id = json.loads(raw).get("session_id", "missing") if status == 201 else "missing"
        cell = json.dumps({"protocol": 1, "cell": {"language": "javascript", "code": "6 * 7"}})
        for method, path, body, schema in [
                ("POST", f"/v1/sessions/{session_id}/runs", cell, "Result"),
                ("GET", f"/v1/sessions/{session_id}", None, "SessionState"),
                ("DELETE", f"/v1/sessions/{session_id}", None, "SessionClosed")]:
            where = f"{method} {path.replace(session_id, '{id}')}"
            status, _, raw, _ = call(daemon, method, path, body, "application/json" if body else None)
            if status != 200:
                failures.append(f"{where}: status {status}: {raw[:200]!r}")
                continue
            parsed = json.loads(raw)
            for error in validator_for(document, schema).iter_errors(parsed):
                failures.append(f"{where}: {schema}: {error.message} at {list(error.path)}")
            if schema == "Result" and parsed.get("value") != "42":
                failures.append(f"{where}: value {parsed.get('value')!r}, want '42'")
        with urllib.request.urlopen(f"http://127.0.0.1:{daemon.metrics_port}/metrics", timeout=10) as response:
            if not response.headers["Content-Type"].startswith("text/plain; version=0.0.4"):
                failures.append("metrics: content type")
    failures += daemon.problems
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
