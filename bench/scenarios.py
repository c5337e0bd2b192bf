"""The scenario registry: what `python3 bench/run.py` measures, in this order.

Every baseline runs /bin/true from the same minimal rootfs (the host's /bin/true plus the shared
objects `ldd` lists; see harness/fixtures.py), so rows differ only in how each tool builds its wall.
The JavaScript baselines (unshare-qjs, runc-qjs, at the end) run the guest image's qjs instead.
Ratios are against the reference baseline `unshare` unless a scenario names another.

Tiers and peers (issue 23): a peer (peer=True) is another project's tool doing the job plimsoll's
rows do, a fresh sandbox running console.log(6*7), at one isolation tier: quickjs-emscripten on
Node (process); unshare, bubblewrap, runc and crun running the guest image's static qjs
(container); runsc running it (kernel); a raw QEMU microvm boot (vm under KVM, kernel under TCG: a
lower bound, it boots but runs no JavaScript). Each of plimsoll's rows with a tier also reports its
ratio to the best (lowest p50) peer of its tier measured in the same run (target_peer_ratio is a
target on it). `--only` pulls in the peers of the selected rows' tiers.

To add a scenario, add one `REGISTRY.add(command(...))` or `REGISTRY.add(sampler(...))`; see
harness/scenario.py for the fields and README.md for examples.
"""

from harness.scenario import (Registry, command, needs_executable, needs_path, needs_root,
                              produced, sampler)

REGISTRY = Registry(reference="unshare")

# Untimed after every invocation; "{id}" is unique per invocation, "{state}" private to a scenario.
def _oci_delete(runtime, *flags):
    force = "-force" if runtime == "runsc" else "-f"
    return [runtime, "--root", "{state}", *flags, "delete", force, "{id}"]


# Floors: no sandbox at all. -----------------------------------------------------------------------
REGISTRY.add(command(
    "host-exec", ["/bin/true"],
    description="No sandbox: spawn /bin/true from the host filesystem and wait (the harness's "
                "floor).",
))
REGISTRY.add(command(
    "chroot", ["chroot", "{rootfs}", "/bin/true"],
    description="No namespaces: chroot(8) into the minimal rootfs, then exec /bin/true (two "
                "execs).",
    probes=[needs_executable("chroot")], trial_skips=True,
))

# The reference: bare namespaces with util-linux. -------------------------------------------------
REGISTRY.add(command(
    "unshare",
    ["unshare", "-Urnpimuf", "--mount-proc", "--root={rootfs}", "/bin/true"],
    description="unshare(1): new user (root mapped), net (lo only, down), pid, ipc, mount and uts "
                "namespaces; fork; chroot into the minimal rootfs (read-write, no pivot_root); "
                "mount a fresh /proc; exec /bin/true. No cgroups, no seccomp, no capability drop.",
    probes=[needs_executable("unshare")], trial_skips=True,
    version=["unshare", "--version"],
))

# bubblewrap. ------------------------------------------------------------------------------------
REGISTRY.add(command(
    "bwrap",
    ["bwrap", "--unshare-all", "--ro-bind", "{rootfs}", "/", "--proc", "/proc", "--dev", "/dev",
     "--", "/bin/true"],
    description="bubblewrap --unshare-all (user, ipc, pid, net with lo up, uts, cgroup if "
                "possible): pivot_root into a tmpfs, read-only bind of the minimal rootfs as /, "
                "fresh /proc, minimal /dev; bwrap's init (pid 1 of the new pid namespace) forks "
                "and execs /bin/true. No cgroups, no seccomp.",
    probes=[needs_executable("bwrap")], trial_skips=True,
    version=["bwrap", "--version"],
))

# OCI runtimes, each with the same generated bundle (harness/fixtures.py: oci_config). -------------
_OCI_NOTE = ("bundle: read-only root = the minimal rootfs, new pid/net (lo only)/ipc/uts/mount "
             "namespaces, no user namespace, /proc /dev /dev/pts /dev/shm /dev/mqueue /sys mounts, "
             "3 capabilities, no_new_privs, no seccomp, no resource limits; terminal false; "
             "state in a private --root; `delete -f` after each run (untimed).")

# crun 1.8 refuses hybrid cgroups ("drop all controllers from cgroupv2"). The whole timed loop
# runs in one private mount namespace where /sys/fs/cgroup/unified is unmounted (only if it is
# mounted), so the wrapper's cost is paid once, not in every sample.
_CRUN_NAMESPACE = [
    "unshare", "--mount", "--propagation", "private", "sh", "-c",
    "if grep -qs ' /sys/fs/cgroup/unified ' /proc/self/mounts; then "
    "umount /sys/fs/cgroup/unified || exit 97; fi; exec \"$@\"",
    "crun-namespace",
]
REGISTRY.add(command(
    "crun", ["crun", "--root", "{state}", "run", "--bundle", "{bundle}", "{id}"],
    cleanup=_oci_delete("crun"), wrapper=_CRUN_NAMESPACE,
    description="crun run of the OCI bundle (cgroups v1 created by crun). The loop runs inside one "
                "private mount namespace with /sys/fs/cgroup/unified unmounted (untimed). "
                + _OCI_NOTE,
    probes=[needs_executable("crun"), needs_executable("unshare")], trial_skips=True,
    version=["crun", "--version"],
))
REGISTRY.add(command(
    "runc", ["runc", "--root", "{state}", "run", "--bundle", "{bundle}", "{id}"],
    cleanup=_oci_delete("runc"),
    description="runc run of the OCI bundle (runc forks runc init, which sets up the container; "
                "cgroups created by runc). " + _OCI_NOTE,
    probes=[needs_executable("runc")], trial_skips=True,
    version=["runc", "--version"],
))

# gVisor: only the ptrace platform works on our machines; --network=none gives the sandbox only its
# own loopback (netstack), which is what the other rows' fresh network namespace gives.
_RUNSC = ["runsc", "--root", "{state}", "--platform=ptrace", "--network=none"]
REGISTRY.add(command(
    "runsc", [*_RUNSC, "run", "--bundle", "{bundle}", "{id}"],
    cleanup=_oci_delete("runsc"), timeout_s=120.0,
    description="gVisor runsc run, platform ptrace, network none, cgroups set up as runc "
                "would: sentry + gofer processes, /bin/true runs on gVisor's own kernel. "
                + _OCI_NOTE,
    probes=[needs_executable("runsc")], trial_skips=True,
    version=["runsc", "--version"],
))
REGISTRY.add(command(
    "runsc-nocgroups", [*_RUNSC, "--ignore-cgroups", "run", "--bundle", "{bundle}", "{id}"],
    cleanup=_oci_delete("runsc"), timeout_s=120.0,
    description="As `runsc`, with --ignore-cgroups (no cgroup setup at all, like unshare and "
                "bwrap).",
    probes=[needs_executable("runsc")], trial_skips=True,
    version=["runsc", "--version"],
))


# The process-tier peer (issue 23): quickjs-emscripten on Node, pinned by
# bench/peers/quickjs-emscripten/package-lock.json and installed with npm ci into the bench's cache
# on first use (fixture {quickjs_emscripten}; no npm or registry: skipped with the reason).
REGISTRY.add(sampler(
    "quickjs-emscripten",
    ["node", "{bench}/peers/quickjs-emscripten/sampler.js", "--modules", "{quickjs_emscripten}",
     "--scenario", "{scenario}", "--runs", "{runs}", "--warmup", "{warmup}"],
    baseline=None, min_runs=1000, tier="process", peer=True, timeout_s=300.0,
    probes=[needs_executable("node")],
    version=["node", "-e", "console.log('Node ' + process.version)"],
    description="Peer, process tier (issue 23): quickjs-emscripten 0.32.0 (QuickJS compiled to "
                "wasm by emscripten, the release-sync variant getQuickJS() loads) in Node, "
                "in-process. getQuickJS() (module load, wasm compile and instantiate) once, "
                "untimed; each sample (process.hrtime.bigint()) is a fresh QuickJS runtime + "
                "context, console.log defined on it (appending to a string), eval of "
                "console.log(6*7), the output checked (\"42\"), context and runtime disposed. "
                "Every runtime shares the module's one wasm instance and linear memory (plimsoll "
                "gives each run its own). At least 1000 runs.",
))
# The same library as a whole process per sample, the peer of plimsoll's CLI row (both timed from
# spawn to exit by the runner): Node's start-up, the module loaded and its wasm compiled, one run.
REGISTRY.add(command(
    "quickjs-emscripten.process",
    ["node", "{bench}/peers/quickjs-emscripten/sampler.js", "--modules", "{quickjs_emscripten}",
     "--once"],
    baseline="host-exec", tier="process", peer=True, whole_process=True, trial_skips=True,
    max_runs=50,
    probes=[needs_executable("node")],
    version=["node", "-e", "console.log('Node ' + process.version)"],
    description="Peer, process tier, whole process (issue 23): `node sampler.js --once`: Node "
                "starts, loads quickjs-emscripten 0.32.0 and compiles its wasm (getQuickJS()), "
                "makes one fresh runtime + context running console.log(6*7), prints \"42\" "
                "(checked: exit 0 only then) and exits. What a Node program that runs one "
                "snippet per process pays; the peer of `plimsoll-cli-embedded`. At most 50 "
                "runs.",
))


