
import errno, json, os, socket, stat, sys

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
TMP, WORK, PIDS = int(args["--tmp"]), int(args["--work"]), int(args["--pids"])
# linux: our own namespace wall; oci-runc: runc or crun with our config.json;
# gvisor: runsc, where the guest is served by gVisor's kernel (the Sentry).
PROFILE, HOST_RELEASE = args.get("--profile", "linux"), args.get("--host-release", "")
# microvm: plimsoll-guest in a QEMU microvm, served by the guest's own Linux.
if PROFILE not in ("linux", "oci-runc", "gvisor", "microvm"):
    sys.exit("unknown profile " + PROFILE)

def report(name, passed, detail):
    print(json.dumps({"name": name, "passed": bool(passed), "detail": detail}), flush=True)

def error_name(e):
    return errno.errorcode.get(e.errno, str(e.errno))

mounts = []
with open("/proc/self/mountinfo") as f:
    for line in f:
        left, right = line.split(" - ", 1)
        l, r = left.split(), right.split()
        mounts.append({"id": l[0], "parent": l[1], "point": l[4], "options": set(l[5].split(",")),
                       "fstype": r[0], "super": set(r[2].split(",")) if len(r) > 2 else set()})
if PROFILE != "linux":
    # Only the topmost mount at each mount point is reachable: crun mounts
    # placeholder tmpfs files under /dev/null etc. and binds the real device
    # over them. A mount is covered when a child of it sits on the same point
    # (gVisor's root is its own parent, which covers nothing).
    by_id = {m["id"]: m for m in mounts}
    covered = {m["parent"] for m in mounts if m["parent"] != m["id"] and m["parent"] in by_id
               and by_id[m["parent"]]["point"] == m["point"]}
    mounts = [m for m in mounts if m["id"] not in covered]
by_point = {m["point"]: m for m in mounts}

root = by_point.get("/")
try:
    open("/plimsoll-probe", "w").close(); wrote = "created /plimsoll-probe"
except OSError as e:
    wrote = "write refused: " + error_name(e)
report("root_read_only", root is not None and "ro" in root["options"] and wrote.startswith("write refused"),
       "/ options %s; %s" % (sorted(root["options"]) if root else "missing", wrote))

# gVisor's mountinfo prints neither nosuid nor nodev, and a tmpfs size in bytes.
TMPFS_FLAGS = ["noexec"] if PROFILE == "gvisor" else ["noexec", "nosuid", "nodev"]

