#!/usr/bin/env python3
"""Run plimsoll's benchmarks: `python3 bench/run.py --help`. Stdlib only; see bench/README.md."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness.runner import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
