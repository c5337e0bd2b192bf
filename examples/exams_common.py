"""What the exam examples share (examples/oracle, examples/plant_replays; docs/exams.md).

A trial as an ordinary project through plimsolld's API (the Python client; the controller is the
only file sent, with the scenario file when there is one; one step, `plimsoll-trial ... -- qjs
--controller controller.js`, or for a C controller `plimsoll-trial ... --build plimsoll-cc ... --
plimsoll-wasm-controller controller.wasm`: the runner compiles it once the scenario is gone; the
trajectory as the artifact), the tick-by-tick comparison of two trajectories, the daemon those tools
start (loopback port 0, --dev), their command-line options, embedding data in a self-contained page,
and the headless-Chromium helpers their tests use.

    from exams_common import add_daemon_options, daemon_url, run_trial
    with daemon_url(options, "tool") as url, Client(url) as client:
        run = run_trial(client, "cartpole", "accepted", source, "tool")

Every failure is a SystemExit whose message names the tool and says what went wrong.
"""
import base64
import contextlib
import hashlib
import html
import json
import os
import re
import signal
import struct
import subprocess
import sys
import tempfile

EXAMPLES = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(EXAMPLES)
sys.path.insert(0, os.path.join(REPO, "clients", "python", "src"))
from plimsoll import Client  # noqa: E402,F401  (re-exported for the tools)

TRAJECTORY = "trajectory.f64"
SCENARIO = "scenario.json"


def runner_options(plant, scenario):
    """plimsoll-trial's options before the controller: the plant, the scenario file when there is
    one (else the plant's default scenario), the trajectory."""
    return (["plimsoll-trial", "--plant", plant] + (["--scenario", SCENARIO] if scenario else [])
            + ["--trajectory", TRAJECTORY])


def trial_step(plant, scenario=None):
    """The one step of an exam project with the controller on qjs."""
    return runner_options(plant, scenario) + ["--", "qjs", "--controller", "controller.js"]


def c_trial_step(plant, scenario=None):
    """The one step of a C exam project (docs/exams.md, "C controllers"): the runner reads and
    deletes the scenario, then runs the build command (plimsoll-cc: controller.c to a checked
    module), then the trial with the module on plimsoll-wasm-controller. The compile is the
    agent's code, so it runs only once the scenario is gone (never as a step of its own)."""
    return runner_options(plant, scenario) + [
        "--build", "plimsoll-cc", "--plant", plant, "controller.c", "-o", "controller.wasm",
        "--", "plimsoll-wasm-controller", "controller.wasm"]


# What each language's project sends: the controller's file name and its one step.
LANGUAGES = {"javascript": ("controller.js", trial_step), "c": ("controller.c", c_trial_step)}


class Daemon:
    """plimsolld on loopback port 0, --dev, stopped with SIGTERM; entering gives its URL."""

    def __init__(self, binary, provider, image, tool):
        self.command = [binary, "--listen", "127.0.0.1:0", "--metrics-listen", "off",
                        "--provider", provider, "--dev"]
        if image:
            self.command += ["--image", f"base={image}"]
        self.tool = tool
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
            raise SystemExit(f"{self.tool}: plimsolld did not start: {line!r} "
                             f"{self.log.read()[-2000:]}")
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


def add_daemon_options(parser):
    """The options both tools take: a daemon to start (binary, image, provider) or one to use."""
    parser.add_argument("--plimsolld", help="start this plimsolld (with --image)")
    parser.add_argument("--image", help="the guest image directory plimsolld serves")
    parser.add_argument("--provider", default="linux",
                        help="linux (default) or another OS-level provider with --image; "
                             "embedded runs the exams in the daemon's process, no image")
    parser.add_argument("--url", help="use a running daemon instead")


def check_daemon_options(parser, options):
    if not options.url and not (options.plimsolld and
                                (options.image or options.provider == "embedded")):
        parser.error("give --plimsolld and --image (or --provider embedded), or --url")


def daemon_url(options, tool):
    """A context manager giving the URL of the daemon the options name (started if need be)."""
    if options.url:
        return contextlib.nullcontext(options.url)
    return Daemon(options.plimsolld, options.provider, options.image, tool)


