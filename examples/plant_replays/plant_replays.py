#!/usr/bin/env python3
"""Replay pages for the nine plants (docs/exams.md, "Replay pages").

For each plant (sims/NAME, docs/plants/NAME.md) runs the passing and the failing example controller
(sims/NAME/examples/{passing,failing}.js) as ordinary projects through plimsolld's API (the
controller the only file sent; one step `plimsoll-trial --plant NAME --trajectory trajectory.f64 --
qjs --controller controller.js`, the default scenario; the trajectory as the artifact), checks what
can be checked, and writes a self-contained page per plant (NAME.html: no network, no third-party
script), index.html listing the nine, and plant_replays.json (the runners' summaries and verdicts).

The passing controller runs a second time in C (sims/NAME/examples/passing.c, the same law), as an
ordinary project too: controller.c the only file, one step `plimsoll-trial ... --build plimsoll-cc
--plant NAME controller.c -o controller.wasm -- plimsoll-wasm-controller controller.wasm` (the runner
compiles it once the scenario is gone, docs/exams.md "Hidden scenarios and C controllers"). The page
compares its trajectory with the JavaScript one tick by tick in the browser. A provider that refuses
C projects (`embedded`: refused unsupported, nothing ran) gets a page that says so.

    plant_replays.py --plimsolld BIN --image DIR [--provider linux] [--out build/plant-replays]
    plant_replays.py --plimsolld BIN --provider embedded [--out ...]  (in process: no image)
    plant_replays.py --url http://127.0.0.1:8470 [--out ...]          (a daemon you already run)

The checks: every trajectory's SHA-256 is the fingerprint its runner printed; its size is ticks ×
row_doubles × 8 with row_doubles the plant's documented column count; ended_at_seconds is ticks ×
the documented tick; the passing controller passed by the plant's rule (finished, score at least the
rule's) and the failing one did not; where the C run ran, it passed too, and its trajectory is the
JavaScript one's bit for bit when the law calls no math library function (plants.py, math_calls).
Exit 0 when every run completed and checked out; 1 otherwise
(each reason on a line; the pages are written anyway, to look at).
"""
import argparse
import base64
import html
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from exams_common import (REPO, Client, add_daemon_options, check_daemon_options,  # noqa: E402
                          compare_trajectories, daemon_url, embed, run_trial,
                          without_trajectories, write_text)
from plants import BY_NAME, PLANTS  # noqa: E402
from plimsoll import Reason, RefusedError  # noqa: E402

TOOL = "plant_replays"
EXAMPLES = ("passing", "failing")
DATA_MARKER = "/*PLANT_DATA*/null"


def passed(plant, summary):
    """The plant's rule (src/trial/plant_examples_test.cc): finished, score at least the rule's."""
    return summary["ended"] == "finished" and summary["score"] >= plant["passing_score"]


def example_path(plant, example, extension="js"):
    return os.path.join("sims", plant["name"], "examples", f"{example}.{extension}")


def read_example(path):
    with open(os.path.join(REPO, path), encoding="utf-8") as f:
        return f.read()


def run_plant(client, plant):
    runs = []
    for example in EXAMPLES:
        path = example_path(plant, example)
        run = run_trial(client, plant["name"], example, read_example(path), TOOL)
        run["controller_file"] = path
        run["passed"] = passed(plant, run["summary"])
        runs.append(run)
    return runs


def run_plant_in_c(client, plant, javascript_run):
    """The passing example again in C. Returns {"controller_file", "controller", "run" (the run,
    or None when the daemon refused: nothing ran), "refused" (the refusal's mark and message, or
    None), "comparison" (compare_trajectories of C against JavaScript, or None)}."""
    path = example_path(plant, "passing", "c")
    source = read_example(path)
    entry = {"controller_file": path, "controller": source, "run": None, "refused": None,
             "comparison": None}
    try:
        run = run_trial(client, plant["name"], "passing", source, TOOL, language="c")
    except RefusedError as error:
        if error.not_dispatched != Reason.UNSUPPORTED:
            raise SystemExit(f"{TOOL}: {plant['name']} passing in C: refused: {error}")
        entry["refused"] = {"reason": error.not_dispatched.value, "message": error.message}
        return entry
    run["controller_file"] = path
    run["passed"] = passed(plant, run["summary"])
    entry["run"] = run
    entry["comparison"] = compare_trajectories(
        base64.b64decode(run["trajectory_base64"]),
        base64.b64decode(javascript_run["trajectory_base64"]), len(plant["columns"]))
    return entry


