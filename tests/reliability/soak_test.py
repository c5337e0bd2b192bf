#!/usr/bin/env python3
"""Soak: many runs through one plimsolld per provider, watching what it holds.

For each PROVIDER=RUNS argument: starts plimsolld (--dev, loopback, port 0)
on that provider, sends RUNS sequential runs (a small JavaScript snippet), and
samples the daemon every SAMPLE runs: open descriptors (/proc/PID/fd),
threads and RSS (/proc/PID/status), and the number of its live descendants.
The first WARMUP runs (10 %, at least 20) fill caches, pools and allocator
arenas; after them, the end of the soak must hold no more than 10 % above the
start of the measured part on any of the four (the maximum of the first three
samples against the minimum of the last three, so one connection closing late
does not count as growth while a leak of one per run does). Every run must
succeed (exit 0, its output). Then the daemon is stopped (SIGTERM, exit 0)
and the leftovers check runs: the rules of tests/hostile/leftovers.h applied
to what a daemon owns (processes, cgroups, temporary entries and mounts named
with the daemon's owner tag "<pid>-<start time>", processes once its
descendants still alive, mounts that appeared; see docs/reliability.md).

A provider this machine cannot host prints "skipped: PROVIDER: <reason>"; the
test fails when a provider listed in PLIMSOLL_REQUIRE_PROVIDERS is skipped, and
exits 77 (CTest: skipped) only when every provider was.

Usage: soak_test.py PLIMSOLLD PROVIDER=RUNS [PROVIDER=RUNS ...]
  PROVIDER: embedded, linux, oci:runc, oci:crun, oci:runsc, microvm.
Environment: PLIMSOLL_IMAGE (the guest image, for every provider but embedded),
PLIMSOLL_SOAK_GROWTH (default 0.10), PLIMSOLL_SOAK_JSON (write the numbers there).
"""
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
import plimsolld  # noqa: E402

CODE = 'console.log("soak", 6 * 7)'
PYTHON_CODE = 'print("soak", 6 * 7)'
ROOTS = ["/tmp", "/var/tmp", "/dev/shm", "/run"]
MEASURES = ("fds", "threads", "rss_kib", "descendants")


def read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def start_time(pid):
    stat = read(f"/proc/{pid}/stat")
    return stat[stat.rfind(")") + 2:].split()[19] if stat else ""


def processes():
    """{pid: (ppid, start time, cmdline)} of every live process on the host.

    A zombie is not live: it has exited and holds nothing but its pid until
    its parent reaps it. An orphan's parent is the host's init, which may reap
    late (seen here: a container process killed as the daemon stopped stayed a
    zombie, with an empty command line, for more than 0.5 s).
    """
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = read(f"/proc/{name}/stat")
        if not stat:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        if fields[0] in ("Z", "X"):
            continue
        cmdline = read(f"/proc/{name}/cmdline").replace("\0", " ")
        table[int(name)] = (int(fields[1]), fields[19], cmdline)
    return table


def descendants(root, table):
    """{(pid, start time)} of every descendant of `root`."""
    found, frontier = set(), {root}
    while frontier:
        children = {pid for pid, (ppid, _, _) in table.items() if ppid in frontier}
        children -= {pid for pid, _ in found}
        found |= {(pid, table[pid][1]) for pid in children}
        frontier = children
    return found


def sample(pid, readings=10, spacing=0.1):
    """The daemon's fds, threads, RSS and live descendants, right after a run.

    A run's answer comes before its sandbox is gone: a background destroyer
    removes it while the warm pool starts the next one, each holding a few
    descendants and descriptors for a moment. So descriptors and descendants
    are the least of `readings` readings `spacing` s apart: what was only in
    flight has gone from one of them, while a leaked process or descriptor is
    in all of them.
    """
    fds, kin = [], []
    for reading in range(readings):
        if reading:
            time.sleep(spacing)
        try:
            fds.append(len(os.listdir(f"/proc/{pid}/fd")))
        except OSError:
            fds.append(-1)
        kin.append(len(descendants(pid, processes())))
    status = read(f"/proc/{pid}/status")
    values = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {"fds": min(fds), "threads": int(values["Threads"].strip()),
            "rss_kib": int(values["VmRSS"].split()[0]), "descendants": min(kin)}


