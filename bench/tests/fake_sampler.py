#!/usr/bin/env python3
"""A stand-in for an in-process sampler binary, for the runner's own tests.

Usage: fake_sampler.py --mode MODE --scenario NAME [--runs N]
Modes: ok (N samples 1..N ms), us (the same in microseconds), skip, error, crash (a line, then
exit 3),
       none (prints no line for NAME), garbage (a line with a negative sample), env (N from
       PLIMSOLL_BENCH_RUNS). Noise lines are printed first, as a real binary might.
"""

import argparse
import json
import os
import sys


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="ok")
    parser.add_argument("--scenario", required=True)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    runs = int(os.environ["PLIMSOLL_BENCH_RUNS"]) if args.mode == "env" else args.runs
    print("fake sampler starting (not JSON)")
    print(json.dumps({"scenario": "someone-else", "unit": "ms", "samples": [999.0]}))
    samples = [float(i) for i in range(1, runs + 1)]
    if args.mode in ("ok", "env"):
        print(json.dumps({"scenario": args.scenario, "unit": "ms", "samples": samples}))
    elif args.mode == "us":
        micro = [s * 1000 for s in samples]
        print(json.dumps({"scenario": args.scenario, "unit": "us", "samples": micro}))
    elif args.mode == "skip":
        print(json.dumps({"scenario": args.scenario, "skipped": "no engine built"}))
    elif args.mode == "error":
        print(json.dumps({"scenario": args.scenario, "error": "engine crashed on run 2"}))
    elif args.mode == "crash":
        print(json.dumps({"scenario": args.scenario, "unit": "ms", "samples": samples}))
        print("boom", file=sys.stderr)
        return 3
    elif args.mode == "garbage":
        print(json.dumps({"scenario": args.scenario, "unit": "ms", "samples": [1.0, -2.0]}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