def bounded_tmpfs(point, size):
    m = by_point.get(point)
    if m is None:
        return False, point + " is not a mount point"
    sizes = ["size=%dk" % (size // 1024)] + (["size=%d" % size] if PROFILE == "gvisor" else [])
    ok = (m["fstype"] == "tmpfs" and set(TMPFS_FLAGS + ["rw"]) <= m["options"]
          and any(s in m["super"] for s in sizes))
    return ok, "%s: %s %s %s (want tmpfs, %s, %s)" % (
        point, m["fstype"], ",".join(sorted(m["options"])), ",".join(sorted(m["super"])),
        ",".join(TMPFS_FLAGS), " or ".join(sizes))

report("tmp_is_bounded_tmpfs", *bounded_tmpfs("/tmp", TMP))
report("work_is_bounded_tmpfs", *bounded_tmpfs("/work", WORK))

def char_device(path, numbers=None):
    try:
        st = os.stat(path)
    except OSError:
        return False
    return stat.S_ISCHR(st.st_mode) and (
        numbers is None or (os.major(st.st_rdev), os.minor(st.st_rdev)) == numbers)

def root_only(path):
    try:
        st = os.stat(path)
    except OSError:
        return False
    return st.st_uid == 0 and st.st_mode & 0o022 == 0

# The writable mounts allowed, exactly, per profile; anything else writable,
# or an allowed one lacking its options, fails the check.
#  linux: /tmp and /work (tmpfs; nosuid,nodev,noexec), /proc (proc;
#    nosuid,nodev,noexec) and binds of five character devices (nosuid,noexec;
#    not nodev, which would break them).
#  oci-runc: the same /tmp, /work and /proc; the device binds runc and crun
#    make in the read-only /dev (the five plus /dev/tty) must be those very
#    character devices, and need no options: runc binds them without
#    nosuid,noexec, and neither matters for a device node (exec wants a
#    regular file, set-id bits act only on exec). A masked /proc path is a
#    bind of the host's /dev/null, which runc leaves rw: allowed only when it
#    is the character device 1:3.
#  gvisor: /tmp, /work and /proc need only noexec (gVisor prints no
#    nosuid/nodev); /sys (sysfs), /dev (tmpfs, noexec) and /dev/pts (devpts)
#    are gVisor's own synthetic filesystems, served by its Sentry.
DEVICES = {"/dev/null": (1, 3), "/dev/zero": (1, 5), "/dev/full": (1, 7), "/dev/random": (1, 8),
           "/dev/urandom": (1, 9)}
if PROFILE == "oci-runc":
    DEVICES["/dev/tty"] = (5, 0)
writable = [m for m in mounts if "rw" in m["options"]]
bad = []
for m in writable:
    point, options, fstype = m["point"], m["options"], m["fstype"]
    if point in ("/tmp", "/work") and fstype == "tmpfs":
        needed = set(TMPFS_FLAGS)
    elif point == "/run" and fstype == "tmpfs" and root_only(point):
        # A granted run's relay socket lives here (docs/grants.md): root's,
        # so the guest user cannot write it.
        needed = {"noexec"} if PROFILE == "gvisor" else set(TMPFS_FLAGS)
    elif point == "/proc" and fstype == "proc":
        needed = {"noexec"} if PROFILE == "gvisor" else {"nosuid", "nodev", "noexec"}
    elif PROFILE == "linux" and point in DEVICES and char_device(point):
        needed = {"nosuid", "noexec"}
    elif PROFILE == "oci-runc" and point in DEVICES and char_device(point, DEVICES[point]):
        needed = set()
    elif PROFILE == "oci-runc" and point.startswith("/proc/") and char_device(point, (1, 3)):
        needed = set()
    elif PROFILE == "gvisor" and (point, fstype) in (("/sys", "sysfs"), ("/dev/pts", "devpts")):
        needed = set()
    elif PROFILE == "gvisor" and (point, fstype) == ("/dev", "tmpfs"):
        needed = {"noexec"}
    else:
        bad.append(point)
        continue
    if not needed <= options:
        bad.append("%s(lacks %s)" % (point, ",".join(sorted(needed - options))))
RUN = ", /run (root's tmpfs, not writable by others: a granted run's relay socket)"
ALLOWED = {
    "linux": "/tmp,/work (tmpfs nosuid,nodev,noexec), /proc (nosuid,nodev,noexec), "
             "/dev/{null,zero,full,random,urandom} (character devices, nosuid,noexec)",
    "oci-runc": "/tmp,/work (tmpfs nosuid,nodev,noexec), /proc (nosuid,nodev,noexec), "
                "/dev/{null,zero,full,random,urandom,tty} (those character devices), "
                "/proc/* masked by the character device 1:3",
    "gvisor": "/tmp,/work (tmpfs noexec), /proc (noexec), /dev (gVisor tmpfs, noexec), "
              "/sys (gVisor sysfs), /dev/pts (gVisor devpts)",
    "microvm": "/tmp,/work (tmpfs nosuid,nodev,noexec), /proc (nosuid,nodev,noexec)"}[PROFILE] + RUN
report("only_tmpfs_writable", not bad,
       "allowed writable: %s; writable mounts: %s; unexpected: %s" % (
           ALLOWED, ",".join(sorted(m["point"] for m in writable)), bad or "none"))

if PROFILE in ("linux", "oci-runc"):
    # /proc as runc masks it (providers/linux/mount.h lists the paths for
    # both walls): the masked entries read as nothing (the host's /dev/null
    # over a file, an empty read-only tmpfs over a directory), and the
    # read-only ones are read-only mounts. An entry this kernel lacks counts
    # as masked.
    problems, masked = [], []
    for name in __MASKED_PROC_PATHS__:
        path = "/proc/" + name
        try:
            st = os.lstat(path)
        except OSError as e:
            if e.errno != errno.ENOENT:
                problems.append("%s: %s" % (path, error_name(e)))
            continue
        try:
            if stat.S_ISDIR(st.st_mode):
                shown = len(os.listdir(path))
            else:
                with open(path, "rb") as f:
                    shown = len(f.read(256))
        except OSError:
            shown = 0  # unreadable is masked too
        if shown:
            problems.append("%s shows %d %s" % (path, shown, "entries" if stat.S_ISDIR(st.st_mode) else "bytes"))
        else:
            masked.append(name)
    read_only = []
    for name in __READ_ONLY_PROC_PATHS__:
        path = "/proc/" + name
        if not os.path.lexists(path):
            continue
        m = by_point.get(path)
        if m is None or "ro" not in m["options"]:
            problems.append("%s is not a read-only mount" % path)
        else:
            read_only.append(name)
    report("proc_masked", not problems, "masked: %s; read-only: %s; problems: %s" % (
        ",".join(masked) or "none", ",".join(read_only) or "none", "; ".join(problems) or "none"))

with open("/proc/net/dev") as f:
    interfaces = sorted(line.split(":")[0].strip() for line in f.readlines()[2:])
report("loopback_only", interfaces == ["lo"], "interfaces: " + ",".join(interfaces))

with open("/proc/net/route") as f:
    routes = f.readlines()[1:]
# Our seccomp policy refuses every socket but AF_UNIX on every profile. Where
# another kernel serves the guest (gVisor's netstack with --network=none, a
# VM without any network device), a socket that could be made must still
# have no way out: its connect must fail unreachable.
outcomes = []
for family, address in ((socket.AF_INET, ("192.0.2.1", 9)), (socket.AF_INET6, ("2001:db8::1", 9))):
    try:
        s = socket.socket(family, socket.SOCK_STREAM)
    except OSError as e:
        outcomes.append("%s socket refused: %s" % (address[0], error_name(e)))
        continue
    try:
        s.settimeout(2)
        s.connect(address); outcomes.append("%s connected" % address[0])
    except socket.timeout:
        outcomes.append("%s timed out" % address[0])
    except OSError as e:
        outcomes.append("%s connect refused: %s" % (address[0], error_name(e)))
    finally:
        s.close()
# A Linux guest with only lo refuses IPv6 to a global address with
# EADDRNOTAVAIL (no source address); gVisor says ENETUNREACH.
unreachable = ("EHOSTUNREACH", "ENETUNREACH") + (("EADDRNOTAVAIL",) if PROFILE == "microvm" else ())
def no_way(outcome):
    if " socket refused: " in outcome:
        return outcome.endswith("EPERM")
    return PROFILE in ("gvisor", "microvm") and " connect refused: " in outcome and outcome.endswith(unreachable)
report("no_route_out", not routes and all(no_way(o) for o in outcomes),
       "%d IPv4 routes; %s" % (len(routes), ", ".join(outcomes)))

def fork_until_refused(most):
    children, failure = [], "none"
    try:
        while len(children) < most:
            pid = os.fork()
            if pid == 0:
                import time; time.sleep(30); os._exit(0)
            children.append(pid)
    except OSError as e:
        failure = error_name(e)
    for pid in children:
        os.kill(pid, 9)
    for pid in children:
        os.waitpid(pid, 0)
    return failure, len(children)

if PROFILE in ("gvisor", "microvm"):
    # microvm: no cgroup in the guest; the agent's RLIMIT_NPROC is the limit.
    # The cgroup's pids limit is raised for gVisor's own threads, so the
    # guest's limit is RLIMIT_NPROC (the agent sets it to pids for steps).
    # Forking up to it would exhaust the host cgroup first (under the ptrace
    # platform each guest process costs the sandbox 5-8 host tasks and a few
    # MiB), so the check reads the limit and proves gVisor enforces it with
    # the soft limit lowered to a few processes. (gVisor refuses the fork
    # that would exceed the limit one process later than Linux does: 16
    # children at a limit of 16 under the agent, so at most `probe`.)
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
    probe = min(16, PIDS)
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (probe, hard))
        failure, count = fork_until_refused(probe + 8)
        resource.setrlimit(resource.RLIMIT_NPROC, (soft, hard))
    except (OSError, ValueError) as e:
        failure, count = "setrlimit failed: %s" % e, 0
    show = lambda v: "unlimited" if v == resource.RLIM_INFINITY else str(v)
    report("pids_limit", hard != resource.RLIM_INFINITY and 0 < hard <= PIDS and soft <= hard
           and failure == "EAGAIN" and count <= probe,
           "RLIMIT_NPROC soft %s hard %s (pids %d); with the soft limit lowered to %d, "
           "fork failed with %s after %d children" % (show(soft), show(hard), PIDS, probe, failure, count))
else:
    failure, count = fork_until_refused(PIDS + 8)
    report("pids_limit", failure == "EAGAIN" and count < PIDS,
           "fork failed with %s after %d children (pids.max %d)" % (failure, count, PIDS))

status = {}
with open("/proc/self/status") as f:
    for line in f:
        key, _, value = line.partition(":")
        status[key] = value.strip()
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
except ImportError:
    libc = None

if PROFILE == "microvm":
    # The VM's own kernel serves the guest: another release than the
    # host's. The CPU's hypervisor flag is only reported: TCG shows it too.
    release = os.uname().release
    try:
        with open("/proc/cpuinfo") as f:
            flags = next((line.split(":", 1)[1].split() for line in f if line.startswith("flags")), [])
    except OSError:
        flags = []
    report("guest_kernel_is_own", bool(HOST_RELEASE) and release != HOST_RELEASE,
           "guest release %s, host release %s; hypervisor flag: %s" % (
               release, HOST_RELEASE or "not given", "present" if "hypervisor" in flags else "absent"))
elif PROFILE == "gvisor":
    # What the guest can see of gVisor is that its kernel is not the
    # host's: another release, and gVisor's own boot log.
    release, log, source = os.uname().release, "", "nothing"
    if libc is not None:
        buffer = ctypes.create_string_buffer(1 << 16)
        size = libc.klogctl(3, buffer, len(buffer))  # SYSLOG_ACTION_READ_ALL
        if size > 0:
            log, source = buffer.raw[:size].decode(errors="replace"), "syslog(2)"
        else:
            source = "syslog(2) refused (errno %d)" % ctypes.get_errno()
    if not log:
        try:
            fd = os.open("/dev/kmsg", os.O_RDONLY | os.O_NONBLOCK)
            try:
                while True:
                    log += os.read(fd, 8192).decode(errors="replace") + "\n"
            except OSError:
                pass
            finally:
                os.close(fd)
            source = "/dev/kmsg"
        except OSError as e:
            source += ", /dev/kmsg " + error_name(e)
    seen = next((line.strip() for line in log.splitlines() if "Starting gVisor" in line), None)
    # Our policy denies syslog(2), so the log is usually out of reach; then
    # /proc/version must be the fixed banner gVisor's kernel serves (a Linux
    # kernel prints its build's compiler and date there).
    try:
        with open("/proc/version") as f:
            version = f.read().strip()
    except OSError as e:
        version = "unreadable: " + error_name(e)
    banner = version.endswith("#1 SMP Sun Jan 10 15:06:54 PST 2016")
    report("guest_kernel_is_gvisor",
           bool(HOST_RELEASE) and release != HOST_RELEASE and (seen is not None or banner),
           "guest release %s, host release %s; kernel log read with %s: %s; /proc/version: %s" % (
               release, HOST_RELEASE or "not given", source,
               seen or "no 'Starting gVisor' line (first line: %r)" % (log.splitlines() or [""])[0][:120],
               version[:160]))
    # Interfaces only a real Linux kernel serves. On this host all four exist,
    # and the first three show through runc's and crun's /proc (the host
    # kernel's); gVisor's procfs and sysfs implement none of them (measured
    # with runsc 2022-12-19): the kernel symbol table, the physical memory
    # map, the host's sysctl tree and debugfs.
    present = []
    for path in ("/proc/kallsyms", "/proc/iomem", "/proc/sys/kernel/osrelease", "/sys/kernel/debug"):
        try:
            os.lstat(path); present.append(path)
        except OSError as e:
            if e.errno != errno.ENOENT:
                present.append("%s(%s)" % (path, error_name(e)))
    report("host_kernel_interfaces_absent", not present,
           "/proc/kallsyms, /proc/iomem, /proc/sys/kernel/osrelease, /sys/kernel/debug: %s" % (
               "present: " + ", ".join(present) if present else "all absent (ENOENT)"))

# Our seccomp policy, on every profile: the linux sandbox's init, runc and
# crun install it on the host kernel, gVisor applies it inside its kernel
# (runsc --oci-seccomp, and the agent's own filter in each step, which keeps
# the policy's errnos), the microvm agent inside the VM. "Seccomp: 2" alone
# proves nothing (an allow-all filter shows it), so each probe is a call the
# policy answers in its own way, made in a child so that a call that works
# changes nothing here: a system call number no kernel has (EPERM from a
# deny-by-default filter, ENOSYS from any kernel without one), clone3 (our
# ENOSYS; a kernel says EINVAL to these arguments), and calls an
# unprivileged process may make on Linux and gVisor alike (ptrace of itself,
# a user namespace, an AF_INET socket, memfd_create, inotify_init1), then
# the classic denials. Each must give exactly the policy's errno. Every probe
# is harmless where it succeeds (self_check_test runs this as root on the
# bare host): its effects end with the child, or its arguments change nothing.
def probe_in_child(call):
    pid = os.fork()
    if pid == 0:
        try:
            rc = call(); e = ctypes.get_errno()
            os._exit(0 if rc != -1 else min(e, 254) or 254)
        except BaseException:
            os._exit(255)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status)