def named_entries(tag, extra_roots):
    """Cgroup directories and temporary entries whose name carries `tag`."""
    found = []
    for root, depth in [("/sys/fs/cgroup", 6)] + [(r, 2) for r in ROOTS + extra_roots]:
        base = root.rstrip("/").count("/")
        for directory, subdirectories, files in os.walk(root, onerror=lambda _: None):
            if directory.count("/") - base >= depth:
                subdirectories[:] = []
            for name in subdirectories + (files if not root.startswith("/sys") else []):
                if tag in name:
                    found.append(os.path.join(directory, name))
    return found


def mounts():
    lines = read("/proc/self/mountinfo").splitlines()
    return sorted(" ".join(line.split()[2:]) for line in lines)


def precondition(provider, image):
    """Why this machine cannot host `provider`, or "" when it can."""
    if provider == "embedded":
        return ""
    if os.geteuid() != 0:
        return "needs root"
    if not image or not os.path.isdir(image):
        return f"no guest image (PLIMSOLL_IMAGE={image!r})"
    if provider.startswith("oci:") and shutil.which(provider[4:]) is None:
        return f"{provider[4:]} is not installed"
    if provider == "microvm" and shutil.which("qemu-system-x86_64") is None:
        return "qemu-system-x86_64 is not installed"
    return ""


def growth(series, limit):
    """Problems with `series` (one dict per sample after warm-up)."""
    problems = []
    if len(series) < 6:
        return [f"only {len(series)} samples after warm-up (need 6)"]
    for measure in MEASURES:
        start = max(s[measure] for s in series[:3])
        end = min(s[measure] for s in series[-3:])
        # A count that starts at zero may not grow at all (0 * 1.1 = 0).
        if end > start * (1 + limit):
            problems.append(f"{measure} grew from {start} to {end} "
                            f"(> {limit:.0%}) after warm-up")
    return problems