def run_trial(client, plant, label, source, tool, language="javascript", scenario=None):
    """One exam trial as a project (the controller in `language`: "javascript" or "c"; `scenario`
    the plant's parameters as a list, sent as scenario.json, or None for the plant's default);
    checks that every step exited 0 and that the trajectory's SHA-256 is the runner's fingerprint.
    Returns the run: tier, record, the runner's summary, the trajectory (base64). A refusal
    (nothing ran: a plimsoll.RefusedError) is the caller's to handle."""
    file_name, step_of = LANGUAGES[language]
    files = {file_name: source}
    if scenario is not None:
        files[SCENARIO] = json.dumps({"plant": plant, "parameters": scenario})
    result = client.run_project(files=files, steps=[step_of(plant, scenario is not None)],
                                artifacts=[TRAJECTORY], timeout_ms=120_000)
    steps = list(result.steps)
    for step in steps:
        if step.exit_code != 0:
            raise SystemExit(f"{tool}: {plant} {label}: {step.command[0]} exited {step.exit_code}: "
                             f"{step.stderr_text.strip()[-2000:]}")
    if result.exit_code != 0:
        raise SystemExit(f"{tool}: {plant} {label}: the project exited {result.exit_code}: "
                         f"{result.stderr_text.strip()[-2000:]}")
    summary = json.loads(steps[-1].stdout_text if steps else result.stdout_text)
    trajectory = next((a for a in result.artifacts if a.path == TRAJECTORY), None)
    if trajectory is None or trajectory.truncated:
        raise SystemExit(f"{tool}: {plant} {label}: the trajectory did not come back whole")
    digest = hashlib.sha256(trajectory.content).hexdigest()
    if digest != summary["fingerprint"]:
        raise SystemExit(f"{tool}: {plant} {label}: the trajectory's SHA-256 {digest} is not the "
                         f"fingerprint the runner printed, {summary['fingerprint']}")
    return {"label": label, "language": language, "controller": source, "scenario": scenario,
            "step_milliseconds": [step.duration_ms for step in steps],
            "provider": result.provider, "isolation": result.isolation,
            "environment": result.environment, "record_sha256": result.record.record_sha256,
            "summary": summary,
            "trajectory_base64": base64.b64encode(trajectory.content).decode("ascii")}


def compare_trajectories(first, second, row_doubles):
    """Two trajectories (bytes) compared tick by tick, byte by byte, as the replay pages' script
    does: {"identical": True, "ticks": N}, or where they part: the first tick and column whose 8
    bytes differ, with both values and their bit patterns (16 hex digits, the little-endian
    float64 read as an integer), or the tick where the shorter one ends (column None)."""
    row_bytes = 8 * row_doubles
    common = min(len(first), len(second))
    for at in range(0, common - common % 8, 8):
        if first[at:at + 8] != second[at:at + 8]:
            values = [struct.unpack_from("<d", t, at)[0] for t in (first, second)]
            bits = ["%016x" % struct.unpack_from("<Q", t, at)[0] for t in (first, second)]
            return {"identical": False, "tick": at // row_bytes, "column": at % row_bytes // 8,
                    "values": [repr(v) for v in values], "bits": bits}
    if len(first) != len(second):
        return {"identical": False, "tick": common // row_bytes, "column": None,
                "values": None, "bits": None}
    return {"identical": True, "ticks": len(first) // row_bytes}


def without_trajectories(runs):
    return [{k: v for k, v in run.items() if k != "trajectory_base64"} for run in runs]


def embed(template, marker, data):
    """The template with `marker` replaced by data as JSON, safe inside a <script> element."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False)
    # "</" (and so "</script>") must not occur inside the script element; JSON allows "<\/".
    text = text.replace("</", "<\\/").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    if marker not in template:
        raise SystemExit(f"the template has no {marker}")
    return template.replace(marker, text)


def write_text(path, text):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


# Headless Chromium (Debian's `chromium`), as the examples' tests drive it.
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def have_chromium():
    return os.access(CHROMIUM, os.X_OK)


def dump_dom(page, profile, virtual_time_ms=3000, timeout=120):
    """The DOM of a local page after `virtual_time_ms` of virtual time (timers run, no waiting)."""
    return subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--virtual-time-budget={virtual_time_ms}",
                           f"--user-data-dir={profile}", "--dump-dom", "file://" + page],
                          capture_output=True, text=True, timeout=timeout).stdout


def refers_outside(page):
    """Whether a page refers to anything outside itself (a script, a link, a URL)."""
    return re.search(r'<script[^>]+src=|<link[^>]+href=|https?://(?!www\.w3\.org/2000/svg)',
                     page) is not None


def text_of(dom, element_id):
    match = re.search(r'id="%s"[^>]*>(.*?)</' % re.escape(element_id), dom, re.S)
    return html.unescape(match.group(1)).strip() if match else None


def same_number(shown, value):
    """JavaScript spells 20.0 as "20", Python as "20.0": compare the numbers (the same double)."""
    try:
        return shown is not None and float(shown) == float(value)
    except ValueError:
        return False