# plimsoll's own rows. ----------------------------------------------------------------------------
REGISTRY.add(command(
    "plimsoll-cli-embedded",
    ["{plimsoll_bin}/plimsoll", "run", "--provider", "embedded", "-e", "console.log(6*7)"],
    baseline="host-exec", tier="process", whole_process=True, target_p50_ms=10.0,
    description="The whole CLI process: `plimsoll run --provider embedded -e "
                "\"console.log(6*7)\"` (start-up, a fresh embedded engine instance, evidence "
                "collection and the run record, printing), against spawning /bin/true. Target "
                "(issue 23): p50 <= 10 ms. Its ×peer is to the whole-process peer "
                "(quickjs-emscripten.process: a Node process running the same snippet).",
    probes=[needs_path("{plimsoll_bin}/plimsoll")],
))

# The embedded engine, in-process (bench/engine/engine_bench.cc), against native QuickJS built from
# the same source with the same guest driver (-O2, no sanitizers). Issue 3's numbers:
#   (a) fresh instance + console.log(6*7) + teardown: p50 <= 1 ms over >= 1000 runs (issue 23:
#       p50 <= 0.05 ms and <= 0.2x the process-tier peer, quickjs-emscripten);
#   (b) CPU-bound (primes below 200000): wasm <= 2.0x native;
#   (c) RSS (and VmSize) after 10000 instances within 10 % of after 100, in one process.
_ENGINE_BENCH = "{plimsoll_bin}/engine_bench"
_ENGINE_ARGV = [_ENGINE_BENCH, "--scenario", "{scenario}", "--runs", "{runs}",
                "--warmup", "{warmup}"]
_NEEDS_ENGINE_BENCH = [needs_path(_ENGINE_BENCH)]

REGISTRY.add(sampler(
    "engine.native_console_log", _ENGINE_ARGV, baseline=None, min_runs=1000,
    probes=_NEEDS_ENGINE_BENCH, timeout_s=300.0,
    description="Native QuickJS (same source, same guest driver, -O2): a fresh runtime + "
                "console.log(6*7) + teardown, in-process (engine_bench). At least 1000 runs.",
))
REGISTRY.add(sampler(
    "engine.instance_console_log", _ENGINE_ARGV, baseline="engine.native_console_log",
    min_runs=1000, target_p50_ms=0.05, tier="process", target_peer_ratio=0.2,
    probes=_NEEDS_ENGINE_BENCH, timeout_s=300.0,
    description="The embedded provider's engine (QuickJS -> wasm -> wasm2c): a fresh instance + "
                "console.log(6*7) + teardown, in-process (engine_bench). The instance starts from "
                "the process's snapshot of a prepared one (src/engine/snapshot.h: its own 8 GiB "
                "reservation, the sealed image mapped copy-on-write, the hot pages copied in). At "
                "least 1000 runs. "
                "Targets (issue 23, replacing issue 3 a's p50 <= 1 ms): p50 <= 0.05 ms and <= "
                "0.2x the process-tier peer (quickjs-emscripten: 5x ahead); the baseline ratio "
                "is to native QuickJS.",
))
REGISTRY.add(sampler(
    "engine.fresh_instance_console_log", _ENGINE_ARGV, baseline="engine.native_console_log",
    min_runs=1000, tier="process", probes=_NEEDS_ENGINE_BENCH, timeout_s=300.0,
    description="The same run without the snapshot (engine::Limits::from_snapshot = false): the "
                "module instantiated, the WASI reactor initialised and a QuickJS runtime, context "
                "and globals made for every run, as before issue 23. At least 1000 runs. A "
                "reference for `engine.instance_console_log` (no target).",
))
REGISTRY.add(sampler(
    "engine.primes_200000_native", _ENGINE_ARGV, baseline=None, max_runs=30,
    probes=_NEEDS_ENGINE_BENCH, timeout_s=600.0,
    description="Native QuickJS: count the primes below 200000 by trial division (CPU-bound; "
                "output checked: 17984). At most 30 runs.",
))
REGISTRY.add(sampler(
    "engine.primes_200000_wasm", _ENGINE_ARGV, baseline="engine.primes_200000_native",
    max_runs=30, target_ratio=2.0, probes=_NEEDS_ENGINE_BENCH, timeout_s=600.0,
    description="The same script on the embedded engine (a fresh instance per run). At most 30 "
                "runs. Target (issue 3 b): p50 <= 2.0x native QuickJS.",
))
# Issue 14: what the web APIs cost a fresh instance, and what real-time timers cost. One engine_bench
# invocation measures each pair alternately (same load on both sides) and prints both rows.
REGISTRY.add(sampler(
    "engine.console_log_no_web_apis", _ENGINE_ARGV, baseline=None, min_runs=1000,
    probes=_NEEDS_ENGINE_BENCH, timeout_s=300.0,
    produces=["engine.console_log_web_apis"],
    description="A fresh embedded instance + console.log(6*7) + teardown without the web APIs "
                "(engine::Limits::web_apis = false: only the language, console, timers and host), "
                "alternating run by run with the row below. At least 1000 runs.",
))
REGISTRY.add(produced(
    "engine.console_log_web_apis", baseline="engine.console_log_no_web_apis", target_ratio=1.10,
    description="The same with the web APIs (URL, TextEncoder, crypto, ... as every run has them; "
                "loaded on first use, so this is the cost of their accessors). Target (issue 14): "
                "at most +10 % (ratio <= 1.10).",
))
REGISTRY.add(sampler(
    "engine.callbacks_100_microtasks", _ENGINE_ARGV, baseline=None, min_runs=20,
    probes=_NEEDS_ENGINE_BENCH, timeout_s=300.0,
    produces=["engine.callbacks_100_timers"],
    description="A fresh instance running 100 callbacks as queueMicrotask jobs (the same work "
                "without timers), alternating with the row below.",
))
REGISTRY.add(produced(
    "engine.callbacks_100_timers", baseline="engine.callbacks_100_microtasks",
    description="The same 100 callbacks as setTimeout(cb, 0) timers: real time, so they are due "
                "1 ms after creation (Node's minimum); the difference is one sleep plus the timer "
                "bookkeeping.",
))
# Issue 15: a cell of an open session against a one-shot run, both through the public API
# (plimsoll::Sandbox and plimsoll::Session), alternating in one engine_bench process.
REGISTRY.add(sampler(
    "sessions.embedded_run", _ENGINE_ARGV, baseline=None, min_runs=1000,
    probes=_NEEDS_ENGINE_BENCH, timeout_s=300.0,
    produces=["sessions.embedded_cell"],
    description="A one-shot embedded run of `let x = 0; x += 1; console.log(x)` through "
                "plimsoll::Sandbox::Run (validation, a fresh instance, the record), alternating "
                "run by run with the row below. At least 1000 runs.",
))
REGISTRY.add(produced(
    "sessions.embedded_cell", baseline="sessions.embedded_run", target_p50_ms=0.3,
    description="`x += 1; console.log(x)` as a cell of an open embedded session (the warm "
                "interpreter kept in its instance, a chained record). Target (issue 15): "
                "p50 <= 0.3 ms; the ratio is to the one-shot run.",
))
# One engine_bench process runs 10000 instances of a small script and reads /proc/self/status
# after the 100th and the 10000th; it prints all four rows (one sample each).
REGISTRY.add(sampler(
    "engine.rss_after_100", _ENGINE_ARGV, baseline=None, probes=_NEEDS_ENGINE_BENCH,
    timeout_s=600.0,
    produces=["engine.rss_after_10000", "engine.vmsize_after_100", "engine.vmsize_after_10000"],
    description="VmRSS (kB) of the engine_bench process after 100 fresh embedded instances "
                "(each runs a small JSON script). One sample; the same process continues to "
                "10000 for the rows below.",
))
REGISTRY.add(produced(
    "engine.rss_after_10000", baseline="engine.rss_after_100", target_ratio=1.10,
    description="VmRSS (kB) of the same process after 10000 instances. Target (issue 3 c): "
                "within 10 % of the value after 100 (ratio <= 1.10).",
))
REGISTRY.add(produced(
    "engine.vmsize_after_100", baseline=None,
    description="VmSize (kB) of the same process after 100 instances.",
))
REGISTRY.add(produced(
    "engine.vmsize_after_10000", baseline="engine.vmsize_after_100", target_ratio=1.10,
    description="VmSize (kB) of the same process after 10000 instances. Target: within 10 % of "
                "the value after 100 (ratio <= 1.10).",
))


