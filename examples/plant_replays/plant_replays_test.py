#!/usr/bin/env python3
"""ctest plant_replays_example: runs plant_replays.py against this build's plimsolld (linux provider,
the build's guest image) and checks every page in headless Chromium: it renders, the replay's cursor
animates (its frame counter and its tick move), the browser recomputes both fingerprints from the
embedded trajectories and they match, every column of the trajectory is charted, and the numbers
the page shows (tier, ending, time, score, ticks, fingerprint, the verdict by the plant's rule)
equal the runner's JSON (plant_replays.json, written from the runners' own summaries); the "C
against JavaScript" section: the C run's numbers are its runner's, its fingerprint matches in the
browser, and the comparison the browser shows (identical, or the first differing tick, column, values
and bits) is the one computed here in Python from the trajectories the page embeds (and the tool's);
where the provider refused the C project, the page says so; then index.html: a row and a link per
plant with the same outcomes, fingerprints and C comparison.

    plant_replays_test.py PLIMSOLLD IMAGE
    plant_replays_test.py PLIMSOLLD --embedded   (while developing: exams in the daemon's process)

Exit 0 passed, 1 failed, 77 skipped (no Chromium: plant_replays.py's own checks still ran).
"""
import base64
import html
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from exams_common import (CHROMIUM, compare_trajectories, dump_dom, have_chromium,  # noqa: E402
                          refers_outside, same_number, text_of)
from plants import PLANTS  # noqa: E402

NAME = "plant_replays_example"


def cells_of(dom, row_id):
    row = re.search(r'<tr id="%s"[^>]*>(.*?)</tr>' % re.escape(row_id), dom, re.S)
    if not row:
        return None
    return {name.split()[0]: html.unescape(value)
            for name, value in re.findall(r'<td class="([a-z -]+)">(.*?)</td>', row.group(1), re.S)}


def embedded_data(page):
    """The data the page embeds (its DATA constant), as the tool wrote it."""
    match = re.search(r"^const DATA = (.*);$", page, re.M)
    return json.loads(match.group(1)) if match else None


def attribute(dom, element_id, name):
    element = re.search(r'<[a-z0-9]+ [^>]*id="%s"[^>]*>' % re.escape(element_id), dom)
    value = re.search(r' %s="([^"]*)"' % re.escape(name), element.group(0)) if element else None
    return html.unescape(value.group(1)) if value else None


def check_c_section(plant, entry, dom, page, source_of):
    """The "C against JavaScript" section: the C run as its runner said, or the refusal; the
    browser's comparison equal to one computed here from the embedded trajectories."""
    name, c = plant["name"], entry["c"]
    problems = []
    if 'id="c-against-javascript"' not in dom:
        return [f"{name}: the page has no C against JavaScript section"]
    source = re.search(r'<pre id="source-c">(.*?)</pre>', dom, re.S)
    if not source or html.unescape(source.group(1)) != source_of(c):
        problems.append(f"{name}: the page does not show the C controller's source")
    javascript = cells_of(dom, "c-row-javascript") or {}
    if javascript.get("fingerprint") != entry["runs"][0]["summary"]["fingerprint"]:
        problems.append(f"{name}: the C section's JavaScript fingerprint is "
                        f"{javascript.get('fingerprint')!r}, not the passing run's")
    result = attribute(dom, "c-comparison", "data-result")
    text = text_of(dom, "c-comparison") or ""
    if c["refused"]:
        row = re.search(r'<tr id="c-row-c">(.*?)</tr>', dom, re.S)
        if (result != "not-run" or attribute(dom, "c-comparison", "data-refused") !=
                c["refused"]["reason"] or "nothing ran" not in text or not row or
                f"not run: refused {c['refused']['reason']}" not in html.unescape(row.group(1))):
            problems.append(f"{name}: the provider refused the C project "
                            f"({c['refused']['reason']}) and the page does not say so: "
                            f"{result!r}, {text!r}")
        return problems
    run = c["run"]
    s = run["summary"]
    cells = cells_of(dom, "c-row-c") or {}
    expected = {"language": "C", "tier": f"{run['isolation']} ({run['provider']})",
                "ended": s["ended"], "ended-at": s["ended_at_seconds"], "score": s["score"],
                "ticks": s["ticks"], "fingerprint": s["fingerprint"],
                "verdict": "passed" if run["passed"] else "did not pass"}
    for key, value in expected.items():
        shown = cells.get(key)
        if not (same_number(shown, value) if isinstance(value, (int, float)) else shown == value):
            problems.append(f"{name} in C: the page shows {key} {shown!r}, the runner {value!r}")
    if attribute(dom, "c-check", "data-match") != "1/1":
        problems.append(f"{name}: the browser's C fingerprint: "
                        f"{attribute(dom, 'c-check', 'data-match')!r}, not 1/1")
    data = embedded_data(page)
    if data is None or not data["c"]["run"]:
        return problems + [f"{name}: the page embeds no C trajectory"]
    width = len(plant["columns"])
    here = compare_trajectories(base64.b64decode(data["c"]["run"]["trajectory_base64"]),
                                base64.b64decode(data["runs"][0]["trajectory_base64"]), width)
    if here != c["comparison"]:
        problems.append(f"{name}: the tool's comparison {c['comparison']} is not this test's {here}")
    shown = {"result": result, "ticks": attribute(dom, "c-comparison", "data-ticks"),
             "tick": attribute(dom, "c-comparison", "data-tick"),
             "column": attribute(dom, "c-comparison", "data-column"),
             "bits": [attribute(dom, "c-comparison", "data-c-bits"),
                      attribute(dom, "c-comparison", "data-js-bits")],
             "values": [attribute(dom, "c-comparison", "data-c-value"),
                        attribute(dom, "c-comparison", "data-js-value")]}
    if here["identical"]:
        agrees = shown["result"] == "identical" and shown["ticks"] == str(here["ticks"])
    else:
        agrees = (shown["result"] == "differs" and shown["tick"] == str(here["tick"]) and
                  shown["column"] == ("" if here["column"] is None else str(here["column"])))
        if here["column"] is not None:
            agrees = (agrees and shown["bits"] == here["bits"] and
                      all(same_number(a, b) for a, b in zip(shown["values"], here["values"])))
    if not agrees:
        problems.append(f"{name}: the browser's comparison {shown} is not Python's {here}")
    return problems