def describe_comparison(plant, comparison):
    """One line on how the C and the JavaScript trajectories compare."""
    if comparison["identical"]:
        return f"identical, all {comparison['ticks']} ticks"
    if comparison["column"] is None:
        return f"the same up to tick {comparison['tick']}, where one of them ends"
    symbol = plant["columns"][comparison["column"]]["symbol"]
    return (f"they part at tick {comparison['tick']}, column {comparison['column']} ({symbol}): "
            f"C {comparison['values'][0]} ({comparison['bits'][0]}), JavaScript "
            f"{comparison['values'][1]} ({comparison['bits'][1]})")


def problems_of(plant, runs, in_c):
    problems = []
    width = len(plant["columns"])
    checked = runs + ([in_c["run"]] if in_c["run"] else [])
    for run in checked:
        s = run["summary"]
        what = f"{plant['name']} {run['label']}" + (" in C" if run["language"] == "c" else "")
        if s["plant"] != plant["name"]:
            problems.append(f"{what}: the runner says plant {s['plant']!r}")
        if s["row_doubles"] != width:
            problems.append(f"{what}: the runner writes {s['row_doubles']} doubles a row, the page "
                            f"names {width} columns")
        if s["trajectory_bytes"] != s["ticks"] * s["row_doubles"] * 8:
            problems.append(f"{what}: {s['trajectory_bytes']} trajectory bytes for {s['ticks']} "
                            f"ticks of {s['row_doubles']} doubles")
        if not math.isclose(s["ended_at_seconds"], s["ticks"] * plant["tick_seconds"],
                            rel_tol=1e-9, abs_tol=1e-12):
            problems.append(f"{what}: ended at {s['ended_at_seconds']} s after {s['ticks']} ticks, "
                            f"not ticks × the documented {plant['tick_seconds']} s")
    passing, failing = runs
    if not passing["passed"]:
        problems.append(f"{plant['name']}: the passing example did not pass (ended "
                        f"{passing['summary']['ended']}, score {passing['summary']['score']}, "
                        f"the rule {plant['passing_score']})")
    if failing["passed"]:
        problems.append(f"{plant['name']}: the failing example passed (score "
                        f"{failing['summary']['score']})")
    if in_c["run"]:
        if not in_c["run"]["passed"]:
            problems.append(f"{plant['name']}: the passing example in C did not pass (ended "
                            f"{in_c['run']['summary']['ended']}, score "
                            f"{in_c['run']['summary']['score']})")
        if not in_c["comparison"]["identical"] and not plant["math_calls"]:
            problems.append(f"{plant['name']}: C against JavaScript, a law of exact arithmetic: "
                            f"{describe_comparison(plant, in_c['comparison'])}")
    return problems


def write_page(plant, runs, in_c, out_dir):
    """NAME.html. The C run's comparison is not embedded: the page computes its own."""
    with open(os.path.join(HERE, "page.html.in"), encoding="utf-8") as f:
        template = f.read()
    page = template.replace("@TITLE@", html.escape(plant["title"]))
    c = {key: in_c[key] for key in ("controller_file", "controller", "run", "refused")}
    page = embed(page, DATA_MARKER, {"plant": plant, "runs": runs, "c": c})
    write_text(os.path.join(out_dir, f"{plant['name']}.html"), page)


def outcome(run):
    s = run["summary"]
    return f"{s['ended']}, score {s['score']}"


def c_cell(plant, in_c):
    """The index's cell for the passing example in C against JavaScript."""
    if in_c["refused"]:
        return (f'<span class="c-verdict no">not run</span>: refused '
                f'<span class="c-refused">{html.escape(in_c["refused"]["reason"])}</span> '
                f'(nothing ran)')
    run, comparison = in_c["run"], in_c["comparison"]
    verdict = "identical" if comparison["identical"] else "differs"
    where = (f'all <span class="c-ticks">{comparison["ticks"]}</span> ticks' if
             comparison["identical"] else
             f'from tick <span class="c-tick">{comparison["tick"]}</span>')
    return (f'<span class="c-verdict {"ok" if comparison["identical"] else "no"}">{verdict}'
            f'</span>, {where}; in C {"passed" if run["passed"] else "did not pass"}, '
            f'{html.escape(run["isolation"])} ({html.escape(run["provider"])})<br>'
            f'<code class="fingerprint">{run["summary"]["fingerprint"]}</code>')