# The linux provider against raw walls running the same JavaScript. Issue 4's numbers, all for
# console.log(6*7) (fixtures.JS_SNIPPET) and the guest image next to --plimsoll-bin (or
# $PLIMSOLL_IMAGE): (a) the provider's end-to-end p50 <= 15 ms; (b) <= 1.5x unshare + chroot
# running the image's qjs; (c) <= 0.5x runc running the same qjs from the same image. Issue 23
# tightens (a) and (b) to p50 <= 2 ms and <= 1.0x unshare-qjs, and adds bwrap-qjs as a peer.
# Both baselines run `qjs -` with the script on stdin (a file in the run's work directory, opened
# before each timed invocation), so nothing is written into the shared, read-only image.
_NEEDS_IMAGE_QJS = needs_path("{image_rootfs}/usr/local/bin/qjs")
REGISTRY.add(command(
    "unshare-qjs",
    ["unshare", "-Urnpimuf", "--mount-proc", "--root={image_rootfs}", "/usr/local/bin/qjs", "-"],
    stdin="{qjs_script}", baseline="unshare",
    description="As `unshare`, but chrooted into plimsoll's guest image rootfs and running its "
                "qjs (static; the embedded engine) on console.log(6*7), read from stdin (a file, "
                "opened untimed). The raw-namespace floor for the linux provider's JavaScript "
                "row; the ratio is to `unshare` running /bin/true.",
    probes=[needs_executable("unshare"), _NEEDS_IMAGE_QJS], trial_skips=True,
    tier="container", peer=True,
))
# Issue 23: bubblewrap running the same qjs, with the namespaces unshare-qjs builds (user, net,
# pid, ipc, uts, mount; not --unshare-all, which adds a cgroup namespace) and a fresh /proc.
REGISTRY.add(command(
    "bwrap-qjs",
    ["bwrap", "--unshare-user", "--unshare-net", "--unshare-pid", "--unshare-ipc",
     "--unshare-uts", "--ro-bind", "{image_rootfs}", "/", "--proc", "/proc", "--",
     "/usr/local/bin/qjs", "-"],
    stdin="{qjs_script}", baseline="unshare-qjs", tier="container", peer=True,
    description="Peer, container tier (issue 23): bubblewrap with the namespaces `unshare-qjs` "
                "builds (user, net with lo, pid, ipc, uts, mount), pivot_root into a tmpfs, the "
                "guest image rootfs bound read-only as /, a fresh /proc (no /dev: unshare-qjs "
                "has none either), bwrap's init forking the image's static qjs on "
                "console.log(6*7) from stdin (a file, opened untimed). No cgroups, no seccomp. "
                "The ratio is to `unshare-qjs`.",
    probes=[needs_executable("bwrap"), _NEEDS_IMAGE_QJS], trial_skips=True,
    version=["bwrap", "--version"],
))
# plimsoll-linux-latency prints percentiles only (no samples, no warm-up), so an adapter turns its
# summary line into a sampler "summary" record; see bench/adapters/linux_latency.py.
_LINUX_LATENCY = "{plimsoll_bin}/plimsoll-linux-latency"
REGISTRY.add(sampler(
    "linux.js_console_log",
    ["{python}", "{bench}/adapters/linux_latency.py", "--tool", _LINUX_LATENCY,
     "--image", "{image}", "--scenario", "{scenario}", "--runs", "{runs}",
     "--warmup", "{warmup}", "--code", "console.log(6*7)"],
    baseline="unshare-qjs", target_p50_ms=2.0, target_ratio=1.0, tier="container",
    timeout_s=600.0,
    produces=["linux.js_console_log.vs_runc"],
    probes=[needs_root(), needs_path(_LINUX_LATENCY), _NEEDS_IMAGE_QJS],
    description="plimsoll's linux provider end to end, in one process (plimsoll-linux-latency): "
                "Sandbox::Open(\"linux\") and its evidence once, then Sandbox::Run of "
                "console.log(6*7) n times. With the provider's warm pool (SANDBOX_LINUX_POOL_SIZE, "
                "default 2; docs/linux-provider.md) each run takes a sandbox built ahead (cgroup, "
                "clone3 + namespaces, pivot_root into the guest image, seccomp, the guest agent "
                "waiting, qjs prestarted for the default snippet): the job out, qjs, the sealed "
                "report back; the used sandbox is torn down off the answer's path. The tool paces "
                "the runs: before each it waits, untimed (up to 2 s), until the pool is full again, "
                "and prints the pool's counters on stderr. The tool reports "
                "min/p50/p95/p99 only (no mean or max; n = 100k + 1 >= runs so its percentiles "
                "equal linear interpolation) and its first, cold run is among the n. Targets "
                "(issue 23, replacing issue 4's 15 ms and 1.5x): p50 <= 2 ms and <= 1.00x "
                "`unshare-qjs` (the same qjs in bare namespaces).",
))
# runc-qjs runs after the linux row, not between it and its baseline: runc's namespaces and
# cgroups are torn down by the kernel in the background for a while after the last run, and
# that work would land on the linux row's samples (seen: 1.59x instead of 1.1-1.3x).
REGISTRY.add(command(
    "runc-qjs", ["runc", "--root", "{state}", "run", "--bundle", "{qjs_bundle}", "{id}"],
    cleanup=_oci_delete("runc"), stdin="{qjs_script}", baseline="unshare-qjs",
    description="As `runc`, with a bundle whose read-only root is the guest image rootfs and "
                "whose process is `/usr/local/bin/qjs -`, fed console.log(6*7) on stdin (runc "
                "copies it through a pipe). The ratio is to `unshare-qjs`. "
                + _OCI_NOTE.replace("the minimal rootfs", "the guest image rootfs"),
    probes=[needs_root(), needs_executable("runc"), _NEEDS_IMAGE_QJS], trial_skips=True,
    version=["runc", "--version"], tier="container", peer=True,
))
REGISTRY.add(produced(
    "linux.js_console_log.vs_runc", sample_name="linux.js_console_log",
    baseline="runc-qjs", target_ratio=0.5,
    description="The same measurement as `linux.js_console_log` (same invocation), compared "
                "with `runc-qjs`. Target (issue 4): at least 2x faster than runc (ratio <= "
                "0.50).",
))