def check_page(plant, entry, dom, source_of):
    """The problems with one plant's page, as Chromium left its DOM."""
    problems = []
    name = plant["name"]
    if "<html" not in dom:
        return [f"{name}: Chromium rendered no DOM"]
    replay = re.search(r'id="replay" data-frame="(\d+)" data-tick="(\d+)"', dom)
    if not replay or int(replay.group(1)) < 10 or int(replay.group(2)) < 1:
        problems.append(f"{name}: the replay did not animate "
                        f"(frame, tick: {replay.groups() if replay else 'none'})")
    cursor = re.search(r'<line [^>]*class="cursor"', dom)
    if not cursor:
        problems.append(f"{name}: no chart has a time cursor")
    match = re.search(r'id="browser-check" data-match="([^"]*)"', dom)
    runs = entry["runs"]
    if not match or match.group(1) != f"{len(runs)}/{len(runs)}":
        problems.append(f"{name}: the browser's fingerprints: {match.group(1) if match else 'none'}, "
                        f"not {len(runs)}/{len(runs)}")
    charted = set()
    for spec in re.findall(r'data-columns="([0-9-]+)"', dom):
        first, _, last = spec.partition("-")
        charted.update(range(int(first), int(last or first) + 1))
    width = runs[0]["summary"]["row_doubles"]
    if charted != set(range(width)):
        problems.append(f"{name}: charted columns {sorted(set(range(width)) - charted)} missing "
                        f"of {width}")
    for index, run in enumerate(runs):
        cells = cells_of(dom, f"run-{index}")
        if cells is None:
            problems.append(f"{name}: no table row for the {run['label']} run")
            continue
        s = run["summary"]
        expected = {"label": run["label"], "tier": f"{run['isolation']} ({run['provider']})",
                    "ended": s["ended"], "ended-at": s["ended_at_seconds"], "score": s["score"],
                    "ticks": s["ticks"], "fingerprint": s["fingerprint"],
                    "verdict": "passed" if run["passed"] else "did not pass"}
        for key, value in expected.items():
            shown = cells.get(key)
            if not (same_number(shown, value) if isinstance(value, (int, float)) else shown == value):
                problems.append(f"{name} {run['label']}: the page shows {key} {shown!r}, the runner "
                                f"{value!r}")
        source = re.search(r'<pre id="source-%s">(.*?)</pre>' % run["label"], dom, re.S)
        if not source or html.unescape(source.group(1)) != source_of(run):
            problems.append(f"{name} {run['label']}: the page does not show the controller's source")
    if "does not claim" not in dom or "<li>" not in dom.split("not-claimed")[1]:
        problems.append(f"{name}: the page does not say what it does not claim")
    return problems


