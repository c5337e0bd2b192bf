#!/usr/bin/env python3
"""The oracle (SPEC §10, docs/exams.md): plimsoll's flagship exam, reproduced.

Runs the accepted cart-pole controller (accepted.js, u = 40θ + 5ω + x + v) twice and the draft
(draft.js, the x and v signs flipped) once, each as an ordinary project through plimsolld's API
(the Python client; the controller is the only file sent), checks what can be checked (every
trajectory's SHA-256 is the fingerprint its runner printed; the two accepted runs agree), and
writes a self-contained HTML report (report.html: no network, no third-party script) and the raw
summaries beside it (report.json).

    oracle.py --plimsolld BIN --image DIR [--provider linux] [--out build/oracle/report.html]
    oracle.py --plimsolld BIN --provider embedded [--out ...]  (in process: no image needed)
    oracle.py --url http://127.0.0.1:8470 [--out ...]          (a daemon you already run)

Exit 0 when the three runs completed and checked out; 1 otherwise (with the reason).
"""
import argparse
import base64
import hashlib
import html
import json
import os
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "clients", "python", "src"))
from plimsoll import Client  # noqa: E402

STEP = ["plimsoll-trial", "--plant", "cartpole", "--trajectory", "trajectory.f64",
        "--", "qjs", "--controller", "controller.js"]
RUNS = [("accepted, run 1", "accepted.js"), ("accepted, run 2", "accepted.js"),
        ("draft", "draft.js")]


class Daemon:
    """plimsolld on loopback port 0, --dev, stopped with SIGTERM."""

    def __init__(self, binary, provider, image):
        self.command = [binary, "--listen", "127.0.0.1:0", "--metrics-listen", "off",
                        "--provider", provider, "--dev"]
        if image:
            self.command += ["--image", f"base={image}"]
        self.log = tempfile.TemporaryFile(mode="w+")
        self.process = None

    def __enter__(self):
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=self.log,
                                        text=True, env={"PATH": os.environ.get("PATH", "")})
        line = self.process.stdout.readline()
        if "api=127.0.0.1:" not in line:
            self.process.kill()
            self.process.wait()
            self.log.seek(0)
            raise SystemExit(f"oracle: plimsolld did not start: {line!r} {self.log.read()[-2000:]}")
        port = int(line.split("api=127.0.0.1:")[1].split()[0])
        return f"http://127.0.0.1:{port}"

    def __exit__(self, *_):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        return False


def run_trial(client, label, controller_file):
    with open(os.path.join(HERE, controller_file)) as f:
        source = f.read()
    result = client.run_project(files={"controller.js": source}, steps=[STEP],
                                artifacts=["trajectory.f64"], timeout_ms=120_000)
    if result.exit_code != 0:
        raise SystemExit(f"oracle: {label}: plimsoll-trial exited {result.exit_code}: "
                         f"{result.stderr_text.strip()}")
    summary = json.loads(result.stdout_text)
    trajectory = next((a for a in result.artifacts if a.path == "trajectory.f64"), None)
    if trajectory is None or trajectory.truncated:
        raise SystemExit(f"oracle: {label}: the trajectory did not come back whole")
    digest = hashlib.sha256(trajectory.content).hexdigest()
    if digest != summary["fingerprint"]:
        raise SystemExit(f"oracle: {label}: the trajectory's SHA-256 {digest} is not the "
                         f"fingerprint the runner printed, {summary['fingerprint']}")
    return {"label": label, "controller_file": controller_file, "controller": source,
            "provider": result.provider, "isolation": result.isolation,
            "environment": result.environment, "record_sha256": result.record.record_sha256,
            "summary": summary,
            "trajectory_base64": base64.b64encode(trajectory.content).decode("ascii")}


def write_report(runs, out):
    with open(os.path.join(HERE, "report.html.in")) as f:
        template = f.read()
    data = json.dumps({"runs": runs}, sort_keys=True)
    # </script> cannot occur in JSON's output for these values, but be sure.
    data = data.replace("</", "<\\/")
    page = template.replace("/*ORACLE_DATA*/null", data)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    with open(out, "w") as f:
        f.write(page)
    plain = [{k: v for k, v in run.items() if k != "trajectory_base64"} for run in runs]
    with open(os.path.splitext(out)[0] + ".json", "w") as f:
        json.dump({"runs": plain}, f, indent=2, sort_keys=True)
        f.write("\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plimsolld", help="start this plimsolld (with --image)")
    parser.add_argument("--image", help="the guest image directory plimsolld serves")
    parser.add_argument("--provider", default="linux", help="an OS-level provider (default linux)")
    parser.add_argument("--url", help="use a running daemon instead")
    parser.add_argument("--out", default=os.path.join(REPO, "build", "oracle", "report.html"))
    options = parser.parse_args()
    if not options.url and not (options.plimsolld and (options.image or options.provider == "embedded")):
        parser.error("give --plimsolld and --image (or --provider embedded), or --url")

    def three_runs(url):
        with Client(url) as client:
            return [run_trial(client, label, controller) for label, controller in RUNS]

    if options.url:
        runs = three_runs(options.url)
    else:
        with Daemon(options.plimsolld, options.provider, options.image) as url:
            runs = three_runs(url)
    first, second, draft = (run["summary"] for run in runs)
    if first["fingerprint"] != second["fingerprint"]:
        raise SystemExit("oracle: the accepted controller gave two different fingerprints: "
                         f"{first['fingerprint']} and {second['fingerprint']}")
    write_report(runs, options.out)
    for run in runs:
        s = run["summary"]
        print(f"{run['label']:16} {run['isolation']:9} ended {s['ended']} at {s['ended_at_seconds']} s, "
              f"score {s['score']}, fingerprint {s['fingerprint']}")
    print(f"report: {os.path.abspath(options.out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
