#!/usr/bin/env python3
"""Overload: ten times the admitted concurrency in one burst.

Starts plimsolld (embedded provider, --dev, loopback, port 0) admitting
CONCURRENCY runs at once (--max-concurrent-runs, --run-workers, no run queue),
then releases 10 x CONCURRENCY clients at the same instant, each on its own
connection, each sending one run that keeps a worker busy for a while. Every
answer must be either a result (200, a Result object) or a shed (429
resource_exhausted with the `capacity` mark in body and header, Retry-After
in whole seconds if any); each must echo its own request ID and parse; every request must
get exactly one answer (count sent = count answered). Then, with the burst
over, one more run must succeed: shedding leaves nothing held.

Usage: overload_test.py PLIMSOLLD
Environment: PLIMSOLL_OVERLOAD_CONCURRENCY (default 2), PLIMSOLL_OVERLOAD_FACTOR (default 10).
"""
import json
import os
import secrets
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plimsolld  # noqa: E402

RESULT_FIELDS = {"provider", "isolation", "environment", "duration_ms", "kind", "exit_code",
                 "timed_out", "stdout", "stderr", "stdout_truncated", "stderr_truncated", "record"}
# About 0.3-1 s of QuickJS on this class of machine: long enough that the
# burst meets every worker busy.
BUSY_CODE = "let s = 0; for (let i = 0; i < 3e6; i++) s += i; console.log(s > 0)"


def post_run(daemon, body):
    request_id = secrets.token_hex(16)
    status, headers, raw = daemon.request(
        "POST", "/v1/runs", body,
        {"Content-Type": "application/json", "Plimsoll-Request-Id": request_id})
    return request_id, status, headers, raw


def judge(request_id, status, headers, raw):
    """The problems with one answer ("" when it is a well-formed success or shed)."""
    try:
        body = json.loads(raw)
    except ValueError as error:
        return f"status {status}: the body does not parse ({error}): {raw[:200]!r}"
    if headers.get("Plimsoll-Request-Id") != request_id:
        return f"status {status}: request ID not echoed ({headers.get('Plimsoll-Request-Id')!r})"
    mark = headers.get("Plimsoll-Not-Dispatched")
    if status == 200:
        missing = RESULT_FIELDS - set(body)
        if missing or mark is not None:
            return f"200 without {sorted(missing)} or with a mark {mark!r}"
        if body["exit_code"] != 0 or body["timed_out"]:
            return f"200 but the run failed: {raw[:300]!r}"
        return ""
    error = body.get("error", {}) if isinstance(body, dict) else {}
    if (status, error.get("code"), error.get("not_dispatched"), mark) != (
            429, "resource_exhausted", "capacity", "capacity"):
        return f"neither a result nor a capacity shed: status {status}, mark {mark!r}: {raw[:300]!r}"
    if error.get("request_id") != request_id or not error.get("message"):
        return f"shed without its request ID or message: {raw[:300]!r}"
    # Retry-After only when the wait is known (a rate limit, docs/daemon.md);
    # a concurrency shed has none, but one that is present must be seconds.
    if "Retry-After" in headers and not headers["Retry-After"].isdigit():
        return f"shed with a malformed Retry-After: {headers!r}"
    return ""


def main():
    binary = sys.argv[1]
    concurrency = int(os.environ.get("PLIMSOLL_OVERLOAD_CONCURRENCY", "2"))
    clients = concurrency * int(os.environ.get("PLIMSOLL_OVERLOAD_FACTOR", "10"))
    arguments = ["--provider", "embedded", "--dev", "--max-concurrent-runs", str(concurrency),
                 "--run-workers", str(concurrency), "--run-queue", "0",
                 "--evidence-interval-ms", "0"]
    failures = []
    with plimsolld.Daemon(binary, arguments) as daemon:
        body = json.dumps({"protocol": 1, "timeout_ms": 30000, "javascript": {"code": BUSY_CODE}})
        answers, lock = [], threading.Lock()
        gate = threading.Barrier(clients)

        def client():
            gate.wait()
            try:
                answer = post_run(daemon, body)
            except Exception as error:  # a lost answer: reset, timeout, no reply
                answer = ("", 0, {}, f"no answer: {error!r}".encode())
            with lock:
                answers.append(answer)

        started = time.monotonic()
        threads = [threading.Thread(target=client) for _ in range(clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=180)
        elapsed = time.monotonic() - started
        statuses = {}
        for request_id, status, headers, raw in answers:
            statuses[status] = statuses.get(status, 0) + 1
            problem = "no answer" if status == 0 else judge(request_id, status, headers, raw)
            if problem:
                failures.append(problem if status else raw.decode())
        print(f"overload: {clients} sent at once to a daemon admitting {concurrency}: "
              f"{len(answers)} answered in {elapsed:.1f} s, by status {statuses}")
        if len(answers) != clients:
            failures.append(f"sent {clients}, answered {len(answers)}")
        if statuses.get(200, 0) < 1:
            failures.append("no run succeeded during the burst")
        if statuses.get(429, 0) < 1:
            failures.append(f"nothing was shed: {clients} at once should exceed {concurrency}")
        after = post_run(daemon, body)
        if after[1] != 200 or judge(*after):
            failures.append(f"the run after the burst: {after[1]} {judge(*after)}")
    failures += daemon.problems
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
