#!/usr/bin/env python3
"""ctest advisor_example: runs run.py against this build's plimsoll and checks its report in
headless Chromium (the DOM it renders holds both runs, the per-item run's fan_out finding and the
collection run's "No finding.").

    example_test.py PLIMSOLL_BINARY

Exit 0 passed, 1 failed, 77 skipped (no Chromium: the report's text checks still ran).
"""
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CHROMIUM = "/usr/bin/chromium"


def main():
    with tempfile.TemporaryDirectory(prefix="advisor-example-") as scratch:
        report = os.path.join(scratch, "report.html")
        done = subprocess.run([sys.executable, os.path.join(HERE, "run.py"), "--plimsoll",
                               sys.argv[1], "--report", report],
                              capture_output=True, text=True, timeout=300)
        print(done.stdout, end="")
        if done.returncode != 0:
            print(f"advisor_example: run.py exited {done.returncode}\n{done.stderr}")
            return 1
        if "13 call(s)" not in done.stdout or "advice: fan_out on GET /items/*" not in done.stdout:
            print("advisor_example: run.py did not print the trace and the finding")
            return 1
        if not os.access(CHROMIUM, os.X_OK):
            print(f"advisor_example: skipped: {CHROMIUM} is missing (scripts/bootstrap installs it)")
            return 77
        profile = os.path.join(scratch, "profile")
        dom = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu",
                              "--no-first-run", "--disable-background-networking",
                              f"--user-data-dir={profile}", "--dump-dom", "file://" + report],
                             capture_output=True, text=True, timeout=120).stdout
        per_item = re.search(r'<section id="per-item">(.*?)</section>', dom, re.S)
        collection = re.search(r'<section id="collection">(.*?)</section>', dom, re.S)
        if not per_item or not collection:
            print("advisor_example: the rendered report lacks a run's section")
            return 1
        if 'class="finding"' not in per_item.group(1) or "fan_out" not in per_item.group(1):
            print("advisor_example: the rendered per-item section has no fan_out finding")
            return 1
        if "No finding." not in collection.group(1):
            print("advisor_example: the rendered collection section has a finding")
            return 1
    print("advisor_example: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