# plimsolld over HTTP (issue 5), measured from a second process with a lean client
# (bench/tools/http_client.h: raw sockets, keep-alive, one send() per request) against the same
# Sandbox::Run in-process. Both run console.log(6*7) on the embedded provider, so the difference
# is what the daemon adds: HTTP framing and parsing, the JSON request and answer, routing,
# admission, the hand-off to a run worker and back, the audit line. plimsoll-http-bench starts
# `plimsolld --listen 127.0.0.1:0 --metrics-listen off` with the flags after `--` and stops it
# (SIGTERM) afterwards. Issue 5's numbers: (a) added p50 <= 0.5 ms; (b) >= 1000 runs/s on this
# 2-core machine; issue 23 raises (b) to >= 10 000 runs/s with 16 keep-alive clients (0.1 ms per
# run).
_LATENCY_TOOL = "{plimsoll_bin}/plimsoll-latency"
_HTTP_BENCH = "{plimsoll_bin}/plimsoll-http-bench"
_PLIMSOLLD = "{plimsoll_bin}/plimsolld"
_NEEDS_HTTP_BENCH = [needs_path(_HTTP_BENCH), needs_path(_PLIMSOLLD)]
REGISTRY.add(sampler(
    "daemon.inprocess_console_log",
    [_LATENCY_TOOL, "--provider", "embedded", "--scenario", "{scenario}", "--runs", "{runs}",
     "--warmup", "{warmup}", "--code", "console.log(6*7)"],
    baseline=None, min_runs=1000, probes=[needs_path(_LATENCY_TOOL)], timeout_s=300.0,
    tier="process",
    description="The in-process baseline for the daemon rows (plimsoll-latency): "
                "Sandbox::Open(\"embedded\") and its evidence once, then Sandbox::Run of "
                "console.log(6*7) in a loop, exactly the call plimsolld's run handler makes on "
                "a worker thread (validation, floor check, a fresh engine instance, the run "
                "record). At least 1000 runs.",
))
REGISTRY.add(sampler(
    "daemon.http_console_log",
    [_HTTP_BENCH, "--daemon", _PLIMSOLLD, "--mode", "latency", "--scenario", "{scenario}",
     "--runs", "{runs}", "--warmup", "{warmup}", "--code", "console.log(6*7)",
     "--", "--provider", "embedded", "--dev"],
    baseline="daemon.inprocess_console_log", min_runs=1000, target_added_p50_ms=0.5,
    probes=_NEEDS_HTTP_BENCH, timeout_s=300.0, tier="process",
    produces=["daemon.http_console_log.healthz", "daemon.http_console_log.client_cpu"],
    description="The same run through plimsolld (default flags: 2 I/O threads, 2 run "
                "workers) on one keep-alive connection from a second process: POST /v1/runs "
                "with a fresh Plimsoll-Request-Id, timed from the first byte sent to the last "
                "byte of the answer read; every answer checked (200, ID echoed, exit_code 0). "
                "At least 1000 runs, one at a time. Target (issue 5 a): adds at most 0.5 ms to "
                "the in-process p50 (+p50, measured in this run).",
))
REGISTRY.add(produced(
    "daemon.http_console_log.healthz", baseline=None,
    description="GET /healthz on the same connection, interleaved with the runs above: the "
                "daemon's HTTP round trip with no run (parse, route, answer), i.e. the floor of "
                "the added latency.",
))
REGISTRY.add(produced(
    "daemon.http_console_log.client_cpu", baseline=None,
    description="The benchmark client's own CPU time (thread CPU clock: user + system, "
                "including its send/recv/poll system calls) per run request of "
                "`daemon.http_console_log`: the part of that row the client itself costs.",
))
REGISTRY.add(sampler(
    "daemon.http_throughput",
    [_HTTP_BENCH, "--daemon", _PLIMSOLLD, "--mode", "throughput", "--scenario", "{scenario}",
     "--runs", "{runs}", "--warmup", "2", "--window-ms", "1000", "--connections", "16",
     "--code", "console.log(6*7)",
     "--", "--provider", "embedded", "--dev", "--run-workers", "2", "--io-threads", "1",
     "--max-concurrent-runs", "32", "--run-queue", "32"],
    baseline=None, max_runs=10, target_p50_ms=0.1, probes=_NEEDS_HTTP_BENCH, timeout_s=300.0,
    produces=["daemon.http_throughput.latency", "daemon.http_throughput.daemon_cpu",
              "daemon.http_throughput.client_cpu"],
    description="Throughput: 16 keep-alive connections from a second process (one epoll "
                "thread), each with one POST /v1/runs of console.log(6*7) in flight (closed "
                "loop), every answer checked. Daemon flags: --run-workers 2 (one per core: "
                "embedded runs are CPU-bound, more workers only contend), --io-threads 1 (the "
                "event loop's share of a run is small; a second event-loop thread only competes "
                "with the workers for the 2 cores), --max-concurrent-runs 32 and --run-queue 32 (above the "
                "16 in flight, so admission never sheds and a queued run is always ready for a "
                "free worker). Two untimed 1-s windows, then at most 10 timed ones; each sample "
                "is a window's wall ms per completed run (1000 / runs per second: 1.0 ms = "
                "1000 runs/s). Target (issue 23, replacing issue 5 b's 1 ms): p50 <= 0.1 ms, "
                "i.e. >= 10 000 embedded runs/s with 16 keep-alive clients on the 2 cores. No "
                "tier ratio: a peer's latency is not a throughput.",
))
REGISTRY.add(produced(
    "daemon.http_throughput.latency", baseline=None,
    description="Send-to-answer time of every run in the timed windows of "
                "`daemon.http_throughput` (16 in flight: mostly queueing for the 2 workers).",
))
REGISTRY.add(produced(
    "daemon.http_throughput.daemon_cpu", baseline=None,
    description="plimsolld's CPU time (user + system, /proc/PID/stat) per completed run, per "
                "timed window of `daemon.http_throughput`.",
))
REGISTRY.add(produced(
    "daemon.http_throughput.client_cpu", baseline=None,
    description="The load generator's CPU time per completed run, per timed window of "
                "`daemon.http_throughput`: what the second process takes from the same 2 "
                "cores.",
))


# The `oci` provider (issue 6) against raw runtimes running an equivalent bundle. -------------------
# The raw baselines run `<runtime> run` of the bundle the provider itself writes for that runtime
# (bench/tools/oci_bundle.cc links the provider's bundle writer: same mounts, namespaces including
# the user namespace for runc/crun, seccomp, rlimits, device and cgroup limits, cgroupsPath style)
# whose process is `qjs -` fed console.log(6*7) on stdin, instead of the agent. The driver rows
# run plimsoll-latency in-process (Sandbox::Open("oci:<runtime>"), evidence once, then
# Sandbox::Run in a loop), configured with --env; each runtime's rows follow its baseline, so a
# ratio compares neighbours. Issue 6's numbers: (1) runc/crun driver cold (pool off) <= 1.10x the
# raw runtime; (2) runsc with the warm pool p50 <= 60 ms (issue 23: <= 5 ms); (3) runc/crun with
# the pool p50 <= 10 ms. The raw rows are also the peers of the container and kernel tiers.
# Pool rows are paced (--interval-ms, untimed sleep before every run): each run then finds a
# ready sandbox, and the previous run's teardown and the pool's refill are done before it starts.
# Back-to-back they would find the pool empty (a cold start) or compete with the refill.
_OCI_ENV = ["--env", "SANDBOX_OCI_STATE_DIR={state}/oci", "--env", "PLIMSOLL_IMAGE={image}"]
_HIDE_MOUNT = "{plimsoll_bin}/plimsoll-hide-mount"
_OCI_RAW_NOTE = ("The bundle is the oci provider's own config.json for this runtime "
                 "(plimsoll-oci-bundle: the provider's BundleConfig and writer) with process "
                 "`/usr/local/bin/qjs -` instead of the agent and cgroupsPath "
                 "/plimsoll-oci-bench/<runtime>-qjs; console.log(6*7) on stdin (a file, opened "
                 "untimed); `delete --force` after each run (untimed).")
_OCI_DRIVER_NOTE = ("In-process (plimsoll-latency): Sandbox::Open(\"oci:{rt}\") and its evidence "
                    "once, then Sandbox::Run of console.log(6*7) per sample: the bundle written, "
                    "`{rt} run` started, the agent's ready frame, the job, the agent running qjs, "
                    "the sealed report back. The container's removal (the runtime's exit, its "
                    "cgroup and state) happens off the answer's path, in the provider's "
                    "destroyer thread, so it is not in the sample (the raw rows include it).")
# Pacing of the pool rows: longer than a pooled start plus a teardown on this 2-core host.
_POOL_INTERVAL_MS = {"runc": "300", "crun": "300", "runsc": "1000"}


def _oci_driver(runtime, pool_size, interval_ms=None):
    argv = [_LATENCY_TOOL, "--provider", f"oci:{runtime}", *_OCI_ENV,
            "--env", f"SANDBOX_OCI_POOL_SIZE={pool_size}", "--scenario", "{scenario}",
            "--runs", "{runs}", "--warmup", "{warmup}", "--code", "console.log(6*7)"]
    if interval_ms is not None:
        argv += ["--interval-ms", interval_ms]
    return argv


def _oci_probes(runtime, *more):
    return [needs_root(), needs_executable(runtime), _NEEDS_IMAGE_QJS, *more]


