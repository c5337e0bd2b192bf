#!/usr/bin/env python3
"""Runs one agent-integration example twice, records what it did, and checks it.

    examples.py --name NAME -- COMMAND...

Run by the integration suites (clients/python/integrations/*, clients/typescript/integrations/)
under the harness's environment (tests/clients/README.md), with COMMAND the example as a user
runs it (`python main.py`, `node main.ts`) from the installed packages. Each example runs twice
against a real daemon, through the adversary proxy's `record` mode (nothing is changed, every
exchange is written down):

  ran      at a floor the daemon meets: the code runs, and what the example prints holds the
           run's output;
  refused  at a floor above the daemon's tier: the daemon refuses every run (`isolation`), no
           code runs, and what the example prints says so.

The scripted models of the examples make no model call. Each run leaves
PLIMSOLL_TEST_REPLAYS/NAME-OUTCOME.json (the command, its output, the daemon exchanges, the
checks made), the input of tests/clients/replay_pages.py. Exit status 1 when a check fails.

Which daemon an example needs is in EXAMPLES: the embedded ones run in the nolinux part, the
linux ones in the linux part (`all`: both); an example of the other part is not run (the part
that owns it runs it). On a host that cannot run the linux provider (PLIMSOLL_TEST_LINUX_SKIP)
the linux examples are skipped with that reason, the only skip.
"""
import argparse
import json
import os
import subprocess
import sys
import time

RUN_TIMEOUT_SECONDS = 240

# name -> (daemon, floor of the run that runs, floor of the run that is refused). None: the
# integration's own default floor (container).
EXAMPLES = {
    "ai-sdk": ("embedded", "process", None),
    "mastra": ("embedded", "process", None),
    "trigger": ("embedded", "process", None),
    "agno": ("embedded", "process", None),
    "crewai": ("embedded", "process", None),
    "mcp": ("embedded", "process", None),
    "adk": ("linux", None, "vm"),  # ADK's executor runs Python: the linux provider
}
FLOOR_VARIABLES = ("PLIMSOLL_FLOOR", "PLIMSOLL_MCP_FLOOR")


def is_run(exchange):
    """A call that would run code: a fresh run or a session call (POST .../runs)."""
    path = exchange["path"].split("?")[0]
    return exchange["method"] == "POST" and path.endswith("/runs")


def answered_result(exchange):
    answer = exchange.get("answer")
    return exchange["status"] == 200 and isinstance(answer, dict) and "record" in answer


def refusal_mark(exchange):
    answer = exchange.get("answer")
    if exchange["status"] < 400 or not isinstance(answer, dict):
        return None
    error = answer.get("error") or {}
    return error.get("not_dispatched")


def check(outcome, transcript):
    """The problems of one recorded run (empty when every check holds)."""
    problems = []
    if transcript["exit"] != 0:
        problems.append(f"exited {transcript['exit']}")
    runs = [e for e in transcript["exchanges"] if is_run(e)]
    if outcome == "ran":
        results = [e for e in runs if answered_result(e)]
        if not results:
            problems.append("no run was answered with a result")
        for exchange in results:
            stdout = (exchange["answer"].get("stdout") or "").strip()
            if stdout and stdout.splitlines()[0] not in transcript["stdout"]:
                problems.append(f"the run's output {stdout.splitlines()[0]!r} is not in what the "
                                "example printed")
    else:
        if any(answered_result(e) for e in runs):
            problems.append("a run was answered with a result above the floor it broke")
        # What the daemon refused (a run or a session open), it refused for isolation; the
        # client may also refuse before sending, from the tier the daemon describes.
        posts = [e for e in transcript["exchanges"] if e["method"] == "POST"]
        marks = sorted({str(refusal_mark(e)) for e in posts if e["status"] >= 400} - {"isolation"})
        if marks:
            problems.append(f"calls were refused for {marks}, not isolation")
        if "isolation" not in transcript["stdout"]:
            problems.append("what the example printed does not say nothing ran (isolation)")
    return problems


def run_once(name, outcome, floor, base_url, command, replays):
    key = f"{name}-{outcome}"
    record = os.path.join(replays, key + ".jsonl")
    if os.path.exists(record):
        os.unlink(record)
    env = dict(os.environ)
    env["PLIMSOLL_URL"] = f"{base_url}/record/{key}"
    for variable in FLOOR_VARIABLES:
        env.pop(variable, None)
        if floor:
            env[variable] = floor
    started = time.monotonic()
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True,
                              timeout=RUN_TIMEOUT_SECONDS)
        status, stdout, stderr = done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired as timeout:
        status = "timeout"
        stdout = (timeout.stdout or b"").decode("utf-8", "replace") if isinstance(
            timeout.stdout, bytes) else (timeout.stdout or "")
        stderr = f"did not finish in {RUN_TIMEOUT_SECONDS} s"
    seconds = time.monotonic() - started
    exchanges = []
    if os.path.exists(record):
        with open(record) as lines:
            exchanges = [json.loads(line) for line in lines if line.strip()]
    transcript = {
        "format": "plimsoll.integration-replay.v1",
        "name": name,
        "outcome": outcome,
        "floor": floor or "container (the integration's default)",
        "command": " ".join(os.path.basename(c) if os.path.isabs(c) else c for c in command),
        "exit": status,
        "seconds": round(seconds, 2),
        "stdout": stdout,
        "stderr": stderr[-4000:],
        "exchanges": exchanges,
    }
    problems = check(outcome, transcript)
    transcript["checks"] = "passed" if not problems else problems
    with open(os.path.join(replays, key + ".json"), "w") as out:
        json.dump(transcript, out, indent=1)
    verdict = "ok" if not problems else "FAILED: " + "; ".join(problems)
    print(f"example {name} ({outcome}, floor {transcript['floor']}): {len(exchanges)} exchanges, "
          f"{seconds:.1f} s: {verdict}")
    if problems:
        print(f"  stdout: {stdout[-2000:]}\n  stderr: {stderr[-2000:]}")
    return not problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", required=True, choices=sorted(EXAMPLES))
    parser.add_argument("command", nargs="+")
    options = parser.parse_args()
    daemon, ran_floor, refused_floor = EXAMPLES[options.name]
    part = os.environ.get("PLIMSOLL_TEST_PART", "all")
    if (daemon == "linux" and part == "nolinux") or (daemon == "embedded" and part == "linux"):
        return 0  # the other part of the same run owns this example
    replays = os.environ.get("PLIMSOLL_TEST_REPLAYS", "")
    variable = "PLIMSOLL_TEST_ADVERSARY_URL" if daemon == "embedded" else \
        "PLIMSOLL_TEST_ADVERSARY_LINUX_URL"
    base_url = os.environ.get(variable, "")
    host_reason = os.environ.get("PLIMSOLL_TEST_LINUX_SKIP", "")
    if daemon == "linux" and not base_url and host_reason and replays:
        print(f"skipped: example {options.name}: {host_reason}")
        with open(os.path.join(replays, options.name + ".skipped"), "w") as out:
            out.write(host_reason + "\n")
        return 0
    if not replays or not base_url:
        print(f"example {options.name}: PLIMSOLL_TEST_REPLAYS and {variable} must be set "
              "(tests/clients/harness.py sets them)")
        return 1
    ok = run_once(options.name, "ran", ran_floor, base_url, options.command, replays)
    ok = run_once(options.name, "refused", refused_floor, base_url, options.command,
                  replays) and ok
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
