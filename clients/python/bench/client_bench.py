"""Bench: the client's overhead per run on the embedded daemon (issue 16's numbers).

    python client_bench.py --url URL --runs N

Prints one JSON line: client p50 of run_javascript, p50 of a raw http.client POST of the same
body (keep-alive, a fresh Plimsoll-Request-Id), their difference, and a session cell's p50.
"""

from __future__ import annotations

import argparse
import http.client
import json
import secrets
import statistics
import sys
import time
from typing import Callable, List

import plimsoll

CODE = "console.log(6*7)"
WARMUP = 20


def _p50(call: Callable[[], None], runs: int) -> float:
    for _ in range(WARMUP):
        call()
    samples: List[float] = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000.0)
    return statistics.median(samples)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--url", required=True)
    parser.add_argument("--runs", type=int, default=200)
    options = parser.parse_args()
    runs = max(options.runs, 1)

    client = plimsoll.Client(options.url)

    def client_run() -> None:
        result = client.run_javascript(CODE)
        if result.stdout != b"42\n":
            raise SystemExit(f"unexpected stdout {result.stdout!r}")

    url = plimsoll._core.parse_url(options.url)
    if url.transport != "http":
        raise SystemExit("the raw baseline needs an http:// URL")
    raw = http.client.HTTPConnection(url.host, url.port, timeout=30)
    body = json.dumps({"protocol": 1, "javascript": {"code": CODE}}).encode()

    def raw_run() -> None:
        raw.request("POST", url.prefix + "/v1/runs", body=body,
                    headers={"Content-Type": "application/json",
                             "Plimsoll-Request-Id": secrets.token_hex(16)})
        answer = raw.getresponse()
        data = answer.read()
        if answer.status != 200:
            raise SystemExit(f"raw POST answered {answer.status}: {data[:200]!r}")

    # Interleave the two so that drift on a shared machine hits both alike.
    client_p50s, raw_p50s = [], []
    rounds = 5
    for _ in range(rounds):
        raw_p50s.append(_p50(raw_run, max(runs // rounds, 1)))
        client_p50s.append(_p50(client_run, max(runs // rounds, 1)))
    client_p50 = statistics.median(client_p50s)
    raw_p50 = statistics.median(raw_p50s)

    with client.open_session() as session:
        def cell() -> None:
            session.run_cell("javascript", "1+1")
        cell_p50 = _p50(cell, runs)
    if client.connections_opened != 1:
        print(f"warning: {client.connections_opened} connections (keep-alive broken?)",
              file=sys.stderr)
    client.close()
    raw.close()
    print(json.dumps({"client": "python", "runs": runs,
                      "client_run_p50_ms": round(client_p50, 4),
                      "raw_run_p50_ms": round(raw_p50, 4),
                      "overhead_p50_ms": round(client_p50 - raw_p50, 4),
                      "cell_p50_ms": round(cell_p50, 4)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
