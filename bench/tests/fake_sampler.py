#!/usr/bin/env python3
"""A stand-in for an in-process sampler binary, for the runner's own tests.

Usage: fake_sampler.py --mode MODE --scenario NAME [--runs N] [--unit U] [--also NAME:FACTOR]...
                       [--fact KEY=VALUE]...
Modes: ok (N samples 1..N ms, or in --unit U as given), us (the same in microseconds), skip,
       error, crash (a line, then exit 3), none (prints no line for NAME), garbage (a line with a
       negative sample), env (N from PLIMSOLL_BENCH_RUNS). Noise lines are printed first, as a
       real binary might.
--also NAME:FACTOR (repeatable) prints one more line, for NAME, whose samples are the main ones
times FACTOR (same unit), as a sampler producing several scenarios from one invocation does.
--fact KEY=VALUE (repeatable) adds {"facts": {KEY: VALUE, ...}} to every line with samples.
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
    parser.add_argument("--unit", default="ms")
    parser.add_argument("--also", action="append", default=[])
    parser.add_argument("--fact", action="append", default=[])
    args = parser.parse_args()
    facts = dict(item.split("=", 1) for item in args.fact)
    extra = {"facts": facts} if facts else {}
    runs = int(os.environ["PLIMSOLL_BENCH_RUNS"]) if args.mode == "env" else args.runs
    print("fake sampler starting (not JSON)")
    print(json.dumps({"scenario": "someone-else", "unit": "ms", "samples": [999.0]}))
    samples = [float(i) for i in range(1, runs + 1)]
    for also in args.also:
        name, factor = also.rsplit(":", 1)
        print(json.dumps({"scenario": name, "unit": args.unit,
                          "samples": [s * float(factor) for s in samples], **extra}))
    if args.mode in ("ok", "env"):
        print(json.dumps({"scenario": args.scenario, "unit": args.unit, "samples": samples,
                          **extra}))
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