# runc.
REGISTRY.add(command(
    "runc-qjs-equivalent",
    ["runc", "--root", "{state}", "run", "--bundle", "{oci_qjs_bundle_runc}", "{id}"],
    cleanup=_oci_delete("runc"), stdin="{qjs_script}", baseline=None, max_runs=50,
    description="Raw `runc run` of the oci provider's runc bundle (user namespace, seccomp, "
                "cgroup limits) running qjs. " + _OCI_RAW_NOTE,
    probes=_oci_probes("runc"), trial_skips=True, version=["runc", "--version"],
    tier="container", peer=True,
))
REGISTRY.add(sampler(
    "oci.runc.js_console_log.cold", _oci_driver("runc", 0),
    baseline="runc-qjs-equivalent", target_ratio=1.10, max_runs=50, timeout_s=600.0,
    tier="container",
    probes=_oci_probes("runc", needs_path(_LATENCY_TOOL)),
    description="The oci provider on runc, pool off (SANDBOX_OCI_POOL_SIZE=0: every run starts "
                "its own container). " + _OCI_DRIVER_NOTE.format(rt="runc") + " At most 50 "
                "runs. Target (issue 6): p50 <= 1.10x `runc-qjs-equivalent`.",
))
REGISTRY.add(sampler(
    "oci.runc.js_console_log.pool", _oci_driver("runc", 2, _POOL_INTERVAL_MS["runc"]),
    baseline="runc-qjs-equivalent", target_p50_ms=10.0, max_runs=50, timeout_s=600.0,
    tier="container",
    probes=_oci_probes("runc", needs_path(_LATENCY_TOOL)),
    description="The oci provider on runc with a warm pool of 2 (the job goes to an agent "
                "already waiting in a started container), paced: an untimed "
                + _POOL_INTERVAL_MS["runc"] + " ms sleep before every run, so each finds a "
                "ready sandbox. At most 50 runs. Target (issue 6): p50 <= 10 ms.",
))

# crun: the provider starts it in a private mount namespace without the cgroup2 mount on a hybrid
# host (vfork child: unshare + make-rprivate + umount2, then exec); the raw row pays the same per
# run through plimsoll-hide-mount (the same calls, plus that tool's own execve).
REGISTRY.add(command(
    "crun-qjs-equivalent",
    [_HIDE_MOUNT, "{hybrid_cgroup2}", "--",
     "crun", "--root", "{state}", "run", "--bundle", "{oci_qjs_bundle_crun}", "{id}"],
    cleanup=[_HIDE_MOUNT, "{hybrid_cgroup2}", "--", *_oci_delete("crun")],
    stdin="{qjs_script}", baseline=None, max_runs=50,
    description="Raw `crun run` of the oci provider's crun bundle (user namespace, seccomp, "
                "cgroup limits) running qjs, started as the provider starts crun: through "
                "plimsoll-hide-mount, which unshares the mount namespace, makes / rprivate and "
                "detaches the cgroup2 mount of a hybrid host (nothing on other hosts) and execs "
                "crun (one execve of a small static binary more than the provider). "
                + _OCI_RAW_NOTE,
    probes=_oci_probes("crun", needs_path(_HIDE_MOUNT)), trial_skips=True,
    version=["crun", "--version"], tier="container", peer=True,
))
REGISTRY.add(sampler(
    "oci.crun.js_console_log.cold", _oci_driver("crun", 0),
    baseline="crun-qjs-equivalent", target_ratio=1.10, max_runs=50, timeout_s=600.0,
    tier="container",
    probes=_oci_probes("crun", needs_path(_LATENCY_TOOL)),
    description="The oci provider on crun, pool off (SANDBOX_OCI_POOL_SIZE=0). "
                + _OCI_DRIVER_NOTE.format(rt="crun") + " At most 50 runs. Target (issue 6): "
                "p50 <= 1.10x `crun-qjs-equivalent`.",
))
REGISTRY.add(sampler(
    "oci.crun.js_console_log.pool", _oci_driver("crun", 2, _POOL_INTERVAL_MS["crun"]),
    baseline="crun-qjs-equivalent", target_p50_ms=10.0, max_runs=50, timeout_s=600.0,
    tier="container",
    probes=_oci_probes("crun", needs_path(_LATENCY_TOOL)),
    description="The oci provider on crun with a warm pool of 2, paced: an untimed "
                + _POOL_INTERVAL_MS["crun"] + " ms sleep before every run. At most 50 runs. "
                "Target (issue 6): p50 <= 10 ms.",
))

# runsc (the provider's platform: systrap when the version has it, else ptrace; ptrace here).
REGISTRY.add(command(
    "runsc-qjs-equivalent",
    [*_RUNSC, "run", "--bundle", "{oci_qjs_bundle_runsc}", "{id}"],
    cleanup=_oci_delete("runsc"), stdin="{qjs_script}", baseline=None, max_runs=20,
    timeout_s=120.0,
    description="Raw `runsc --platform=ptrace --network=none run` of the oci provider's runsc "
                "bundle (no seccomp or user namespace: gVisor's kernel serves the calls; pids "
                "limit with gVisor's headroom) running qjs. At most 20 runs. " + _OCI_RAW_NOTE,
    probes=_oci_probes("runsc"), trial_skips=True, version=["runsc", "--version"],
    tier="kernel", peer=True,
))
REGISTRY.add(sampler(
    "oci.runsc.js_console_log.cold", _oci_driver("runsc", 0),
    baseline="runsc-qjs-equivalent", max_runs=20, timeout_s=600.0, tier="kernel",
    probes=_oci_probes("runsc", needs_path(_LATENCY_TOOL)),
    description="The oci provider on runsc, pool off (for reference: no target). "
                + _OCI_DRIVER_NOTE.format(rt="runsc") + " At most 20 runs.",
))
REGISTRY.add(sampler(
    "oci.runsc.js_console_log.pool", _oci_driver("runsc", 2, _POOL_INTERVAL_MS["runsc"]),
    baseline="runsc-qjs-equivalent", target_p50_ms=5.0, max_runs=50, timeout_s=600.0,
    tier="kernel",
    probes=_oci_probes("runsc", needs_path(_LATENCY_TOOL)),
    description="The oci provider on runsc with a warm pool of 2, paced: an untimed "
                + _POOL_INTERVAL_MS["runsc"] + " ms sleep before every run, so each finds a "
                "ready sandbox (a cold runsc start is several hundred ms here). At most 50 runs "
                "(20 until 2026-12-05: the p50 of 20 moved by +-0.4 ms from round to round). "
                "Target (issue 23, replacing issue 6's 60 ms): p50 <= 5 ms.",
))


# The `microvm` provider (issue 7) against a raw QEMU boot of the same kernel. ---------------------
# QEMU -M microvm booting Debian's cloud kernel (docs/microvm.md), under the accelerator
# {microvm_accel} names: $SANDBOX_MICROVM_ACCEL, tcg (software emulation) by default, the only one
# that boots Debian's kernel on our machines. Every row records the accelerator in its facts
# ("Ran on: ..."). The numbers: (1) the raw boot; (2) the provider's cold boot to the agent's
# ready frame, a reference compared with (1), and a cold run of console.log(6*7), also a
# reference; (3) a pooled run of console.log(6*7): p50 <= 150 ms.
_MICROVM_BOOT = "{plimsoll_bin}/plimsoll-microvm-boot"
# The provider starts QEMU through plimsoll-vmm-jail (its own uid, cgroup and namespaces), which
# needs root and is found next to the running tool ({plimsoll_bin}).
_MICROVM_PROBES = [needs_root(), needs_executable("qemu-system-x86_64"),
                   needs_path("{plimsoll_bin}/plimsoll-vmm-jail")]
_MICROVM_ENV = ["--env", "SANDBOX_MICROVM_ACCEL={microvm_accel}",
                "--env", "SANDBOX_MICROVM_STATE_DIR={state}/microvm",
                "--env", "PLIMSOLL_MICROVM_DIR={microvm_dir}"]
# Pacing of the pooled row. The pool refills one VM at a time and a pooled boot takes ~2.1-2.7 s
# under TCG here, 3-7 s when the machine is loaded: a fixed interval is either too short under load
# (seen: 3 s left the pool of 2 draining, runs overlapping a boot on the other core) or wastes
# minutes when quiet. So before every run plimsoll-latency waits (untimed) until the pool is full
# again (--await-pool-ms: at most 30 s), then sleeps 250 ms more (the used VM's power-off takes
# ~0.1 s and is long done; the fresh VM's agent has just announced itself). Each run therefore
# takes a booted VM while no other VM boots. Pool size 1: the provider's default; with the wait, a
# second VM would only add an idle guest.
_MICROVM_POOL_SIZE = "1"
_MICROVM_POOL_AWAIT_MS = "30000"
_MICROVM_POOL_SETTLE_MS = "250"


def _microvm_driver(pool_size, warmup, interval_ms=None, await_pool_ms=None):
    argv = [_LATENCY_TOOL, "--provider", "microvm", *_MICROVM_ENV,
            "--env", f"SANDBOX_MICROVM_POOL_SIZE={pool_size}", "--scenario", "{scenario}",
            "--runs", "{runs}", "--warmup", warmup, "--code", "console.log(6*7)"]
    if await_pool_ms is not None:
        argv += ["--await-pool-ms", await_pool_ms]
    if interval_ms is not None:
        argv += ["--interval-ms", interval_ms]
    return argv