SECCOMP_PROBES = (
    # 400: in x86-64's unassigned range 335-423. (Not a number above every
    # known call: runc answers those ENOSYS itself, so glibc can fall back.)
    ("syscall 400", errno.EPERM, lambda: libc.syscall(400, 0, 0, 0)),
    ("clone3", errno.ENOSYS, lambda: libc.syscall(435, None, 0)),
    ("ptrace(PTRACE_TRACEME)", errno.EPERM, lambda: libc.ptrace(0, 0, None, None)),
    ("unshare(CLONE_NEWUSER)", errno.EPERM, lambda: libc.unshare(0x10000000)),
    ("socket(AF_INET)", errno.EPERM, lambda: libc.socket(2, 1, 0)),
    ("memfd_create", errno.EPERM, lambda: libc.syscall(319, b"probe", 0)),
    ("inotify_init1", errno.EPERM, lambda: libc.syscall(294, 0)),
    # A mount point that does not exist: where nothing refuses the call
    # (the bare host, as root) the kernel says ENOENT and mounts nothing.
    ("mount", errno.EPERM, lambda: libc.mount(b"none", b"/plimsoll-no-such-mount-point", b"tmpfs", 0, None)),
    ("keyctl", errno.EPERM, lambda: libc.syscall(250, 0, -3, 0, 0, 0)),
    ("bpf", errno.EPERM, lambda: libc.syscall(321, 0, 0, 0)))
