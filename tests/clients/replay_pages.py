#!/usr/bin/env python3
"""The agent integrations' replay pages: made from recorded example runs, checked in Chromium.

    replay_pages.py --replays DIR [--replays DIR ...] --out DIR [--check]

Reads the transcripts tests/clients/examples.py wrote (NAME-ran.json, NAME-refused.json, or
NAME.skipped naming the host precondition that kept an example from running) and writes one
static page per integration, OUT/NAME.html, and OUT/index.html: for each run, the tool call the
scripted model made (the code and floor the integration sent), what the sandbox did (the
daemon's answer: tier, exit code, record digest, or the refusal and its reason) and the result
the framework handed back (what the example printed). A page is self-contained: no network, no
external file; a small script steps through the calls, and everything is shown without it.

--check opens every page in headless Chromium (Debian's /usr/bin/chromium) and reads the DOM
after the script ran: the page must say it is ready with the number of calls the transcripts
hold, show both runs, and, for the refused run, "nothing ran". Exit status 1 when an
integration has no transcript (and no recorded skip), a transcript failed its checks, or a page
fails its check.
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

INTEGRATIONS = {
    "ai-sdk": "Vercel AI SDK (executeCode tool)",
    "mastra": "Mastra (createTool)",
    "trigger": "Trigger.dev (schemaTask as an AI tool)",
    "adk": "Google ADK (BaseCodeExecutor)",
    "agno": "Agno (Toolkit)",
    "crewai": "CrewAI (BaseTool)",
    "mcp": "MCP server (run_code over stdio)",
}
OUTCOMES = ("ran", "refused")
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync", "--virtual-time-budget=2000"]

STYLE = """
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 72rem; color: #1d2330; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
.run { border: 1px solid #ccd3dd; border-radius: 6px; margin: 1rem 0; padding: 0 1rem 1rem; }
.ran h2 { color: #17603a; } .refused h2 { color: #8a2c16; }
.call { display: grid; grid-template-columns: 1fr 1fr 1fr; gap: .75rem; margin: .75rem 0; }
.call > div { background: #f5f7fa; border-radius: 4px; padding: .5rem .75rem; min-width: 0; }
.call h3 { font-size: .8rem; text-transform: uppercase; letter-spacing: .05em; margin: 0 0 .3rem; }
pre { white-space: pre-wrap; word-break: break-all; margin: .2rem 0; font-size: 13px; }
.other { color: #5b6472; font-size: 13px; } .hidden { display: none; }
nav button { margin-right: .5rem; } .verdict { font-weight: 600; }
"""

SCRIPT = """
(function () {
  var calls = Array.prototype.slice.call(document.querySelectorAll('.call'));
  var shown = calls.length;
  function show(n) {
    shown = n;
    calls.forEach(function (c, i) { c.classList.toggle('hidden', i >= n); });
    document.getElementById('position').textContent = n + ' of ' + calls.length + ' calls shown';
  }
  document.getElementById('restart').onclick = function () { show(0); };
  document.getElementById('step').onclick = function () { show(Math.min(shown + 1, calls.length)); };
  show(calls.length);
  document.documentElement.setAttribute('data-replay-ready', String(calls.length));
})();
"""


def esc(value):
    return html.escape(str(value), quote=True)


def is_call(exchange):
    """A call the sandbox answers: a run, a session open or a session call (a POST)."""
    return exchange["method"] == "POST" and exchange["path"].startswith("/v1/")


def payload_of(request):
    """(language, code) of a run request's payload."""
    if not isinstance(request, dict):
        return "?", ""
    for kind in ("javascript", "python"):
        if isinstance(request.get(kind), dict):
            return kind, request[kind].get("code", "")
    if isinstance(request.get("cell"), dict):
        return request["cell"].get("language", "?") + " cell", request["cell"].get("code", "")
    if isinstance(request.get("project"), dict):
        steps = request["project"].get("steps") or []
        return "project", "\n".join(" ".join(step.get("argv", [])) for step in steps)
    return "?", ""


def sandbox_column(exchange):
    answer = exchange.get("answer")
    status = exchange["status"]
    if status == 200 and isinstance(answer, dict) and "record" in answer:
        record = answer.get("record") or {}
        lines = [f"ran: exit {answer.get('exit_code')}"
                 + (" (timed out)" if answer.get("timed_out") else ""),
                 f"tier: {answer.get('isolation')} (provider {answer.get('provider')})",
                 f"record_sha256: {record.get('record_sha256', '?')}"]
        if answer.get("stdout"):
            lines.append("stdout: " + answer["stdout"].rstrip()[:400])
        if answer.get("stderr"):
            lines.append("stderr: " + answer["stderr"].rstrip()[:400])
        return "\n".join(lines)
    if status == 201 and isinstance(answer, dict):
        return (f"session opened: tier {answer.get('isolation')}"
                + (f", id {str(answer.get('session_id') or answer.get('id'))[:12]}…"))
    error = (answer or {}).get("error") if isinstance(answer, dict) else None
    if error:
        mark = error.get("not_dispatched")
        head = f"nothing ran: {mark}" if mark else f"error {error.get('code')}"
        return f"{head} (HTTP {status})\n{error.get('message', '')}"
    return f"HTTP {status}"


def run_section(name, transcript, counter):
    outcome = transcript["outcome"]
    runs = [e for e in transcript["exchanges"] if is_call(e)]
    others = [e for e in transcript["exchanges"] if e not in runs]
    title = ("It runs" if outcome == "ran" else "It is refused: nothing ran")
    parts = [f'<section class="run {esc(outcome)}" id="{esc(outcome)}">',
             f"<h2>{esc(title)}</h2>",
             f"<p>Floor: <b>{esc(transcript['floor'])}</b> · command: "
             f"<code>{esc(transcript['command'])}</code> · exit {esc(transcript['exit'])} · "
             f"{esc(transcript['seconds'])} s · checks: "
             f"<span class=\"verdict\">{esc(transcript['checks'] if transcript['checks'] == 'passed' else '; '.join(transcript['checks']))}</span></p>"]
    if not runs:
        parts.append("<p>No call reached the daemon: the client refused before sending.</p>")
    for position, exchange in enumerate(runs):
        counter[0] += 1
        handed_back = (transcript["stdout"].strip()[-1500:] if position == len(runs) - 1
                       else "(the framework's answer follows the last call)")
        if exchange["path"].split("?")[0] == "/v1/sessions":
            language, code = "open a session", ""
        else:
            language, code = payload_of(exchange.get("request"))
        floor = (exchange.get("request") or {}).get("minimum_isolation") or "none"
        parts.append(
            f'<div class="call" data-call="{counter[0]}">'
            f"<div><h3>Tool call</h3><pre>{esc(language)}, floor {esc(floor)}\n{esc(code)}</pre></div>"
            f"<div><h3>Sandbox</h3><pre>{esc(exchange['method'])} {esc(exchange['path'])}\n"
            f"{esc(sandbox_column(exchange))}</pre></div>"
            f"<div><h3>Result</h3><pre>{esc(handed_back)}</pre></div>"
            "</div>")
    if others:
        parts.append('<p class="other">Other calls: ' + ", ".join(
            f"{esc(e['method'])} {esc(e['path'])} → {esc(e['status'])}" for e in others) + "</p>")
    parts.append("</section>")
    return "\n".join(parts)


def page(name, transcripts, skipped):
    counter = [0]
    body = []
    if skipped:
        body.append(f"<p>skipped: {esc(skipped)}</p>")
    for outcome in OUTCOMES:
        if outcome in transcripts:
            body.append(run_section(name, transcripts[outcome], counter))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>plimsoll replay: {esc(INTEGRATIONS[name])}</title><style>{STYLE}</style></head>
<body><h1>{esc(INTEGRATIONS[name])}: a recorded run</h1>
<p>A scripted model (no model call) asked for code to run; the integration sent it to a real
plimsolld; the framework handed the result back. Recorded by tests/clients/examples.py from
<code>examples/integrations/{esc(name)}/</code>. <a href="index.html">All integrations</a></p>
<nav><button id="restart" type="button">Start over</button><button id="step" type="button">Next call</button>
<span id="position"></span></nav>
{"".join(body)}
<script>{SCRIPT}</script></body></html>
"""


def index(entries):
    rows = "".join(
        f'<tr><td><a href="{esc(name)}.html">{esc(INTEGRATIONS[name])}</a></td>'
        f"<td>{esc(state)}</td></tr>" for name, state in entries)
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>plimsoll: agent integration replays</title><style>{STYLE}</style></head>
<body><h1>Agent integrations: recorded runs</h1>
<table><tr><th>Integration</th><th>Runs</th></tr>{rows}</table>
<script>document.documentElement.setAttribute('data-replay-ready', '{len(entries)}');</script>
</body></html>
"""


def load(replay_dirs):
    """name -> ({outcome: transcript}, skip reason or "")."""
    found = {name: ({}, "") for name in INTEGRATIONS}
    for directory in replay_dirs:
        if not os.path.isdir(directory):
            continue
        for entry in sorted(os.listdir(directory)):
            match = re.fullmatch(r"([a-z-]+)-(ran|refused)\.json", entry)
            skip = re.fullmatch(r"([a-z-]+)\.skipped", entry)
            if match and match.group(1) in INTEGRATIONS:
                with open(os.path.join(directory, entry)) as source:
                    found[match.group(1)][0][match.group(2)] = json.load(source)
            elif skip and skip.group(1) in INTEGRATIONS:
                with open(os.path.join(directory, entry)) as source:
                    found[skip.group(1)] = (found[skip.group(1)][0], source.read().strip())
    return found


def dump_dom(path, profile):
    done = subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                           "file://" + os.path.abspath(path)],
                          capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout


def check_page(path, name, transcripts, profile):
    status, dom = dump_dom(path, profile)
    if status != 0 or "<html" not in dom:
        return [f"{path}: chromium exited {status} with no DOM"]
    problems = []
    calls = sum(1 for t in transcripts.values() for e in t["exchanges"] if is_call(e))
    ready = re.search(r'data-replay-ready="(\d+)"', dom)
    if not ready or int(ready.group(1)) != calls:
        problems.append(f"{path}: the script did not report {calls} calls ready "
                        f"({ready.group(1) if ready else 'no data-replay-ready'})")
    shown = dom.count('class="call"')
    if shown != calls:
        problems.append(f"{path}: {shown} calls shown, {calls} recorded")
    for outcome in transcripts:
        if f'id="{outcome}"' not in dom:
            problems.append(f"{path}: no {outcome} section")
    if "refused" in transcripts and "nothing ran" not in dom:
        problems.append(f"{path}: the refused run does not say nothing ran")
    if INTEGRATIONS[name] not in html.unescape(dom):
        problems.append(f"{path}: the integration's name is not on the page")
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replays", action="append", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--check", action="store_true")
    options = parser.parse_args()
    os.makedirs(options.out, exist_ok=True)
    problems, entries, pages = [], [], []
    for name, (transcripts, skipped) in load(options.replays).items():
        missing = [o for o in OUTCOMES if o not in transcripts]
        if missing and not skipped:
            problems.append(f"{name}: no transcript of the {' and '.join(missing)} run")
        for outcome, transcript in transcripts.items():
            if transcript.get("checks") != "passed":
                problems.append(f"{name} ({outcome}): {transcript.get('checks')}")
        path = os.path.join(options.out, f"{name}.html")
        with open(path, "w") as out:
            out.write(page(name, transcripts, skipped))
        pages.append((path, name, transcripts))
        entries.append((name, f"skipped: {skipped}" if skipped else ", ".join(sorted(transcripts))))
        if skipped:
            print(f"skipped: replay {name}: {skipped}")
    with open(os.path.join(options.out, "index.html"), "w") as out:
        out.write(index(entries))
    print(f"replay pages: {len(pages)} + index in {options.out}")
    if options.check:
        if not os.access(CHROMIUM, os.X_OK):
            problems.append(f"{CHROMIUM} is missing (scripts/bootstrap installs Debian's chromium)")
        else:
            profile = tempfile.mkdtemp(prefix="replay-pages-chromium-")
            try:
                for path, name, transcripts in pages:
                    found = check_page(path, name, transcripts, profile)
                    problems += found
                    if not found:
                        print(f"chromium: {os.path.basename(path)}: ok")
            finally:
                shutil.rmtree(profile, ignore_errors=True)
    for problem in problems:
        print(f"replay pages: {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