REGISTRY.add(sampler(
    "qemu-microvm-boot",
    [_MICROVM_BOOT, "--artifacts", "{microvm_dir}", "--raw-initramfs", "{microvm_raw_initramfs}",
     "--accel", "{microvm_accel}", "--state", "{state}", "--raw-scenario", "{scenario}",
     "--agent-scenario", "microvm.boot_to_ready", "--runs", "{runs}", "--warmup", "1"],
    baseline=None, max_runs=6, timeout_s=900.0, tier="{microvm_tier}", peer=True,
    produces=["microvm.boot_to_ready"],
    probes=[*_MICROVM_PROBES, needs_path(_MICROVM_BOOT)],
    version=["qemu-system-x86_64", "--version"],
    description="Raw QEMU boot of the provider's kernel, QEMU started directly (no jailer, no "
                "QMP) with the provider's own QEMU command line "
                "(microvm::QemuArgv with the VmConfig the provider builds for default limits: "
                "-M microvm, -cpu max, 320 MiB, 1 vCPU, the same vmlinuz and kernel command "
                "line, the read-only EROFS disk, the virtio-serial port, -sandbox on) except "
                "-initrd, a minimal initramfs written by the bench (static busybox, "
                "/dev/console, an /init that echoes a marker and runs `reboot -f`; ~1.0 MB "
                "against the provider's 1.1 MB), and -serial file:/dev/stdout. Timed from just "
                "before QEMU's spawn to the marker read from QEMU's stdout: the kernel's boot "
                "to its first userspace output. QEMU's exit (-no-reboot) is waited for, "
                "untimed. One warm-up; at most 6 runs, alternating with "
                "`microvm.boot_to_ready` in one process (plimsoll-microvm-boot), never two VMs "
                "at once. Also the peer of its tier (issue 23: vm under kvm, kernel under tcg) "
                "as a lower bound: any fresh-VM sandbox boots at least this far, and this one "
                "runs no JavaScript.",
))
REGISTRY.add(produced(
    "microvm.boot_to_ready", baseline="qemu-microvm-boot",
    description="The provider's cold boot: microvm::MicrovmVm::Start, the call the provider "
                "makes when no pooled VM is there: the VM's uid, directory and cgroup, "
                "plimsoll-vmm-jail exec'ing QEMU with the real initramfs, /init "
                "(7 modules, the disk and tmpfs mounts, a pid namespace), plimsoll-guest started "
                "from the disk, timed until its ready frame arrives on the virtio-serial "
                "channel, and QMP's answers (query-kvm, query-status). Destroy (the channel "
                "closed, the VM powers off, cgroup and uid freed) is untimed. Same QEMU "
                "command line as `qemu-microvm-boot` but for -initrd, -serial and the QMP "
                "socket, measured alternately with it. A reference (no target): the ratio is "
                "what the jail, the guest's userspace up to the agent and QMP add to a bare "
                "kernel boot.",
))
# The cold row waits 500 ms (untimed) before every run, so the previous run's VM has powered off
# (~0.1 s; the destroyer kills it after 0.3 s) and each boot has the machine to itself, as the
# raw boots do.
REGISTRY.add(sampler(
    "microvm.js_console_log.cold", _microvm_driver(0, "1", "500"),
    baseline="qemu-microvm-boot", max_runs=4, timeout_s=600.0, tier="{microvm_tier}",
    probes=[*_MICROVM_PROBES, needs_path(_LATENCY_TOOL)],
    description="The microvm provider, pool off (SANDBOX_MICROVM_POOL_SIZE=0), in-process "
                "(plimsoll-latency): Sandbox::Open(\"microvm\") and its evidence once (artifact "
                "hashes, the self-check and memory probe VMs), then Sandbox::Run of "
                "console.log(6*7) per sample: a VM booted to the agent's ready frame, the job, "
                "qjs as uid 1000 inside, the sealed report back. The VM's power-off is handed "
                "to the provider's destroyer thread (not in the sample); an untimed 500 ms sleep "
                "before every run lets it finish. One warm-up, at most 4 runs. A reference (no "
                "target), compared with the raw boot.",
))
REGISTRY.add(sampler(
    "microvm.js_console_log.pool",
    _microvm_driver(_MICROVM_POOL_SIZE, "2", _MICROVM_POOL_SETTLE_MS, _MICROVM_POOL_AWAIT_MS),
    baseline="qemu-microvm-boot", target_p50_ms=150.0, max_runs=15, timeout_s=600.0,
    tier="{microvm_tier}",
    probes=[*_MICROVM_PROBES, needs_path(_LATENCY_TOOL)],
    description="The microvm provider with a warm pool of " + _MICROVM_POOL_SIZE + " "
                "(SANDBOX_MICROVM_POOL_SIZE, the provider's default), paced: before every run "
                "plimsoll-latency waits, untimed, until the pool is full again (the refill's "
                "boot done; --await-pool-ms, at most 30 s) and then " + _MICROVM_POOL_SETTLE_MS
                + " ms more, so each run takes a booted VM whose agent waits for its job while "
                "no other VM boots. Sample: "
                "Sandbox::Run of console.log(6*7): the job to the waiting agent over "
                "virtio-serial, qjs as uid 1000 inside the VM, the sealed report back; the "
                "used VM's power-off is off the answer's path. The pool's counters after the "
                "runs and how many runs started with a full pool are in the facts (\"0 found "
                "empty\": no run was a cold boot). Two "
                "warm-ups (the pool's first fill), at most 15 runs. Target (issue 7): p50 <= "
                "150 ms.",
))


# Issue 15 on the OS-level providers: a cell round trip in an open session (plimsoll-latency
# --mode cell: one session opened untimed, its first cell sets x = 0, then each sample is the
# cell `x += 1` and a print of x in the warm interpreter; the tool fails unless each printed the
# next count, i.e. the state was kept), compared with the same provider's one-shot run in the
# same bench run. Linux's one-shot baselines run through the same tool and API (Sandbox::Run);
# the oci and microvm cells compare with their pooled one-shot rows above (the fastest one-shot
# run each provider has). `sessions.linux.open` times Sandbox::OpenSession until the session can
# take a call (its own container, the agent's ready frame); the close is untimed.
_LINUX_ENV = ["--env", "PLIMSOLL_IMAGE={image}"]
_LINUX_PROBES = [needs_root(), needs_path(_LATENCY_TOOL), _NEEDS_IMAGE_QJS]


def _linux_session_tool(mode, language):
    return [_LATENCY_TOOL, "--provider", "linux", *_LINUX_ENV, "--mode", mode, "--lang", language,
            "--scenario", "{scenario}", "--runs", "{runs}", "--warmup", "{warmup}"]


def _cell_tool(provider_argv):
    """provider_argv: an unpaced plimsoll-latency argv of a one-shot row (its --code dropped:
    cell mode runs its own); the same provider in cell mode."""
    argv = [a for a in provider_argv if a not in ("--code", "console.log(6*7)")]
    return argv + ["--mode", "cell", "--lang", "javascript"]


_CELL_NOTE = ("One session opened (untimed) and kept; sample: the cell `x += 1; console.log(x)` "
              "(`x += 1; print(x)` in Python) in its warm interpreter: the job over the kept "
              "agent's channel, the interpreter woken, the cell, the sweep of every other "
              "process, the interpreter stopped again, the sealed report and the chained record.")
