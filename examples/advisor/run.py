#!/usr/bin/env python3
"""The efficiency advisor, end to end (SPEC §8, docs/advisor.md).

Starts the inventory API (inventory_api.py) on loopback, writes a grants file for it, and runs
per_item.js (13 calls) and collection.js (1 call) with `plimsoll run --grant inventory`. Prints
each run's call trace and the advisor's finding, and writes a small HTML report.

    examples/advisor/run.py [--plimsoll PATH] [--provider NAME] [--report FILE]

Exit status 0 when both runs answered as expected (the per-item loop: 13 calls and a fan_out
finding; the collection read: 1 call and no finding), 1 otherwise.
"""
import argparse
import html
import json
import os
import secrets
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def start_api(token):
    env = dict(os.environ, INVENTORY_TOKEN=token)
    api = subprocess.Popen([sys.executable, os.path.join(HERE, "inventory_api.py"), "0"],
                           stdout=subprocess.PIPE, text=True, env=env)
    line = api.stdout.readline().split()
    if len(line) != 2 or line[0] != "listening":
        api.kill()
        raise SystemExit("advisor example: the inventory API did not start")
    return api, int(line[1])


def run(plimsoll, provider, grants, script, token):
    env = dict(os.environ, INVENTORY_TOKEN=token)
    completed = subprocess.run(
        [plimsoll, "run", "--provider", provider, "--grant", "inventory", "--grants", grants,
         "--json", os.path.join(HERE, script)],
        capture_output=True, text=True, env=env, timeout=120)
    try:
        return json.loads(completed.stdout)
    except json.JSONDecodeError:
        raise SystemExit(f"advisor example: {script}: no result (exit {completed.returncode}): "
                         f"{completed.stdout}{completed.stderr}")


def describe(name, result):
    broker = result.get("broker", {})
    lines = [f"{name}: exit {result.get('exit_code')}, {broker.get('calls')} call(s), "
             f"{broker.get('denied')} denied; stdout: {result.get('stdout', '').strip()}"]
    for row in broker.get("routes", []):
        lines.append(f"  {row['count']} x {row['method']} {row['route']} -> {row['status']}")
    for advice in result.get("advice", []):
        lines.append(f"  advice: {advice['pattern']} on {advice['route']}: {advice['message']} "
                     f"({advice['extra_calls']} extra calls, ~{advice['added_latency_ms']:.2f} ms "
                     f"added, {advice['bytes']} bytes)")
    return "\n".join(lines)


def report(runs):
    rows = []
    for name, result in runs:
        broker = result.get("broker", {})
        routes = "".join(
            f"<tr><td>{html.escape(row['method'])}</td><td><code>{html.escape(row['route'])}"
            f"</code></td><td>{row['status']}</td><td>{row['count']}</td></tr>"
            for row in broker.get("routes", []))
        advice = "".join(
            f"<li class=\"finding\"><b>{html.escape(a['pattern'])}</b> on "
            f"<code>{html.escape(a['route'])}</code>: {html.escape(a['message'])} "
            f"({a['extra_calls']} extra calls, about {a['added_latency_ms']:.2f} ms added, "
            f"{a['bytes']} bytes moved)</li>"
            for a in result.get("advice", [])) or "<li>No finding.</li>"
        rows.append(
            f"<section id=\"{html.escape(name)}\"><h2>{html.escape(name)}</h2>"
            f"<p>{broker.get('calls', 0)} call(s), {broker.get('denied', 0)} denied; record "
            f"<code>{html.escape(result['record']['record_sha256'])}</code></p>"
            f"<table><tr><th>method</th><th>route</th><th>status</th><th>calls</th></tr>{routes}"
            f"</table><ul>{advice}</ul></section>")
    return ("<!doctype html><html><head><meta charset=\"utf-8\"><title>plimsoll advisor report"
            "</title><style>body{font-family:sans-serif;max-width:48rem;margin:2rem auto}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2rem .5rem}"
            "</style></head><body><h1>Efficiency advisor</h1>"
            "<p>What the advisor read: route templates, methods, statuses, sizes and latencies. "
            "Never paths, bodies or credentials.</p>" + "".join(rows) + "</body></html>\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plimsoll", default="plimsoll")
    parser.add_argument("--provider", default="embedded")
    parser.add_argument("--report", default="advisor-report.html")
    args = parser.parse_args()

    token = secrets.token_hex(24)
    api, port = start_api(token)
    try:
        with tempfile.TemporaryDirectory() as scratch:
            grants = os.path.join(scratch, "grants.yaml")
            with open(os.path.join(HERE, "grants.yaml.in")) as template:
                text = template.read().replace("@PORT@", str(port))
            with open(grants, "w") as out:
                out.write(text)
            runs = [(name, run(args.plimsoll, args.provider, grants, script, token))
                    for name, script in (("per-item", "per_item.js"),
                                         ("collection", "collection.js"))]
    finally:
        api.kill()
        api.wait()
    for name, result in runs:
        print(describe(name, result))
        if token in json.dumps(result):
            raise SystemExit("advisor example: the token appeared in a result")
    with open(args.report, "w") as out:
        out.write(report(runs))
    print(f"report: {args.report}")

    per_item, collection = runs[0][1], runs[1][1]
    ok = (per_item.get("exit_code") == 0 and per_item["broker"]["calls"] == 13
          and [a["pattern"] for a in per_item.get("advice", [])] == ["fan_out"]
          and collection.get("exit_code") == 0 and collection["broker"]["calls"] == 1
          and not collection.get("advice")
          and per_item["stdout"] == collection["stdout"])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