def write_index(entries, out_dir):
    """index.html: one row per plant, built here from the runners' summaries (no script)."""
    rows = []
    for plant, runs, in_c in entries:
        cells = [f'<td class="plant"><a href="{plant["name"]}.html">{html.escape(plant["title"])}</a>'
                 f' <code>{plant["name"]}</code></td>',
                 f'<td class="rule">{html.escape(plant["rule"])}</td>']
        for run in runs:
            verdict = "passed" if run["passed"] else "did not pass"
            cells.append(f'<td class="{run["label"]}-outcome"><span class="'
                         f'{"ok" if run["passed"] else "no"}">{verdict}</span>: '
                         f'<span class="ended">{html.escape(run["summary"]["ended"])}</span>, '
                         f'score <span class="score">{run["summary"]["score"]!r}</span>, '
                         f'<span class="ticks">{run["summary"]["ticks"]}</span> ticks, '
                         f'{html.escape(run["isolation"])} ({html.escape(run["provider"])})<br>'
                         f'<code class="fingerprint">{run["summary"]["fingerprint"]}</code></td>')
        cells.append(f'<td class="c-outcome">{c_cell(plant, in_c)}</td>')
        rows.append(f'<tr id="plant-{plant["name"]}">{"".join(cells)}</tr>')
    with open(os.path.join(HERE, "index.html.in"), encoding="utf-8") as f:
        template = f.read()
    write_text(os.path.join(out_dir, "index.html"), template.replace("@ROWS@", "\n".join(rows)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_daemon_options(parser)
    parser.add_argument("--out", default=os.path.join(REPO, "build", "plant-replays"),
                        help="the directory for the pages (default build/plant-replays)")
    parser.add_argument("--plant", action="append", choices=sorted(BY_NAME),
                        help="only this plant (repeatable; default all nine)")
    options = parser.parse_args()
    check_daemon_options(parser, options)
    chosen = [BY_NAME[name] for name in options.plant] if options.plant else PLANTS
    with daemon_url(options, TOOL) as url, Client(url) as client:
        entries = []
        for plant in chosen:
            runs = run_plant(client, plant)
            entries.append((plant, runs, run_plant_in_c(client, plant, runs[0])))
    problems = [problem for plant, runs, in_c in entries
                for problem in problems_of(plant, runs, in_c)]
    for plant, runs, in_c in entries:
        write_page(plant, runs, in_c, options.out)
    write_index(entries, options.out)
    summaries = {plant["name"]: {"passing_score": plant["passing_score"],
                                 "tick_seconds": plant["tick_seconds"],
                                 "runs": without_trajectories(runs),
                                 "c": {"controller_file": in_c["controller_file"],
                                       "run": (without_trajectories([in_c["run"]])[0]
                                               if in_c["run"] else None),
                                       "refused": in_c["refused"],
                                       "comparison": in_c["comparison"]}}
                 for plant, runs, in_c in entries}
    write_text(os.path.join(options.out, "plant_replays.json"),
               json.dumps({"plants": summaries}, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    for plant, runs, in_c in entries:
        for run in runs + ([in_c["run"]] if in_c["run"] else []):
            s = run["summary"]
            label = run["label"] + (" C" if run["language"] == "c" else "")
            print(f"{plant['name']:10} {label:9} {run['isolation']:9} "
                  f"{'passed' if run['passed'] else 'did not pass':12} ended {s['ended']} after "
                  f"{s['ticks']} ticks, score {s['score']}, fingerprint {s['fingerprint']}")
        if in_c["refused"]:
            print(f"{plant['name']:10} C against JavaScript: not run, refused "
                  f"{in_c['refused']['reason']} (nothing ran)")
        else:
            print(f"{plant['name']:10} C against JavaScript: "
                  f"{describe_comparison(plant, in_c['comparison'])}")
    print(f"index: {os.path.abspath(os.path.join(options.out, 'index.html'))}")
    for problem in problems:
        print(f"{TOOL}: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