def check_index(entries, dom):
    problems = []
    for plant in PLANTS:
        name = plant["name"]
        row = re.search(r'<tr id="plant-%s">(.*?)</tr>' % name, dom, re.S)
        if not row:
            problems.append(f"index: no row for {name}")
            continue
        if f'href="{name}.html"' not in row.group(1):
            problems.append(f"index: {name}'s row has no link to {name}.html")
        for run in entries[name]["runs"]:
            cell = re.search(r'<td class="%s-outcome">(.*?)</td>' % run["label"], row.group(1), re.S)
            s = run["summary"]
            shown = cell.group(1) if cell else ""
            wanted = [("ok" if run["passed"] else "no") + '">' +
                      ("passed" if run["passed"] else "did not pass"),
                      f'<span class="ended">{s["ended"]}</span>',
                      f'<span class="ticks">{s["ticks"]}</span>', s["fingerprint"]]
            score = re.search(r'<span class="score">([^<]*)</span>', shown)
            if not all(w in shown for w in wanted) or not score or not same_number(score.group(1),
                                                                                   s["score"]):
                problems.append(f"index: {name} {run['label']}: {shown!r} is not the runner's {s}")
        cell = re.search(r'<td class="c-outcome">(.*?)</td>', row.group(1), re.S)
        c = entries[name]["c"]
        if c["refused"]:
            wanted = ['not run</span>', f'<span class="c-refused">{c["refused"]["reason"]}</span>']
        elif c["comparison"]["identical"]:
            wanted = ['identical</span>', f'<span class="c-ticks">{c["comparison"]["ticks"]}</span>',
                      c["run"]["summary"]["fingerprint"]]
        else:
            wanted = ['differs</span>', f'<span class="c-tick">{c["comparison"]["tick"]}</span>',
                      c["run"]["summary"]["fingerprint"]]
        if not cell or not all(w in cell.group(1) for w in wanted):
            problems.append(f"index: {name} C: {cell.group(1) if cell else None!r} does not say "
                            f"{wanted}")
    return problems


def rule_problems():
    """plants.py's passing scores must be the runner's test's (src/trial/plant_examples_test.cc)."""
    with open(os.path.join(REPO, "src", "trial", "plant_examples_test.cc"), encoding="utf-8") as f:
        rules = {name: float(score) for name, score in
                 re.findall(r'\{"([a-z]+)",\s*(?://[^\n]*\n\s*)?([0-9.]+)\}', f.read())}
    return [f"{plant['name']}: the page's passing score {plant['passing_score']} is not the "
            f"runner test's {rules.get(plant['name'])}"
            for plant in PLANTS if rules.get(plant["name"]) != plant["passing_score"]]


def main():
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    where = (["--provider", "embedded"] if sys.argv[2] == "--embedded" else ["--image", sys.argv[2]])
    problems = rule_problems()
    with tempfile.TemporaryDirectory(prefix="plant-replays-") as scratch:
        out = os.path.join(scratch, "pages")
        done = subprocess.run([sys.executable, os.path.join(HERE, "plant_replays.py"),
                               "--plimsolld", sys.argv[1], *where, "--out", out],
                              capture_output=True, text=True, timeout=900)
        print(done.stdout, end="")
        if done.returncode != 0:
            print(f"{NAME}: plant_replays.py exited {done.returncode}\n{done.stderr}")
            return 1
        with open(os.path.join(out, "plant_replays.json"), encoding="utf-8") as f:
            entries = json.load(f)["plants"]
        if sorted(entries) != sorted(p["name"] for p in PLANTS):
            problems.append(f"the tool ran {sorted(entries)}, not the nine plants")
        pages = {name: os.path.join(out, f"{name}.html") for name in entries}
        pages["index"] = os.path.join(out, "index.html")
        for name, page in pages.items():
            with open(page, encoding="utf-8") as f:
                if refers_outside(f.read()):
                    problems.append(f"{name}: the page refers to something outside itself")
        if not have_chromium():
            print(f"{NAME}: skipped: {CHROMIUM} is missing (scripts/bootstrap installs it)")
            return 1 if problems else 77

        def source_of(run):
            with open(os.path.join(REPO, run["controller_file"]), encoding="utf-8") as f:
                return f.read()

        profile = os.path.join(scratch, "profile")
        compared = refused = 0
        for plant in PLANTS:
            if plant["name"] in entries:
                dom = dump_dom(pages[plant["name"]], profile)
                problems += check_page(plant, entries[plant["name"]], dom, source_of)
                with open(pages[plant["name"]], encoding="utf-8") as f:
                    problems += check_c_section(plant, entries[plant["name"]], dom, f.read(),
                                                source_of)
                if entries[plant["name"]]["c"]["refused"]:
                    refused += 1
                else:
                    compared += 1
        if len(entries) == len(PLANTS):
            problems += check_index(entries, dump_dom(pages["index"], profile, virtual_time_ms=500))
    for problem in problems:
        print(f"{NAME}: {problem}")
    if not problems:
        print(f"{NAME}: {len(entries)} pages render, animate, recompute "
              f"{2 * len(entries)}/{2 * len(entries)} fingerprints, chart every column and show "
              "the runner's numbers; the index lists them all; C against JavaScript: "
              f"{compared} compared in the browser as in Python, {refused} refused and said so")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