answers, exact = [], libc is not None
if libc is None:
    answers.append("ctypes unavailable: no call could be probed")
else:
    libc.syscall.restype = ctypes.c_long
    for label, want, call in SECCOMP_PROBES:
        got = probe_in_child(call)
        name = "ok" if got == 0 else "died" if got < 0 or got == 255 else errno.errorcode.get(got, str(got))
        exact = exact and got == want
        answers.append("%s=%s" % (label, name))
# gVisor's status may show no Seccomp line: the probes are the proof there.
mode_ok = PROFILE == "gvisor" or status.get("Seccomp") == "2"
report("seccomp_filter", mode_ok and exact,
       "Seccomp: %s, filters %s; %s" % (status.get("Seccomp"), status.get("Seccomp_filters"), ", ".join(answers)))

no_new_privs = status.get("NoNewPrivs")
if PROFILE == "gvisor" and no_new_privs is None and libc is not None:
    # gVisor's status has no NoNewPrivs line; ask prctl(PR_GET_NO_NEW_PRIVS).
    no_new_privs = str(libc.prctl(39, 0, 0, 0, 0))
    report("no_new_privileges", no_new_privs == "1", "prctl(PR_GET_NO_NEW_PRIVS): %s" % no_new_privs)
else:
    report("no_new_privileges", no_new_privs == "1", "NoNewPrivs: %s" % no_new_privs)

caps = {k: status.get(k) for k in ("CapInh", "CapPrm", "CapEff", "CapAmb")}
required, note = list(caps), ""
if PROFILE == "gvisor" and caps["CapAmb"] is None:
    # gVisor's status has no CapAmb line; the ambient set is always a subset
    # of permitted and inheritable (capabilities(7)), so those being 0 is enough.
    required, note = ["CapInh", "CapPrm", "CapEff"], " (CapAmb not shown; ambient is within CapPrm and CapInh)"
report("unprivileged_no_capabilities",
       os.getuid() != 0 and os.geteuid() != 0 and all(caps[k] is not None and int(caps[k], 16) == 0 for k in required),
       "uid %d euid %d gid %d; %s%s" % (os.getuid(), os.geteuid(), os.getgid(),
                                        ", ".join("%s %s" % kv for kv in caps.items()), note))
