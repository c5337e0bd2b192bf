"""The run's work directory and what the baselines share: a minimal rootfs and an OCI bundle.

Everything is built lazily, on the first template that names it, in a fresh temporary directory that
close() removes. The rootfs is the same tree for every sandbox (unshare's chroot, bwrap's read-only
root, the OCI runtimes' read-only root), so the baselines differ only in how they build the wall.

The minimal rootfs holds /bin/true and the shared objects `ldd /bin/true` lists (on Debian 12:
libc.so.6 and the dynamic loader), plus empty /proc, /dev, /sys and /tmp mount points.

The JavaScript rows use plimsoll's guest image instead (never written to): `{image}` is the image
directory ($PLIMSOLL_IMAGE, else <plimsoll_bin>/../image, i.e. the build tree's), `{image_rootfs}`
its rootfs (`{data_image}` and `{data_image_rootfs}` the same for the data variant:
$PLIMSOLL_DATA_IMAGE, else <plimsoll_bin>/../image-data), `{qjs_script}` a file holding JS_SNIPPET (given to qjs on stdin) and `{qjs_bundle}` an
OCI bundle like `{bundle}` whose read-only root is the image rootfs and whose process is `qjs -`.

The `oci` provider's raw baselines use `{oci_qjs_bundle_runc}`, `{oci_qjs_bundle_crun}` and
`{oci_qjs_bundle_runsc}`: the bundle the provider itself writes for that runtime (written by
`{plimsoll_bin}/plimsoll-oci-bundle`, linking the provider's own bundle writer), with `qjs -` as the
process. `{hybrid_cgroup2}` is the cgroup2 mount point on a hybrid-cgroup host (where the provider
hides it from crun), else "".

The `microvm` rows use `{microvm_dir}` (the provider's guest artifacts: $PLIMSOLL_MICROVM_DIR, else
<plimsoll_bin>/../microvm), `{microvm_accel}` (tcg or kvm: $SANDBOX_MICROVM_ACCEL, default tcg; the
raw boot and the provider rows must use the same one) and `{microvm_raw_initramfs}` (a minimal
initramfs written here from the host's static busybox; see initramfs.py), and `{microvm_tier}` (vm
under kvm, kernel under tcg: the tier of the raw QEMU boot as a peer).

The process-tier peer uses `{quickjs_emscripten}`: bench/peers/quickjs-emscripten's pinned npm
project installed with `npm ci` into the bench's cache on first use (npm_peer.py).
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from . import initramfs

BENCH_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_DIR = os.path.dirname(BENCH_DIR)

_LDD_PATH = re.compile(r"(/\S+)")

# The snippet every JavaScript row runs (plimsoll's linux provider, unshare + qjs, runc + qjs).
JS_SNIPPET = "console.log(6*7)"
# qjs inside the guest image; `qjs -` reads the script from stdin.
IMAGE_QJS = "/usr/local/bin/qjs"


class FixtureError(Exception):
    """A shared fixture could not be built; scenarios that need it are skipped with this reason."""


def shared_objects(binary):
    """Absolute paths of the shared objects (including the loader) that `ldd binary` lists."""
    try:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=False,
                             timeout=30)
    except OSError as error:
        raise FixtureError(f"cannot run ldd: {error}") from error
    if out.returncode != 0:
        if "not a dynamic executable" in out.stdout + out.stderr:
            return []
        raise FixtureError(f"ldd {binary} failed: {out.stderr.strip() or out.stdout.strip()}")
    paths = []
    for line in out.stdout.splitlines():
        # "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)"
        # or "/lib64/ld-linux-x86-64.so.2 (0x...)"
        target = line.split("=>", 1)[1] if "=>" in line else line
        match = _LDD_PATH.search(target)
        if match:
            paths.append(match.group(1))
    return paths


def build_minimal_rootfs(destination, programs=("/bin/true",)):
    """Copy programs and their shared objects into destination at the same paths; add mount
    points."""
    os.makedirs(destination, exist_ok=True)
    files = []
    for program in programs:
        files.append(program)
        files.extend(shared_objects(program))
    for source in files:
        target = os.path.join(destination, source.lstrip("/"))
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(source, target)   # follows symlinks: the tree holds real files only
    for mount_point in ("proc", "dev", "sys", "tmp", "etc"):
        os.makedirs(os.path.join(destination, mount_point), exist_ok=True)
    os.chmod(os.path.join(destination, "tmp"), 0o1777)
    return destination


def oci_config(root_path, args, hostname="plimsoll-bench"):
    """An OCI runtime config (spec 1.0.2) close to `runc spec`'s defaults, with a read-only root.

    Namespaces: pid, network (a fresh one: only lo), ipc, uts, mount. No user namespace, no resource
    limits, no seccomp filter (as `runc spec`). Capabilities: AUDIT_WRITE, KILL, NET_BIND_SERVICE.
    """
    capabilities = ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]
    return {
        "ociVersion": "1.0.2",
        "process": {
            "terminal": False,
            "user": {"uid": 0, "gid": 0},
            "args": list(args),
            "env": ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
            "cwd": "/",
            "capabilities": {key: list(capabilities)
                             for key in ("bounding", "effective", "permitted")},
            "rlimits": [{"type": "RLIMIT_NOFILE", "hard": 1024, "soft": 1024}],
            "noNewPrivileges": True,
        },
        "root": {"path": root_path, "readonly": True},
        "hostname": hostname,
        "mounts": [
            {"destination": "/proc", "type": "proc", "source": "proc"},
            {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
             "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
            {"destination": "/dev/pts", "type": "devpts", "source": "devpts",
             "options": ["nosuid", "noexec", "newinstance", "ptmxmode=0666", "mode=0620"]},
            {"destination": "/dev/shm", "type": "tmpfs", "source": "shm",
             "options": ["nosuid", "noexec", "nodev", "mode=1777", "size=65536k"]},
            {"destination": "/dev/mqueue", "type": "mqueue", "source": "mqueue",
             "options": ["nosuid", "noexec", "nodev"]},
            {"destination": "/sys", "type": "sysfs", "source": "sysfs",
             "options": ["nosuid", "noexec", "nodev", "ro"]},
        ],
        "linux": {
            "namespaces": [{"type": kind} for kind in ("pid", "network", "ipc", "uts", "mount")],
            "maskedPaths": ["/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys",
                            "/proc/latency_stats", "/proc/timer_list", "/proc/timer_stats",
                            "/proc/sched_debug", "/sys/firmware", "/proc/scsi"],
            "readonlyPaths": ["/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys",
                              "/proc/sysrq-trigger"],
        },
    }


class Fixtures:
    """Lazily built shared state for one benchmark run. A context manager (or call close())."""

    def __init__(self, keep=False, values=None):
        """values: extra template values, e.g. {"plimsoll_bin": "/repo/build/release/bin"}."""
        self.workdir = tempfile.mkdtemp(prefix="plimsoll-bench-")
        self.keep = keep
        self._built = dict(values or {})

    # Lazily built values ----------------------------------------------------------------------
    def _value(self, key):
        if key in self._built:
            value = self._built[key]
            if isinstance(value, FixtureError):
                raise value
            return value
        builder = getattr(self, f"_build_{key}", None)
        if builder is None:
            raise KeyError(key)
        try:
            value = builder()
        except FixtureError as error:
            self._built[key] = error
            raise
        except OSError as error:
            failure = FixtureError(f"building {key} failed: {error}")
            self._built[key] = failure
            raise failure from error
        self._built[key] = value
        return value

    def _build_rootfs(self):
        return build_minimal_rootfs(os.path.join(self.workdir, "rootfs"))

    def _build_bundle(self):
        bundle = os.path.join(self.workdir, "bundle")
        os.makedirs(bundle, exist_ok=True)
        config = oci_config(self._value("rootfs"), ["/bin/true"])
        with open(os.path.join(bundle, "config.json"), "w", encoding="utf-8") as handle:
            json.dump(config, handle, indent=2)
        return bundle

    def _build_image(self):
        """The guest image directory: $PLIMSOLL_IMAGE, else the one next to --plimsoll-bin."""
        configured = os.environ.get("PLIMSOLL_IMAGE")
        image = configured or os.path.join(os.path.dirname(self._value("plimsoll_bin")), "image")
        image = os.path.abspath(image)
        if not os.path.isdir(os.path.join(image, "rootfs")):
            how = ("the directory PLIMSOLL_IMAGE names" if configured else
                   "build it with `ninja -C build/release guest_image`, or set PLIMSOLL_IMAGE")
            raise FixtureError(f"no guest image at {image} (no rootfs/; {how})")
        return image

    def _build_image_rootfs(self):
        return os.path.join(self._value("image"), "rootfs")

    def _build_data_image(self):
        """The data variant's image (issue 18): $PLIMSOLL_DATA_IMAGE, else <plimsoll_bin>/../image-data."""
        configured = os.environ.get("PLIMSOLL_DATA_IMAGE")
        image = configured or os.path.join(os.path.dirname(self._value("plimsoll_bin")),
                                           "image-data")
        image = os.path.abspath(image)
        if not os.path.isdir(os.path.join(image, "rootfs")):
            how = ("the directory PLIMSOLL_DATA_IMAGE names" if configured else
                   "build it with `ninja -C build/release guest_image_data`, or set "
                   "PLIMSOLL_DATA_IMAGE")
            raise FixtureError(f"no data image at {image} (no rootfs/; {how})")
        return image

    def _build_data_image_rootfs(self):
        return os.path.join(self._value("data_image"), "rootfs")

    def _build_qjs_script(self):
        directory = os.path.join(self.workdir, "qjs")
        os.makedirs(directory, exist_ok=True)
        path = os.path.join(directory, "main.js")
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(JS_SNIPPET + "\n")
        return path

    def _build_qjs_bundle(self):
        bundle = os.path.join(self.workdir, "qjs-bundle")
        os.makedirs(bundle, exist_ok=True)
        config = oci_config(self._value("image_rootfs"), [IMAGE_QJS, "-"])
        with open(os.path.join(bundle, "config.json"), "w", encoding="utf-8") as handle:
            json.dump(config, handle, indent=2)
        return bundle

    def _oci_qjs_bundle(self, runtime):
        """The oci provider's own config.json for runtime, with `qjs -` as the process."""
        tool = os.path.join(self._value("plimsoll_bin"), "plimsoll-oci-bundle")
        if not os.path.exists(tool):
            raise FixtureError(f"{tool} does not exist (built with the release tree)")
        bundle = os.path.join(self.workdir, f"oci-qjs-bundle-{runtime}")
        argv = [tool, "--runtime", runtime, "--rootfs", self._value("image_rootfs"),
                "--out", bundle, "--cgroups-path", f"/plimsoll-oci-bench/{runtime}-qjs",
                "--", IMAGE_QJS, "-"]
        out = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
        if out.returncode != 0:
            raise FixtureError(f"plimsoll-oci-bundle failed: {(out.stderr or out.stdout).strip()}")
        return bundle

    def _build_oci_qjs_bundle_runc(self):
        return self._oci_qjs_bundle("runc")

    def _build_oci_qjs_bundle_crun(self):
        return self._oci_qjs_bundle("crun")

    def _build_oci_qjs_bundle_runsc(self):
        return self._oci_qjs_bundle("runsc")

    def _build_hybrid_cgroup2(self):
        """As the provider's HybridCgroup2MountPoint(): the first cgroup2 mount point when cgroup
        v1 hierarchies are mounted too, else ""."""
        cgroup2, v1 = "", False
        try:
            with open("/proc/self/mountinfo", encoding="utf-8") as handle:
                for line in handle:
                    left, _, right = line.partition(" - ")
                    fields, fstype = left.split(), right.split()[:1]
                    if fstype == ["cgroup2"] and not cgroup2 and len(fields) > 4:
                        cgroup2 = fields[4]
                    if fstype == ["cgroup"]:
                        v1 = True
        except OSError:
            return ""
        return cgroup2 if v1 else ""

    def _build_microvm_dir(self):
        """The microvm provider's artifacts: $PLIMSOLL_MICROVM_DIR, else the build tree's."""
        configured = os.environ.get("PLIMSOLL_MICROVM_DIR")
        directory = os.path.abspath(configured or os.path.join(
            os.path.dirname(self._value("plimsoll_bin")), "microvm"))
        if not os.path.exists(os.path.join(directory, "inputs")):
            how = ("the directory PLIMSOLL_MICROVM_DIR names" if configured else
                   "build it with `cmake --build build/release --target microvm_guest`, or set "
                   "PLIMSOLL_MICROVM_DIR")
            raise FixtureError(f"no complete microvm guest artifacts at {directory} (no inputs "
                               f"file; {how})")
        return directory

    def _build_microvm_accel(self):
        """tcg or kvm, from $SANDBOX_MICROVM_ACCEL (default tcg). Not auto: the raw QEMU boot
        and the provider's rows must run under the same accelerator."""
        accel = os.environ.get("SANDBOX_MICROVM_ACCEL") or "tcg"
        if accel not in ("tcg", "kvm"):
            raise FixtureError(f"SANDBOX_MICROVM_ACCEL={accel}: the bench needs tcg or kvm (the "
                               "raw QEMU boot and the provider must use the same accelerator)")
        return accel

    def _build_microvm_raw_initramfs(self):
        # The binary image/microvm/build.sh puts into the provider's initramfs.
        busybox = "/bin/busybox" if os.path.exists("/bin/busybox") else shutil.which("busybox")
        if not busybox:
            raise FixtureError("no busybox for the raw boot's initramfs (install busybox-static)")
        if shared_objects(busybox):
            raise FixtureError(f"{busybox} is not static (install busybox-static)")
        return initramfs.write_marker_initramfs(
            os.path.join(self.workdir, "microvm-raw", "initramfs.cpio.gz"), busybox)

    def _build_quickjs_emscripten(self):
        """The process-tier peer (issue 23): bench/peers/quickjs-emscripten's lockfile installed
        with npm ci into ${PLIMSOLL_CACHE:-~/.cache/plimsoll}/bench-peers/quickjs-emscripten
        (once per lockfile; see npm_peer.py). The directory holding its node_modules."""
        from . import npm_peer   # imports this module (FixtureError)
        return npm_peer.install(os.path.join(BENCH_DIR, "peers", "quickjs-emscripten"),
                                os.path.join(npm_peer.cache_root(), "quickjs-emscripten"),
                                "node_modules/quickjs-emscripten/package.json")

    def _build_microvm_tier(self):
        """The tier a microvm runs at under {microvm_accel}: vm with kvm, kernel with tcg
        (software emulation: the guest kernel is the wall, as with gVisor)."""
        return "vm" if self._value("microvm_accel") == "kvm" else "kernel"

    def _build_python(self):
        return sys.executable

    def _build_bench(self):
        return BENCH_DIR

    def _build_repo(self):
        return REPO_DIR

    def _build_plimsoll_bin(self):
        return os.path.join(REPO_DIR, "build", "release", "bin")

    def _build_workdir(self):
        return self.workdir

    def state_dir(self, scenario_name):
        path = os.path.join(self.workdir, "state", re.sub(r"[^A-Za-z0-9_.-]", "_", scenario_name))
        os.makedirs(path, exist_ok=True)
        return path

    # Formatting -------------------------------------------------------------------------------
    def format(self, template, **extra):
        """template.format(...) with fixtures built on demand; extra values take precedence."""
        fixtures = self

        class _Mapping(dict):
            def __missing__(self, key):
                return fixtures._value(key)

        return template.format_map(_Mapping(extra))

    def format_argv(self, argv, scenario_name, runs, warmup):
        """Format every argument; "{id}" stays for the timing loop to fill per invocation."""
        extra = {"state": self.state_dir(scenario_name), "scenario": scenario_name,
                 "runs": runs, "warmup": warmup, "id": "{id}"}
        return [self.format(arg, **extra) for arg in argv]

    def close(self):
        if not self.keep:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
