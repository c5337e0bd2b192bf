#!/usr/bin/env python3
"""A sampler adapter for the Python, TypeScript and Go clients' bench programs (issue 16).

Starts `plimsolld --provider embedded --dev` on loopback, prepares the client (Python: the source
tree on PYTHONPATH; TypeScript: the pinned compiler from clients/typescript/install-dev-tools and a
build of the package in a private directory; Go: `go run` of the module's bench command), and runs
its bench program once. Each program measures, on one keep-alive connection each and with warm-up
excluded: `run_javascript("console.log(6*7)")` through the client, the same POST /v1/runs made with
the language's standard library alone (a fresh Plimsoll-Request-Id each), and a session cell
"1+1"; it prints one JSON line with the three p50s. This adapter turns it into the runner's summary
records:

    clients.LANG.raw_run   the standard library's request (the baseline)
    clients.LANG.run       through the client; target: at most +0.2 ms over raw (same run)
    clients.LANG.cell      a session cell round trip through the client

    client_bench.py --lang python|typescript|go --plimsolld PATH --runs N [--state DIR]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCH_DIR)
sys.path.insert(0, os.path.join(REPO, "tests", "common"))
import plimsolld  # noqa: E402

TIMEOUT_S = 900


def tools_dir(lang):
    """The same directory tests/clients/harness.py and scripts/bootstrap use."""
    cache = os.environ.get("PLIMSOLL_CACHE") or os.path.join(os.path.expanduser("~"), ".cache",
                                                             "plimsoll")
    return os.path.join(cache, f"clients-{lang}-tools")


def prepare(lang, state):
    """(argv prefix, env additions, cwd) of the language's bench program."""
    clients = os.path.join(REPO, "clients", lang)
    if lang == "python":
        return ([sys.executable, os.path.join(clients, "bench", "client_bench.py")],
                {"PYTHONPATH": os.path.join(clients, "src")}, clients)
    if lang == "typescript":
        tools = tools_dir(lang)
        subprocess.run([os.path.join(clients, "install-dev-tools"), tools], check=True,
                       stdout=subprocess.DEVNULL)
        build = os.path.join(state, "typescript-build")
        shutil.rmtree(build, ignore_errors=True)
        os.makedirs(build)
        for name in ("package.json", "tsconfig.json"):
            shutil.copy(os.path.join(clients, name), build)
        shutil.copytree(os.path.join(clients, "src"), os.path.join(build, "src"))
        os.symlink(os.path.join(tools, "node_modules"), os.path.join(build, "node_modules"))
        subprocess.run([os.path.join(tools, "node_modules", ".bin", "tsc"), "-p",
                        os.path.join(build, "tsconfig.json")], check=True)
        return (["node", os.path.join(clients, "bench", "client-bench.mjs"), "--package", build],
                {}, clients)
    if lang == "go":
        return (["go", "run", "./cmd/plimsoll-client-bench"],
                {"GOFLAGS": "-mod=mod", "GOTOOLCHAIN": "local"}, clients)
    raise ValueError(lang)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", required=True, choices=("python", "typescript", "go"))
    parser.add_argument("--plimsolld", required=True)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=0, help="accepted; the programs warm up")
    parser.add_argument("--state", default=None, help="a private directory for builds")
    options = parser.parse_args()
    names = {key: f"clients.{options.lang}.{key}" for key in ("raw_run", "run", "cell")}

    def fail(reason):
        for name in names.values():
            print(json.dumps({"scenario": name, "error": reason}))
        return 0

    state = options.state or os.path.join(REPO, "build", "bench-clients")
    os.makedirs(state, exist_ok=True)
    try:
        prefix, extra_env, cwd = prepare(options.lang, state)
    except (subprocess.CalledProcessError, OSError) as error:
        return fail(f"preparing the {options.lang} client failed: {error}")
    env = dict(os.environ, **extra_env)
    with plimsolld.Daemon(options.plimsolld, ["--provider", "embedded", "--dev"]) as daemon:
        url = f"http://127.0.0.1:{daemon.port}"
        try:
            done = subprocess.run(prefix + ["--url", url, "--runs", str(options.runs)], cwd=cwd,
                                  env=env, capture_output=True, text=True, timeout=TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return fail(f"the {options.lang} bench did not finish in {TIMEOUT_S} s")
    if done.returncode != 0:
        return fail(f"the {options.lang} bench exited {done.returncode}: {done.stderr[-500:]}")
    try:
        line = json.loads(done.stdout.strip().splitlines()[-1])
        values = {"raw_run": line["raw_run_p50_ms"], "run": line["client_run_p50_ms"],
                  "cell": line["cell_p50_ms"]}
        runs = int(line["runs"])
    except (ValueError, KeyError, IndexError, TypeError) as error:
        return fail(f"the {options.lang} bench printed no result line ({error}): "
                    f"{done.stdout[-300:]}")
    for key, name in names.items():
        print(json.dumps({"scenario": name, "unit": "ms",
                          "summary": {"n": runs, "p50": float(values[key])},
                          "facts": {"client": options.lang}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