REGISTRY.add(sampler(
    "sessions.linux.js_run", _linux_session_tool("run", "javascript"),
    baseline=None, max_runs=200, timeout_s=600.0, probes=_LINUX_PROBES, tier="container",
    description="The linux provider's one-shot run of console.log(6*7) through Sandbox::Run "
                "(plimsoll-latency, in-process): a container made, the agent, qjs, the report, "
                "the record. The baseline of the linux session rows. At most 200 runs.",
))
REGISTRY.add(sampler(
    "sessions.linux.js_cell", _linux_session_tool("cell", "javascript"),
    baseline="sessions.linux.js_run", target_p50_ms=1.5, max_runs=500, timeout_s=600.0,
    probes=_LINUX_PROBES,
    description="linux, JavaScript (qjs --repl-server). " + _CELL_NOTE + " At most 500 runs. "
                "Target (issue 15): p50 <= 1.5 ms; the ratio is to the one-shot run.",
))
REGISTRY.add(sampler(
    "sessions.linux.py_run", _linux_session_tool("run", "python"),
    baseline=None, max_runs=100, timeout_s=600.0, probes=_LINUX_PROBES,
    description="The linux provider's one-shot run of print(6*7) through Sandbox::Run (a "
                "fresh python3 each time). The baseline of the Python cell row. At most 100 "
                "runs.",
))
REGISTRY.add(sampler(
    "sessions.linux.py_cell", _linux_session_tool("cell", "python"),
    baseline="sessions.linux.py_run", target_p50_ms=2.0, max_runs=500, timeout_s=600.0,
    probes=_LINUX_PROBES,
    description="linux, Python (python_repl.py in python3 -I). " + _CELL_NOTE + " At most 500 "
                "runs. Target (issue 15): p50 <= 2 ms; the ratio is to the one-shot run.",
))
REGISTRY.add(sampler(
    "sessions.linux.open", _linux_session_tool("open", "javascript"),
    baseline="sessions.linux.js_run", target_ratio=1.0, max_runs=100, timeout_s=600.0,
    probes=_LINUX_PROBES,
    description="Sandbox::OpenSession on linux, timed until the session can take a call (its "
                "own container and the session agent's ready frame; the interpreters start on "
                "first use); the close is untimed. At most 100 runs. Target (issue 15): p50 <= "
                "the one-shot run's p50 (ratio <= 1.0): sessions are not slower to start.",
))
# The data variant (issue 18): the Python data stack imported and one small plot drawn, in the
# linux provider, against the same code run by the image's own python3 on the same tree without
# plimsoll (unshare + chroot into it, a fresh tmpfs on /tmp for matplotlib's cache, as the
# sandbox has). Both start cold every run: a fresh interpreter, nothing cached between runs.
_DATA_STACK_CODE = ("import io, numpy, pandas, matplotlib\n"
                    "matplotlib.use('Agg')\n"
                    "import matplotlib.pyplot as plt\n"
                    "fig, ax = plt.subplots()\n"
                    "ax.plot(numpy.arange(10), pandas.Series(range(10)) ** 2)\n"
                    "png = io.BytesIO()\n"
                    "fig.savefig(png, format='png')\n"
                    "print(png.getvalue()[:4] == b'\\x89PNG')\n")
_NEEDS_DATA_PYTHON = needs_path("{data_image_rootfs}/usr/lib/python3/dist-packages/pandas")
REGISTRY.add(command(
    "chroot-python-data-stack",
    ["unshare", "-Urnpimuf", "--mount-proc", "--root={data_image_rootfs}", "/bin/sh", "-c",
     "mount -t tmpfs tmpfs /tmp && cd /tmp && HOME=/tmp MPLCONFIGDIR=/tmp exec /usr/bin/python3 "
     "-c \"$0\"", _DATA_STACK_CODE],
    baseline=None, max_runs=20, timeout_s=120.0,
    probes=[needs_root(), needs_executable("unshare"), _NEEDS_DATA_PYTHON], trial_skips=True,
    description="The data image's own python3, chrooted into its tree with unshare (user, net, "
                "pid, ipc, uts, mount namespaces; a fresh tmpfs on /tmp) and no plimsoll: "
                "`import numpy, pandas, matplotlib`, one small plot saved as PNG in memory. The "
                "baseline of `linux.py_data_stack`. At most 20 runs.",
))
REGISTRY.add(sampler(
    "linux.py_data_stack",
    [_LATENCY_TOOL, "--provider", "linux", "--env", "PLIMSOLL_IMAGE={data_image}", "--mode",
     "run", "--lang", "python", "--code", _DATA_STACK_CODE, "--scenario", "{scenario}",
     "--runs", "{runs}", "--warmup", "{warmup}"],
    baseline="chroot-python-data-stack", max_runs=20, timeout_s=600.0,
    probes=[needs_root(), needs_path(_LATENCY_TOOL), _NEEDS_DATA_PYTHON],
    description="The same snippet as a `python` run on the linux provider serving the data "
                "image (Sandbox::Run through plimsoll-latency, in-process): the sandbox made, "
                "python3 started cold, the stack imported, the plot drawn, the result back. No "
                "target (issue 18 asks for the figure); the ratio is to the unsandboxed run on "
                "the same tree. At most 20 runs.",
))
# Issue 18: each image variant built from nothing (a private cache, --rebuild-base) and its size.
# One build per row (about a minute each, Debian's archive and, for data, PyPI and npm needed).
for _variant in ("base", "data"):
    REGISTRY.add(sampler(
        f"image.{_variant}.build",
        ["{python}", "{bench}/adapters/image_build.py", "--plimsoll", "{plimsoll_bin}/plimsoll",
         "--variant", _variant, "--state", "{state}"],
        baseline=None, min_runs=1, max_runs=1, timeout_s=900.0,
        probes=[needs_root(), needs_path("{plimsoll_bin}/plimsoll"),
                needs_executable("mmdebstrap")],
        produces=[f"image.{_variant}.size"],
        description=f"`plimsoll image build --variant {_variant} --rebuild-base` into a fresh "
                    "directory with an empty cache: the whole build (Debian packages, pinned "
                    "wheels and npm project where the recipe has them, our binaries, the "
                    "manifest), one sample (kept in ms). Needs Debian's archive.",
    ))
    REGISTRY.add(produced(
        f"image.{_variant}.size", baseline=None,
        description=f"The {_variant} image's directory after that build, `du -sk` (kB).",
    ))
for _runtime, _target in (("runc", 3.0), ("crun", None), ("runsc", 10.0)):
    REGISTRY.add(sampler(
        f"sessions.oci.{_runtime}.js_cell", _cell_tool(_oci_driver(_runtime, 0)),
        baseline=f"oci.{_runtime}.js_console_log.pool", target_p50_ms=_target, max_runs=300,
        timeout_s=600.0, probes=_oci_probes(_runtime, needs_path(_LATENCY_TOOL)),
        description=f"oci on {_runtime}, JavaScript. The session's container is its own (never "
                    "a pooled one). " + _CELL_NOTE + " At most 300 runs. " +
                    (f"Target (issue 15): p50 <= {_target:g} ms; " if _target else "No target; ") +
                    "the ratio is to the pooled one-shot run.",
    ))
REGISTRY.add(sampler(
    "sessions.microvm.js_cell", _cell_tool(_microvm_driver(0, "{warmup}")),
    baseline="microvm.js_console_log.pool", target_p50_ms=60.0, max_runs=50, timeout_s=600.0,
    probes=[*_MICROVM_PROBES, needs_path(_LATENCY_TOOL)],
    description="microvm, JavaScript: the session's VM is booted for it (untimed, with the "
                "evidence). " + _CELL_NOTE + " At most 50 runs. Target (issue 15): p50 <= 60 ms "
                "(under TCG here, tier kernel); the ratio is to the pooled one-shot run.",
))


# Issue 16: what each client adds to a run, against its own language's standard library making the
# same request in the same process (bench/adapters/client_bench.py starts an embedded plimsolld and
# runs clients/<lang>'s bench program once; it prints the three rows as summaries: n and p50).
_CLIENT_ADAPTER = ["{python}", "{bench}/adapters/client_bench.py", "--plimsolld", _PLIMSOLLD,
                   "--runs", "{runs}", "--state", "{state}"]
for _lang, _tool, _how in (
        ("python", "python3", "http.client"),
        ("typescript", "node", "node:http"),
        ("go", "go", "net/http")):
    REGISTRY.add(sampler(
        f"clients.{_lang}.raw_run", _CLIENT_ADAPTER + ["--lang", _lang], baseline=None,
        min_runs=2000, max_runs=2000, timeout_s=900.0,
        probes=[needs_executable(_tool), needs_path(_PLIMSOLLD)],
        produces=[f"clients.{_lang}.run", f"clients.{_lang}.cell"],
        description=f"POST /v1/runs of console.log(6*7) to an embedded plimsolld made with {_how} "
                    "alone: a fresh Plimsoll-Request-Id, one keep-alive connection, the answer "
                    "read whole, nothing checked. The baseline of the client rows below, measured "
                    "in the same process. 2000 runs after a warm-up.",
    ))
    REGISTRY.add(produced(
        f"clients.{_lang}.run", baseline=f"clients.{_lang}.raw_run", target_added_p50_ms=0.2,
        description=f"The same run through the {_lang} client: the request built and digested, "
                    "the echo and the mark checked, the answer read strictly, the result and "
                    "record digests recomputed and the record checked (tier, floor, environment). "
                    "Target (issue 16): at most +0.2 ms over the raw request (+p50, same run).",
    ))
    REGISTRY.add(produced(
        f"clients.{_lang}.cell", baseline=None,
        description=f"A session cell `1+1` through the {_lang} client on embedded, in an open "
                    "session: the chained record checked on every answer. No target.",
    ))