def soak(binary, provider, runs, image, limit):
    scratch = tempfile.mkdtemp(prefix="plimsoll-soak-")
    environment = {"PATH": os.environ.get("PATH", ""), "TMPDIR": scratch,
                   # ASan's quarantine would look like growth: keep it small.
                   "ASAN_OPTIONS": "quarantine_size_mb=1"}
    if image:
        environment["PLIMSOLL_IMAGE"] = image
    for name in ("SANDBOX_OCI_STATE_DIR", "SANDBOX_MICROVM_STATE_DIR"):
        environment[name] = os.path.join(scratch, name.split("_")[1].lower() + "-state")
    mounts_before = mounts()
    problems, series, seen = [], [], set()
    warmup = max(20, runs // 10)
    every = max(1, (runs - warmup) // 20)
    language = "python" if provider == "microvm" else "javascript"
    code = PYTHON_CODE if language == "python" else CODE
    body = json.dumps({"protocol": 1, language: {"code": code}})
    started = time.monotonic()
    try:
        with plimsolld.Daemon(binary, ["--provider", provider, "--dev", "--evidence-interval-ms", "0"],
                              env=environment, stop_timeout=120) as daemon:
            tag = f"{daemon.pid}-{start_time(daemon.pid)}"
            try:
                failed = 0
                for index in range(runs):
                    status, _, raw = daemon.request("POST", "/v1/runs", body,
                                                    {"Content-Type": "application/json"})
                    answer = json.loads(raw) if raw.startswith(b"{") else {}
                    if (status != 200 or answer.get("exit_code") != 0
                            or "42" not in str(answer.get("stdout"))):
                        failed += 1
                        if failed <= 5:
                            problems.append(f"run {index}: status {status}: {raw[:300]!r}")
                    done = index + 1
                    if done >= warmup and (done - warmup) % every == 0:
                        point = sample(daemon.pid)
                        point["runs"] = done
                        series.append(point)
                        seen |= descendants(daemon.pid, processes())
                if failed:
                    problems.append(f"{failed} of {runs} runs did not succeed")
                problems += growth(series, limit)
            finally:
                elapsed = time.monotonic() - started
                # Before the daemon stops: its descendants are found through it.
                seen |= descendants(daemon.pid, processes())
        problems += daemon.problems
    except plimsolld.DaemonDidNotServe as error:
        shutil.rmtree(scratch, ignore_errors=True)
        return {"problems": [str(error)]}
    # Let the kernel finish tearing down what was killed as the daemon stopped:
    # what is still alive after 10 s was left behind.
    give_up = time.monotonic() + 10
    while True:
        table = processes()
        if not any(pid in table and table[pid][1] == start for pid, start in seen):
            break
        if time.monotonic() > give_up:
            break
        time.sleep(0.1)
    for pid, start in sorted(seen):
        if pid in table and table[pid][1] == start:
            problems.append(f"a process of the daemon was left behind: pid {pid}: {table[pid][2]}")
    for pid, (_, _, cmdline) in table.items():
        if tag in cmdline and (pid, table[pid][1]) not in seen:
            problems.append(f"a process named after the daemon was left behind: {pid}: {cmdline}")
    for entry in named_entries(tag, [scratch]):
        problems.append(f"left behind (named after the daemon {tag}): {entry}")
    for name in os.listdir(scratch):
        for directory, _, files in os.walk(os.path.join(scratch, name)):
            for file in files:
                problems.append(f"a file was left in the daemon's TMPDIR: {directory}/{file}")
    added = sorted(set(mounts()) - set(mounts_before))
    problems += [f"a mount appeared: {mount}" for mount in added if "plimsoll" in mount or tag in mount]
    shutil.rmtree(scratch, ignore_errors=True)
    return {"provider": provider, "runs": runs, "warmup": warmup, "seconds": round(elapsed, 1),
            "first": series[0] if series else None, "last": series[-1] if series else None,
            "peak": {m: max(s[m] for s in series) for m in MEASURES} if series else None,
            "problems": problems}


def main():
    binary, plans = sys.argv[1], sys.argv[2:]
    image = os.environ.get("PLIMSOLL_IMAGE", "")
    limit = float(os.environ.get("PLIMSOLL_SOAK_GROWTH", "0.10"))
    required = {p for p in os.environ.get("PLIMSOLL_REQUIRE_PROVIDERS", "").split(",") if p}
    reports, failures, skipped = [], [], 0
    for plan in plans:
        provider, runs = plan.split("=")
        reason = precondition(provider, image)
        if reason:
            print(f"skipped: {provider}: {reason}")
            skipped += 1
            if provider in required:
                failures.append(f"{provider} is required (PLIMSOLL_REQUIRE_PROVIDERS) but: {reason}")
            continue
        report = soak(binary, provider, int(runs), image, limit)
        reports.append(report)
        print(f"soak {provider}: {report.get('runs')} runs in {report.get('seconds')} s "
              f"(warm-up {report.get('warmup')}); after warm-up {report.get('first')}, "
              f"at the end {report.get('last')}, peak {report.get('peak')}", flush=True)
        failures += [f"{provider}: {problem}" for problem in report["problems"]]
    if os.environ.get("PLIMSOLL_SOAK_JSON"):
        with open(os.environ["PLIMSOLL_SOAK_JSON"], "w", encoding="utf-8") as handle:
            json.dump(reports, handle, indent=2)
    for failure in failures:
        print("FAIL:", failure)
    print(f"{len(failures)} failure(s)")
    if failures:
        return 1
    return 77 if skipped == len(plans) else 0


if __name__ == "__main__":
    sys.exit(main())
