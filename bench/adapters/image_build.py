#!/usr/bin/env python3
"""A sampler adapter that builds one guest image variant from nothing and measures it (issue 18).

It runs `plimsoll image build --variant NAME --output DIR --rebuild-base` once, into a private
directory and with a private cache (PLIMSOLL_CACHE), so nothing an earlier build left is reused:
mmdebstrap from Debian's archive, the variant's Debian packages, its pinned wheels and npm project,
our binaries, the manifest. Then it prints two sampler rows:

    {"scenario": "image.NAME.build", "unit": "s", "samples": [61.8]}
    {"scenario": "image.NAME.size", "unit": "kB", "samples": [868412]}

The size is the image's tree as `du -sk` counts it (disk blocks, hard links once), the way the docs'
table of variants gives it. One build is one sample: a cold build takes about a minute and needs
Debian's archive (and PyPI and the npm registry for `data`), so the rows are a measurement of this
machine and network on the day, not a latency distribution. A failed build is the rows' error.

    image_build.py --plimsoll PATH --variant NAME --state DIR
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time


def _tail(text, limit=400):
    return " ".join(text[-limit:].split())


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--plimsoll", required=True, help="the plimsoll CLI")
    parser.add_argument("--variant", required=True)
    parser.add_argument("--state", required=True, help="a private directory for the build")
    args = parser.parse_args(argv)

    build_row, size_row = f"image.{args.variant}.build", f"image.{args.variant}.size"

    def fail(reason):
        for row in (build_row, size_row):
            print(json.dumps({"scenario": row, "error": reason}))
        return 0

    output = os.path.join(args.state, "image-" + args.variant)
    cache = os.path.join(args.state, "cache")
    shutil.rmtree(output, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    os.makedirs(cache)
    env = dict(os.environ, PLIMSOLL_CACHE=cache)
    started = time.monotonic()
    done = subprocess.run([args.plimsoll, "image", "build", "--variant", args.variant,
                           "--output", output, "--rebuild-base"],
                          capture_output=True, text=True, env=env, check=False)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        return fail(f"plimsoll image build --variant {args.variant} exited {done.returncode}: "
                    f"{_tail(done.stderr or done.stdout)}")
    du = subprocess.run(["du", "-sk", output], capture_output=True, text=True, check=False)
    try:
        kilobytes = int(du.stdout.split()[0])
    except (IndexError, ValueError):
        return fail(f"du -sk {output} printed {du.stdout!r}")
    print(json.dumps({"scenario": build_row, "unit": "s", "samples": [round(seconds, 3)]}))
    print(json.dumps({"scenario": size_row, "unit": "kB", "samples": [kilobytes]}))
    shutil.rmtree(output, ignore_errors=True)
    shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