# Issue 19: a broker call from inside each tier (guest host.get -> the tier's way to the broker ->
# loopback upstream -> answer), against a direct loopback HTTP request from the host to the same
# upstream (bench/tools/broker_bench.cc). One plimsoll-broker-bench process per row; each guest
# row is one granted run whose script times its own calls (performance.now()).
_BROKER_BENCH = "{plimsoll_bin}/plimsoll-broker-bench"


def _broker_row(provider, *env):
    return [_BROKER_BENCH, "--scenario", "{scenario}", "--provider", provider, *env,
            "--runs", "{runs}", "--warmup", "{warmup}"]


_BROKER_NOTE = ("host.get('/items/1') from guest JavaScript in one granted run, each call timed "
                "by the script (performance.now()): the tier's way to the broker, the broker's "
                "path, allow-list, budget and trace, the credential attached, the same upstream "
                "call, the answer back in the guest.")
REGISTRY.add(sampler(
    "broker.direct_loopback", _broker_row("embedded"), baseline=None, min_runs=1000,
    probes=[needs_path(_BROKER_BENCH)], timeout_s=300.0,
    description="The broker's HTTP client from the host, no guest and no broker checks: a fresh "
                "loopback connection, GET /items/1, the small JSON answer read. The baseline of "
                "the broker rows. At least 1000 runs.",
))
REGISTRY.add(sampler(
    "broker.embedded_host_get", _broker_row("embedded"), baseline="broker.direct_loopback",
    min_runs=1000, target_p50_ms=0.3, probes=[needs_path(_BROKER_BENCH)], timeout_s=300.0,
    description=_BROKER_NOTE + " embedded: the engine's host_call, in process. Target (issue 19): "
                "p50 <= 0.3 ms.",
))
REGISTRY.add(sampler(
    "broker.linux_host_get", _broker_row("linux", "--env", "PLIMSOLL_IMAGE={image}"),
    baseline="broker.direct_loopback", min_runs=1000, target_p50_ms=1.0,
    probes=[needs_root(), needs_path(_BROKER_BENCH), _NEEDS_IMAGE_QJS], timeout_s=300.0,
    description=_BROKER_NOTE + " linux: qjs, the agent's relay socket, its channel. Target "
                "(issue 19): p50 <= 1 ms.",
))
REGISTRY.add(sampler(
    "broker.runsc_host_get",
    _broker_row("oci:runsc", *_OCI_ENV, "--env", "SANDBOX_OCI_POOL_SIZE=0"),
    baseline="broker.direct_loopback", min_runs=1000, target_p50_ms=3.0,
    probes=[*_oci_probes("runsc"), needs_path(_BROKER_BENCH)], timeout_s=300.0,
    description=_BROKER_NOTE + " oci:runsc: the relay socket inside gVisor, the agent's channel "
                "out of it. Target (issue 19): p50 <= 3 ms.",
))
REGISTRY.add(sampler(
    "broker.microvm_host_get",
    _broker_row("microvm", *_MICROVM_ENV, "--env", "SANDBOX_MICROVM_POOL_SIZE=0"),
    baseline="broker.direct_loopback", min_runs=1000, target_p50_ms=20.0,
    probes=[*_MICROVM_PROBES, needs_path(_BROKER_BENCH)], timeout_s=600.0,
    description=_BROKER_NOTE + " microvm: the relay inside the VM, virtio-serial out of it (TCG "
                "here: reported tier kernel). Target (issue 19): p50 <= 20 ms under TCG.",
))


# Issue 20: exams. The cart-pole plant stepping alone in-process (each tick: read the state, the
# accepted law computed natively, step) against whole trials on linux: plimsoll-trial in the
# image with the accepted controller on qjs --controller, the controller the project's only file
# (bench/tools/exam_bench.cc). One invocation of the trial sampler prints both linux rows.
_EXAM_BENCH = "{plimsoll_bin}/plimsoll-exam-bench"
_NEEDS_IMAGE_TRIAL = needs_path("{image_rootfs}/usr/local/bin/plimsoll-trial")
REGISTRY.add(sampler(
    "exam.plant_tick", [_EXAM_BENCH, "--scenario", "{scenario}", "--runs", "{runs}",
                        "--warmup", "{warmup}"],
    baseline=None, min_runs=20, max_runs=20, probes=[needs_path(_EXAM_BENCH)], timeout_s=300.0,
    description="One cart-pole tick with nothing around it, in process: plant_read_state, "
                "u = 40θ + 5ω + x + v computed natively, plant_step (10 Euler substeps, wasm2c). "
                "Every tick of 20 trials of 2000 ticks. The baseline of exam.linux_tick_js.",
))
REGISTRY.add(sampler(
    "exam.linux_trial", [_EXAM_BENCH, "--scenario", "{scenario}", "--provider", "linux",
                         "--runs", "{runs}", "--warmup", "{warmup}"],
    baseline=None, min_runs=20, max_runs=20, target_p50_ms=300.0,
    probes=[needs_root(), needs_path(_EXAM_BENCH), _NEEDS_IMAGE_TRIAL], timeout_s=600.0,
    produces=["exam.linux_tick_js"],
    description="A whole cart-pole exam on linux through Sandbox::Run: a fresh sandbox, the "
                "accepted JavaScript controller written to /work, plimsoll-trial with qjs "
                "--controller for 2000 ticks (20 s of plant time), the trajectory hashed, the "
                "summary and the artifact back. 20 trials. Target (issue 20): p50 <= 300 ms.",
))
# Issue 21: C controllers. The same trials with the accepted law in C: the project's first step
# compiles it in the sandbox (plimsoll-cc), the trial runs the module on plimsoll-wasm-controller.
_NEEDS_IMAGE_CC = needs_path("{image_rootfs}/usr/local/bin/plimsoll-cc")
REGISTRY.add(sampler(
    "exam.linux_c_compile", [_EXAM_BENCH, "--scenario", "{scenario}", "--provider", "linux",
                             "--runs", "{runs}", "--warmup", "{warmup}"],
    baseline=None, min_runs=10, max_runs=10,
    probes=[needs_root(), needs_path(_EXAM_BENCH), _NEEDS_IMAGE_CC], timeout_s=600.0,
    produces=["exam.linux_tick_c"],
    description="The compile step of a C controller on linux, measured inside the sandbox (the "
                "step's own duration): plimsoll-cc writes the glue, clang-14 compiles the "
                "accepted cart-pole law to wasm32-wasi (-O2 -ffp-contract=off, wasi-libc, "
                "wasm-ld), and the module is read and checked for imports. 10 runs.",
))
_NEEDS_IMAGE_MODEL = needs_path("{image_rootfs}/usr/local/bin/plimsoll-model")
REGISTRY.add(sampler(
    "exam.linux_module_1000", [_EXAM_BENCH, "--scenario", "{scenario}", "--provider", "linux",
                               "--runs", "{runs}", "--warmup", "{warmup}"],
    baseline=None, min_runs=10, max_runs=10, target_p50_ms=2000.0,
    probes=[needs_root(), needs_path(_EXAM_BENCH), _NEEDS_IMAGE_MODEL], timeout_s=600.0,
    description="A module run on linux through Sandbox::Run: 1000 cart-pole rows (initial angles "
                "over ±0.2 rad), 5 s of model time each with no controller (500 ticks a row, "
                "most rows fail earlier as the pole falls), plimsoll-model in a fresh sandbox, "
                "the rows back as an artifact. Target (issue 21): p50 <= 2 s.",
))
REGISTRY.add(produced(
    "exam.linux_tick_c", baseline="exam.plant_tick",
    description="One tick inside the runner in those trials (--tick-times) with the C law as the "
                "controller: the state line to plimsoll-wasm-controller, plimsoll_control(k) on "
                "wabt's interpreter, the answer back, plant_step. The ratio is to the plant "
                "stepping alone (exam.plant_tick, same run).",
))
REGISTRY.add(produced(
    "exam.linux_tick_js", baseline="exam.plant_tick",
    description="One tick inside the runner in those trials (--tick-times): the state read, the "
                "state line written to qjs, control() called in the kept interpreter, the answer "
                "line read and parsed, plant_step, the row recorded. Every tick of the 20 trials. "
                "The ratio is to the plant stepping alone (exam.plant_tick, same run).",
))
