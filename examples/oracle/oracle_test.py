#!/usr/bin/env python3
"""ctest oracle_example: runs oracle.py against this build's plimsolld (linux provider, the
build's guest image) and checks the report in headless Chromium: it renders, the replay animates
(its frame counter moves), the browser recomputes all three fingerprints from the embedded
trajectories and they match, and the numbers the page shows equal the runner's JSON
(report.json, written from the runners' own summaries): the draft's failure time above all, which
is the published figure, 5.96 s (tick 596) from θ0 = 0.2 rad, the scenario the page states.

    oracle_test.py PLIMSOLLD IMAGE

Exit 0 passed, 1 failed, 77 skipped (no Chromium: oracle.py's own checks still ran).
"""
import html
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
from exams_common import (CHROMIUM, dump_dom, have_chromium, refers_outside,  # noqa: E402
                          same_number, text_of)


def main():
    problems = []
    with tempfile.TemporaryDirectory(prefix="oracle-example-") as scratch:
        report = os.path.join(scratch, "report.html")
        done = subprocess.run([sys.executable, os.path.join(HERE, "oracle.py"), "--plimsolld",
                               sys.argv[1], "--image", sys.argv[2], "--out", report],
                              capture_output=True, text=True, timeout=600)
        print(done.stdout, end="")
        if done.returncode != 0:
            print(f"oracle_example: oracle.py exited {done.returncode}\n{done.stderr}")
            return 1
        with open(os.path.join(scratch, "report.json")) as f:
            runs = json.load(f)["runs"]
        accepted, second, draft = (run["summary"] for run in runs)
        # SPEC §10's flagship claims, from the runners' JSON.
        if not (accepted["ended"] == "finished" and accepted["ticks"] == 2000
                and accepted["fingerprint"] == second["fingerprint"]):
            problems.append(f"the accepted controller did not finish twice alike: {accepted} {second}")
        if not (draft["ended"] == "failed" and draft["fingerprint"] != accepted["fingerprint"]):
            problems.append(f"the draft did not fail with its own fingerprint: {draft}")
        # The published figure: the draft drops the pole at 5.96 s from the published scenario.
        if not (draft["ticks"] == 596 and draft["ended_at_seconds"] == 5.96):
            problems.append(f"the draft did not fall at 5.96 s (tick 596): {draft}")
        with open(os.path.join(scratch, "report.json")) as f:
            scenario = json.load(f).get("scenario")
        if scenario != {"plant": "cartpole", "parameters": [0, 0, 0.2, 0]}:
            problems.append(f"the oracle's scenario is {scenario}, not the published example's")
        if len({run["summary"]["scenario_sha256"] for run in runs}) != 1:
            problems.append("the three runs had different scenarios")
        with open(report, encoding="utf-8") as f:
            page = f.read()
        if refers_outside(page):
            problems.append("the report refers to something outside itself")
        if not have_chromium():
            print(f"oracle_example: skipped: {CHROMIUM} is missing (scripts/bootstrap installs it)")
            return 1 if problems else 77
        dom = dump_dom(report, os.path.join(scratch, "profile"))
        if "<html" not in dom:
            problems.append("Chromium rendered no DOM")
        frame = re.search(r'id="replay" data-frame="(\d+)"', dom)
        if not frame or int(frame.group(1)) < 10:
            problems.append(f"the replay did not animate (frames: {frame.group(1) if frame else 'none'})")
        match = re.search(r'id="browser-check" data-match="([^"]*)"', dom)
        if not match or match.group(1) != "3/3":
            problems.append(f"the browser's fingerprints: {match.group(1) if match else 'none'}, not 3/3")
        if not same_number(text_of(dom, "draft-ended-at"), draft["ended_at_seconds"]):
            problems.append(f"the page says the draft failed at {text_of(dom, 'draft-ended-at')} s, "
                            f"the runner {draft['ended_at_seconds']} s")
        if text_of(dom, "draft-ended") != draft["ended"] or text_of(dom, "draft-ticks") != str(draft["ticks"]):
            problems.append("the page's draft ending or tick differs from the runner's")
        if (text_of(dom, "scenario-theta") != "0.2"
                or text_of(dom, "scenario-parameters") != "0, 0, 0.2, 0"
                or text_of(dom, "scenario-digest") != accepted["scenario_sha256"]):
            problems.append("the page does not state the scenario the runs were sent: "
                            f"{text_of(dom, 'scenario-parameters')!r}, {text_of(dom, 'scenario-digest')!r}")
        for index, run in enumerate(runs):
            row = re.search(r'<tr id="run-%d"[^>]*>(.*?)</tr>' % index, dom, re.S)
            if not row:
                problems.append(f"no table row for {run['label']}")
                continue
            cells = dict(re.findall(r'<td class="([a-z-]+)">(.*?)</td>', row.group(1)))
            s = run["summary"]
            expected = {"ended": s["ended"], "ended-at": s["ended_at_seconds"], "score": s["score"],
                        "ticks": s["ticks"], "fingerprint": s["fingerprint"],
                        "tier": f"{run['isolation']} ({run['provider']})"}
            for name, value in expected.items():
                shown = html.unescape(cells.get(name, ""))
                if not (same_number(shown, value) if isinstance(value, (int, float)) else shown == value):
                    problems.append(f"{run['label']}: the page shows {name} {cells.get(name)!r}, "
                                    f"the runner {value!r}")
        if "does not claim" not in dom or "<li>" not in dom.split("not-claimed")[1]:
            problems.append("the page does not say what it does not claim")
    for problem in problems:
        print("oracle_example: " + problem)
    if not problems:
        print("oracle_example: the report renders, animates, recomputes 3/3 fingerprints and shows "
              "the runner's numbers")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
