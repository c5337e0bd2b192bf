#!/usr/bin/env python3
"""A sampler adapter for `plimsoll-linux-latency` (src/providers/linux/linux_latency.cc).

The tool opens the `linux` provider once, collects its evidence, then times N `Sandbox::Run` calls of
one JavaScript snippet in the same process (end to end: request, sandbox, agent, qjs, result) and
prints one line:

    runs 101  p50 11.98 ms  p95 28.08 ms  p99 31.73 ms  min 4.95 ms

It prints no raw samples and has no warm-up, so this adapter reports the runner's "summary" record
(n, min, p50, p95, p99; no mean, max or stdev):

    {"scenario": NAME, "unit": "ms", "summary": {"n": 101, "min": ..., "p50": ..., ...}}

The tool takes the sorted sample at index floor(q * (n - 1)). The adapter asks for n = 100k + 1 runs
(the smallest such n >= --runs, at least 101), for which q * (n - 1) is a whole number for q = 0.5,
0.95 and 0.99: the tool's p50/p95/p99 are then exactly the runner's (linear interpolation). The first
run of the process (cold) is among the n; --warmup is accepted and ignored (the tool cannot warm up
without counting it).

If the tool prints a sampler JSON line for the scenario itself (the protocol in bench/README.md), that
line is passed through unchanged and the summary line is ignored.

    linux_latency.py --tool PATH --scenario NAME --runs N [--warmup N] [--image DIR] [--code JS]
"""

import argparse
import json
import os
import re
import subprocess
import sys

# The runner's own reader of sampler lines (bench/harness/execute.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir))
from harness.execute import find_record  # noqa: E402

_SUMMARY = re.compile(r"runs\s+(\d+)\s+p50\s+([\d.]+)\s*ms\s+p95\s+([\d.]+)\s*ms\s+"
                      r"p99\s+([\d.]+)\s*ms\s+min\s+([\d.]+)\s*ms")


def exact_run_count(runs):
    """The smallest n = 100k + 1 >= max(runs, 101): the tool's floor ranks are then exact."""
    runs = max(runs, 101)
    return ((runs - 1 + 99) // 100) * 100 + 1


def parse_summary(text):
    """{"n", "min", "p50", "p95", "p99"} from the tool's line, or None."""
    match = _SUMMARY.search(text)
    if match is None:
        return None
    count, p50, p95, p99, low = match.groups()
    return {"n": int(count), "min": float(low), "p50": float(p50), "p95": float(p95),
            "p99": float(p99)}


def _tail(text, limit=400):
    return " ".join(text[-limit:].split())


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--tool", required=True)
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--runs", type=int, required=True)
    parser.add_argument("--warmup", type=int, default=0)
    parser.add_argument("--image", help="the guest image directory (sets PLIMSOLL_IMAGE)")
    parser.add_argument("--code", default="console.log(6*7)")
    args = parser.parse_args(argv)

    count = exact_run_count(args.runs)
    env = dict(os.environ)
    if args.image:
        env["PLIMSOLL_IMAGE"] = args.image
    out = subprocess.run([args.tool, str(count), args.code], capture_output=True, text=True,
                         env=env, check=False)
    record = find_record(out.stdout, args.scenario)
    if record is not None:
        print(json.dumps(record))
        return out.returncode
    if out.returncode != 0:
        detail = f"{os.path.basename(args.tool)} exited with status {out.returncode}"
        if out.returncode == 2:
            detail += " (the linux provider could not open or collect its evidence)"
        if out.stderr.strip():
            detail += f"; stderr: {_tail(out.stderr)}"
        print(json.dumps({"scenario": args.scenario, "error": detail}))
        return 0
    summary = parse_summary(out.stdout)
    if summary is None:
        print(json.dumps({"scenario": args.scenario,
                          "error": f"no summary line in the tool's output: {_tail(out.stdout)}"}))
        return 0
    if summary["n"] != count:
        print(json.dumps({"scenario": args.scenario,
                          "error": f"asked for {count} runs, the tool reported {summary['n']}"}))
        return 0
    print(json.dumps({"scenario": args.scenario, "unit": "ms", "summary": summary}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
