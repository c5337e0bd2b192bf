#!/usr/bin/env python3
"""schemathesis against api/openapi.yaml and a live plimsolld (embedded provider).

Creates a caller store with one token (scopes runs, describe, sessions), starts
plimsolld on loopback (port 0) with it, and runs schemathesis over every
operation of the API listener, then over /metrics on the metrics listener:
every phase (examples, coverage, fuzzing; and stateful on the API listener,
where the contract's links chain a session's open, calls, state and close),
every built-in check but
the one schemathesis.toml turns off (with its reason), and
contract_checks.py's two (the not-dispatched mark, the request-ID echo). A
fixed seed and a bounded example count keep it deterministic and short; the
daemon must then stop cleanly on SIGTERM.

Usage: contract_test.py PLIMSOLLD PLIMSOLL_CLI OPENAPI_YAML
Environment: PLIMSOLL_CONTRACT_EXAMPLES (default 40 per operation),
PLIMSOLL_CONTRACT_SEED (default 13), PLIMSOLL_RELIABILITY_VENV (default
${PLIMSOLL_CACHE:-~/.cache/plimsoll}/reliability-venv, made by scripts/bootstrap).
Exits 77 (CTest: skipped) when the venv with schemathesis is missing.
"""
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
import plimsolld  # noqa: E402


def venv_dir():
    explicit = os.environ.get("PLIMSOLL_RELIABILITY_VENV")
    if explicit:
        return explicit
    cache = os.environ.get("PLIMSOLL_CACHE") or os.path.expanduser("~/.cache/plimsoll")
    return os.path.join(cache, "reliability-venv")


def schemathesis(tool, contract, url, token, seed, examples, phases, extra):
    command = [tool, "--config-file", os.path.join(HERE, "schemathesis.toml"), "--no-color",
               "run", contract, "--url", url, "--seed", str(seed),
               "--max-examples", str(examples), "--workers", "1",
               "--phases", phases, "--checks", "all",
               "--exclude-checks", "positive_data_acceptance",
               "--request-timeout", "30", "--suppress-health-check", "all"] + extra
    if token:
        command += ["--header", f"Authorization: Bearer {token}"]
    environment = dict(os.environ, SCHEMATHESIS_HOOKS="contract_checks",
                       PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    print("+", " ".join(c if "Bearer" not in c else "Authorization: Bearer <token>" for c in command),
          flush=True)
    return subprocess.run(command, env=environment).returncode


def main():
    binary, cli, contract = sys.argv[1:4]
    tool = os.path.join(venv_dir(), "bin", "schemathesis")
    if not os.access(tool, os.X_OK):
        print(f"skipped: {tool} is missing (scripts/bootstrap installs it from "
              "tests/reliability/requirements.lock)")
        return 77
    examples = int(os.environ.get("PLIMSOLL_CONTRACT_EXAMPLES", "40"))
    seed = int(os.environ.get("PLIMSOLL_CONTRACT_SEED", "13"))
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="plimsoll-contract-") as scratch:
        store = os.path.join(scratch, "callers.db")
        token = subprocess.run(
            [cli, "callers", "create", "contract", "--scope", "runs,describe,sessions",
             "--store", store], check=True, capture_output=True, text=True).stdout.strip()
        arguments = ["--provider", "embedded", "--callers", store, "--evidence-interval-ms", "0"]
        failures = []
        with plimsolld.Daemon(binary, arguments, metrics=True) as daemon:
            # Stateful: the contract's links (open a session, then call it, read
            # its state, close it) chain real session IDs.
            if schemathesis(tool, contract, f"http://127.0.0.1:{daemon.port}", token, seed,
                            examples, "examples,coverage,fuzzing,stateful",
                            ["--exclude-path", "/metrics"]) != 0:
                failures.append("schemathesis found disagreements on the API listener")
            # /metrics alone has no links to chain: no stateful phase.
            if schemathesis(tool, contract, f"http://127.0.0.1:{daemon.metrics_port}", "", seed,
                            examples, "examples,coverage,fuzzing",
                            ["--include-path", "/metrics"]) != 0:
                failures.append("schemathesis found disagreements on the metrics listener")
        failures += daemon.problems
    for failure in failures:
        print("FAIL:", failure)
    print(f"contract: {len(failures)} failure(s) in {time.monotonic() - started:.1f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
