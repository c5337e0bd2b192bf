"""The scenario registry: what `python3 bench/run.py` measures, in this order.

Every baseline runs /bin/true from the same minimal rootfs (the host's /bin/true plus the shared
objects `ldd` lists; see harness/fixtures.py), so rows differ only in how each tool builds its wall.
Ratios are against the reference baseline `unshare` unless a scenario names another.

To add a scenario, add one `REGISTRY.add(command(...))` or `REGISTRY.add(sampler(...))`; see
harness/scenario.py for the fields and README.md for examples.
"""

from harness.scenario import Registry, command, needs_executable

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
