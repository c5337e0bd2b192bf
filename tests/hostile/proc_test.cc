// /proc and /sys as ways out: host files through /proc/<pid>/root, host
// processes, kernel settings, the agent's memory and descriptors, and the
// runc CVE-2019-5736 pattern of overwriting an executable through
// /proc/<pid>/exe.
#include <regex>

#include "hostile/hostile.h"

namespace plimsoll::hostile {
namespace {

constexpr const char* kProcWrite = "EACCES|EROFS|EPERM|ENOENT";

// The "/tmp size: N" and "/work size: N" lines match the configured sizes.
void TmpfsSizesAsConfigured(const Result& result, const Description& description) {
  std::smatch match;
  if (std::regex_search(result.stdout_bytes, match, std::regex("/tmp size: (\\d+)"))) {
    EXPECT_EQ(std::stoll(match[1]), description.limits.tmp_bytes);
  }
  if (std::regex_search(result.stdout_bytes, match, std::regex("/work size: (\\d+)"))) {
    EXPECT_EQ(std::stoll(match[1]), description.limits.work_bytes);
  }
}

const Program kProcPrograms[] = {
    {
        .name = "ProcIsMaskedAsRuncMasksIt",
        .verdict = "the /proc entries runc masks show nothing (kcore, keys, timer_list, "
                   "sched_debug, latency_stats, timer_stats read as empty or cannot be read, "
                   "or the kernel lacks them), and /proc/sys and /proc/sysrq-trigger (where "
                   "the kernel has it) are read-only mounts",
        .script = R"py(import os
from hostile import *
for name in ("kcore", "keys", "timer_list", "sched_debug", "latency_stats", "timer_stats"):
    path = "/proc/" + name
    try:
        shown = len(read(path, 4096))
        print(f"{path}:", "empty" if shown == 0 else f"{shown} bytes")
    except OSError as e:
        print(f"{path}:", "absent" if e.errno == errno.ENOENT else "unreadable")
read_only = {}
with open("/proc/self/mountinfo") as f:
    for line in f:
        fields = line.split()
        read_only[fields[4]] = "ro" in fields[5].split(",")
for path in ("/proc/sys", "/proc/sysrq-trigger"):
    shown = "absent" if not os.path.lexists(path) else "yes" if read_only.get(path) else "no"
    print(f"{path} read-only mount:", shown)
)py",
        .stdout_lines = {"/proc/kcore: (empty|unreadable|absent)",
                         "/proc/keys: (empty|unreadable|absent)",
                         "/proc/timer_list: (empty|unreadable|absent)",
                         "/proc/sched_debug: (empty|unreadable|absent)",
                         "/proc/latency_stats: (empty|unreadable|absent)",
                         "/proc/timer_stats: (empty|unreadable|absent)",
                         "/proc/sys read-only mount: yes",
                         "/proc/sysrq-trigger read-only mount: (yes|absent)"},
        .under_gvisor =
            GvisorVerdict{
                .difference =
                    "gVisor's procfs implements none of the entries runc masks (ENOENT), and its "
                    "/proc/sys is gVisor's own small sysctl tree, none of the host's settings "
                    "(host_kernel_interfaces_absent), read-only mount or not",
                .stdout_lines = {"/proc/kcore: absent", "/proc/keys: absent",
                                 "/proc/timer_list: absent", "/proc/sched_debug: absent",
                                 "/proc/latency_stats: absent", "/proc/timer_stats: absent",
                                 "/proc/sys read-only mount: (yes|no)",
                                 "/proc/sysrq-trigger read-only mount: (yes|no|absent)"},
            },
        .under_microvm =
            MicrovmVerdict{
                .difference =
                    "the VM's /proc is its own kernel's, not the host's: its timers, scheduler "
                    "and keys are the VM's (nothing of the host's shows), kcore (the VM's "
                    "memory) stays root-only, and /proc/sys is not remounted read-only there "
                    "(the step, uid 1000 without capabilities, cannot write the VM's sysctls "
                    "either: KernelSettingsAreNotWritable)",
                .stdout_lines = {"/proc/kcore: (empty|unreadable|absent)",
                                 "/proc/keys: (empty|unreadable|absent|\\d+ bytes)",
                                 "/proc/timer_list: (empty|unreadable|absent|\\d+ bytes)",
                                 "/proc/sched_debug: (empty|unreadable|absent|\\d+ bytes)",
                                 "/proc/latency_stats: (empty|unreadable|absent|\\d+ bytes)",
                                 "/proc/timer_stats: (empty|unreadable|absent|\\d+ bytes)",
                                 "/proc/sys read-only mount: (yes|no)",
                                 "/proc/sysrq-trigger read-only mount: (yes|no|absent)"},
            },
    },
    {
        .name = "HostFilesAreUnreachableThroughProc",
        .verdict = "the host's file {SECRET_PATH} (world-readable and world-writable on the host) "
                   "cannot be read or written from inside: not directly, not through "
                   "/proc/<any pid>/root or /cwd, not through the roots named in "
                   "/proc/self/mountinfo; the host file stays unchanged",
        .script = R"py(import os
from hostile import *
secret = "{SECRET_PATH}"
candidates = [secret, "/proc/self/root" + secret]
for pid in ["self", "thread-self"] + [str(p) for p in other_pids()]:
    for link in ("root", "cwd"):
        candidates.append(f"/proc/{pid}/{link}{secret}")
        candidates.append(f"/proc/{pid}/{link}/../../../..{secret}")
for line in open("/proc/self/mountinfo"):
    fields = line.split()
    root, point = fields[3], fields[4]
    for base in (root, point):
        candidates.append(os.path.normpath(base + "/" + secret))
        candidates.append(os.path.normpath(base + "/../../../../" + secret))
readable, writable = [], []
for path in sorted(set(candidates)):
    try:
        if b"{SECRET}" in read(path):
            readable.append(path)
    except OSError:
        pass
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_APPEND))
        writable.append(path)
    except OSError:
        pass
print("host secret readable through:", " ".join(readable) or "none")
print("host secret writable through:", " ".join(writable) or "none")
)py",
        .stdout_lines = {"host secret readable through: none",
                         "host secret writable through: none"},
    },
    {
        .name = "HostProcessesAreInvisible",
        .verdict = "a host process (pid {HOST_PID}, named {HOST_MARKER}) is invisible: no "
                   "/proc entry carries its name, /proc/{HOST_PID} is absent or another process, "
                   "and the program sees only a handful of processes (its own sandbox's)",
        .script = R"py(import os
from hostile import *
marker = b"{HOST_MARKER}"
seen = []
for pid in other_pids():
    for name in ("comm", "cmdline", "status", "environ"):
        try:
            if marker in read(f"/proc/{pid}/{name}"):
                seen.append(f"{pid}/{name}")
        except OSError:
            pass
print("host marker seen in:", " ".join(seen) or "nothing")
try:
    host = read("/proc/{HOST_PID}/comm")
    print("/proc/{HOST_PID}:", "the host process" if marker in host else "another process")
except OSError as e:
    print("/proc/{HOST_PID}:", errname(e.errno))
print("visible processes:", len(other_pids()) + 1, flush=True)
)py",
        .stdout_lines = {"host marker seen in: nothing", "/proc/\\d+: (ENOENT|another process)",
                         "visible processes: \\d+"},
        .check =
            [](const Result& result, const Description&) {
              std::smatch match;
              ASSERT_TRUE(std::regex_search(result.stdout_bytes, match,
                                            std::regex("visible processes: (\\d+)")));
              EXPECT_LE(std::stoi(match[1]), 8) << "the sandbox sees more than its own processes";
            },
    },
    {
        .name = "KernelSettingsAreNotWritable",
        .verdict = "writes to core_pattern, modprobe, sysrq-trigger, drop_caches, "
                   "uevent_helper and any cgroup release_agent (the CVE-2022-0492 escape) fail, "
                   "no cgroup can be created, and /proc/kcore cannot be read; every write "
                   "carries the setting's current value, so even a failure of the wall would "
                   "change nothing",
        .script = R"py(import glob, os
from hostile import *
def write_back(path, value=None):
    if value is None:
        value = read(path)
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value)
    finally:
        os.close(fd)
def current(path):
    try:
        return read(path)
    except OSError:
        return b"x\n"
for path in ("/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe",
             "/sys/kernel/uevent_helper"):
    attempt(f"write {path}", lambda: write_back(path, current(path)))
attempt("write /proc/sysrq-trigger", lambda: write_back("/proc/sysrq-trigger", b"h"))
attempt("write /proc/sys/vm/drop_caches", lambda: write_back("/proc/sys/vm/drop_caches", b"1"))
agents, created = [], []
for path in glob.glob("/sys/fs/cgroup/**/release_agent", recursive=True):
    try:
        write_back(path, current(path))
        agents.append(path)
    except OSError:
        pass
for directory in glob.glob("/sys/fs/cgroup/*/") + ["/sys/fs/cgroup/"]:
    try:
        os.mkdir(directory + "plimsoll-hostile")
        created.append(directory)
        os.rmdir(directory + "plimsoll-hostile")
    except OSError:
        pass
print("writable release_agent files:", " ".join(agents) or "none")
print("cgroups created under:", " ".join(created) or "none")
attempt("read /proc/kcore", lambda: read("/proc/kcore", 4096))
)py",
        .stdout_lines = {Denied("write /proc/sys/kernel/core_pattern", kProcWrite),
                         Denied("write /proc/sys/kernel/modprobe", kProcWrite),
                         Denied("write /sys/kernel/uevent_helper", kProcWrite),
                         Denied("write /proc/sysrq-trigger", kProcWrite),
                         Denied("write /proc/sys/vm/drop_caches", kProcWrite),
                         "writable release_agent files: none", "cgroups created under: none",
                         Denied("read /proc/kcore", kProcWrite)},
    },
    {
        .name = "TheAgentIsOutOfReach",
        .verdict = "for every other process in the sandbox (the agent among them, holding the "
                   "run's report key): its memory, environment, descriptors, memory map, root "
                   "and executable cannot be opened; the program cannot forge the report",
        .script = R"py(import os
from hostile import *
reached = []
def probe(kind, function):
    for pid in other_pids():
        try:
            function(pid)
            reached.append(f"{pid}:{kind}")
        except OSError:
            pass
probe("mem", lambda pid: os.close(os.open(f"/proc/{pid}/mem", os.O_RDONLY)))
probe("environ", lambda pid: read(f"/proc/{pid}/environ"))
probe("fd", lambda pid: os.listdir(f"/proc/{pid}/fd"))
probe("fdinfo", lambda pid: [read(f"/proc/{pid}/fdinfo/{n}") for n in os.listdir(f"/proc/{pid}/fdinfo")])
probe("maps", lambda pid: read(f"/proc/{pid}/maps"))
probe("root", lambda pid: os.listdir(f"/proc/{pid}/root/"))
probe("exe", lambda pid: os.readlink(f"/proc/{pid}/exe"))
probe("process_vm_readv", lambda pid: syscall(310, pid, ctypes.create_string_buffer(16), 1,
                                              ctypes.create_string_buffer(16), 1, 0))
print("visible:", len(other_pids()), "other process(es)")
print("reached:", " ".join(reached) or "nothing")
)py",
        .stdout_lines = {"visible: \\d+ other process\\(es\\)", "reached: nothing"},
        .under_gvisor =
            GvisorVerdict{
                .difference =
                    "gVisor 2022-12-19 does not hide a non-dumpable process's environ, fd, fdinfo "
                    "and maps from a process of another uid (its later releases make environ "
                    "0400): a step can list the agent's descriptors, read its memory map (its "
                    "address layout) and its environment (PATH, LANG, HOME only). What guards "
                    "the report still holds: its memory, root and executable cannot be opened, "
                    "process_vm_readv fails, so the report key stays out of reach",
                .stdout_lines = {"visible: \\d+ other process\\(es\\)",
                                 "reached: (nothing|(\\d+:(environ|fd|fdinfo|maps) ?)+)"},
            },
    },
    {
        .name = "ExecutablesCannotBeOverwrittenThroughProc",
        .verdict = "the runc CVE-2019-5736 pattern fails: /proc/self/exe and /proc/<pid>/exe of "
                   "every process (the agent's included) cannot be opened for writing, directly "
                   "or by reopening an O_PATH descriptor; neither can the agent's binary; a "
                   "watcher left running while the next step starts finds nothing writable; "
                   "the agent runs the steps after it",
        .steps = {{"python3", "probe.py", "{TOKEN}"},
                  {"python3", "-c", "import time; time.sleep(1)", "{TOKEN}"},
                  {"python3", "report.py", "{TOKEN}"}},
        .files = {{"probe.py", R"py(import os, time
from hostile import *
def reopen_for_write(path):
    fd = os.open(path, os.O_PATH)
    try:
        os.close(os.open(f"/proc/self/fd/{fd}", os.O_WRONLY))
    finally:
        os.close(fd)
attempt("open /proc/self/exe for writing", lambda: os.close(os.open("/proc/self/exe", os.O_WRONLY)))
attempt("reopen /proc/self/exe for writing", lambda: reopen_for_write("/proc/self/exe"))
attempt("open the agent binary for writing", lambda: os.close(os.open("/usr/local/bin/plimsoll-guest", os.O_WRONLY)))
writable = []
for pid in other_pids():
    for opener in (lambda p: os.close(os.open(p, os.O_WRONLY)), reopen_for_write):
        try:
            opener(f"/proc/{pid}/exe")
            writable.append(str(pid))
        except OSError:
            pass
print("other processes' exe writable:", " ".join(writable) or "none", flush=True)
with open("/tmp/exe-race.log", "w") as log:
    log.write("watching\n")
if os.fork() == 0:
    os.setsid()
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    deadline = time.time() + 3
    me = os.getpid()
    while time.time() < deadline:
        for pid in other_pids():
            try:
                os.close(os.open(f"/proc/{pid}/exe", os.O_WRONLY))
                with open("/tmp/exe-race.log", "a") as log:
                    log.write(f"wrote {pid}\n")
            except OSError:
                pass
    os._exit(0)
)py"},
                  {"report.py", R"py(
log = open("/tmp/exe-race.log").read()
print("watcher found writable:", "yes" if "wrote" in log else "nothing")
)py"}},
        .step_count = 3,
        .stdout_lines = {Denied("open /proc/self/exe for writing", "ETXTBSY|EACCES|EROFS"),
                         Denied("reopen /proc/self/exe for writing", "ETXTBSY|EACCES|EROFS"),
                         Denied("open the agent binary for writing", "ETXTBSY|EACCES|EROFS"),
                         "other processes' exe writable: none", "watcher found writable: nothing"},
    },
    {
        .name = "MountinfoShowsTheWall",
        .verdict = "seen from /proc/self/mountinfo: / is read-only; the only writable "
                   "filesystems for data are /tmp and /work (plus /dev and /dev/shm if present, "
                   "and binds of harmless device nodes such as /dev/null, including the null "
                   "device runc binds over masked /proc files), "
                   "each nosuid and noexec (and nodev, except /dev itself) at their configured "
                   "sizes; the one other is /run where a VM's init (or a granted run) has it, "
                   "root's with mode 0755 so the guest cannot write it, nosuid, noexec, nodev",
        .script = R"py(import os, stat
from hostile import *
writable, missing, sizes, root_ro, devices, root_only = [], [], {}, False, [], []
harmless_devices = {f"/dev/{name}" for name in ("null", "zero", "full", "random", "urandom", "tty")}
for line in open("/proc/self/mountinfo"):
    fields = line.split()
    separator = fields.index("-")
    point, options = fields[4], set(fields[5].split(","))
    kind, super_options = fields[separator + 1], fields[separator + 3].split(",")
    if point == "/":
        root_ro = "ro" in options
    if "rw" not in options or kind in ("proc", "sysfs", "devpts", "mqueue", "cgroup", "cgroup2"):
        continue
    if point in harmless_devices:
        devices.append(point)  # a bind of one harmless device node: nothing to execute
        continue
    if point.startswith("/proc/"):
        # runc masks /proc files (keys, timer_list, ...) with a writable bind
        # of /dev/null: writes vanish, reads are empty.
        st = os.stat(point)
        if stat.S_ISCHR(st.st_mode) and (os.major(st.st_rdev), os.minor(st.st_rdev)) == (1, 3):
            devices.append(point)
            continue
    st = os.stat(point)
    if point == "/run" and st.st_uid == 0 and st.st_mode & 0o022 == 0 and os.getuid() != 0:
        root_only.append(point)  # the relay's socket directory: only the agent writes it
    else:
        writable.append(point)
    needed = {"nosuid", "noexec"} | (set() if point == "/dev" else {"nodev"})
    if not needed <= options:
        missing.append(f"{point}({','.join(sorted(needed - options))})")
    for option in super_options:
        if option.startswith("size="):
            value = option[5:]
            scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(value[-1:].lower(), 1)
            sizes[point] = int(value.rstrip("kKmMgG")) * scale
print("/ is read-only:", "yes" if root_ro else "no")
print("writable mounts:", " ".join(sorted(writable)))
print("writable mounts lacking options:", " ".join(missing) or "none")
print("/tmp size:", sizes.get("/tmp", "unknown"))
print("/work size:", sizes.get("/work", "unknown"))
print("mounts only root may write:", " ".join(root_only) or "none", sizes.get("/run", ""))
)py",
        .stdout_lines = {"/ is read-only: yes", "writable mounts: (/dev )?(/dev/shm )?/tmp /work",
                         "writable mounts lacking options: none", "/tmp size: \\d+",
                         "/work size: \\d+", "mounts only root may write: (none |/run 65536)"},
        .check = TmpfsSizesAsConfigured,
        .under_gvisor =
            GvisorVerdict{
                .difference =
                    "gVisor (this version) neither shows nor applies nosuid and nodev on its "
                    "tmpfs mounts (/dev is gVisor's own tmpfs, writable by root only); noexec is "
                    "there. Set-id bits gain nothing anyway (no_new_privs is set and the program "
                    "cannot give a file to another owner: SetuidGainsNothing) and a device node "
                    "reaches only devices gVisor emulates (DevicesAreOutOfReach)",
                .stdout_lines = {"/ is read-only: yes", "writable mounts: /dev /tmp /work",
                                 "writable mounts lacking options: /dev\\(nosuid\\) "
                                 "/tmp\\(nodev,nosuid\\) /work\\(nodev,nosuid\\)",
                                 "/tmp size: \\d+", "/work size: \\d+",
                                 "mounts only root may write: none "},
                .check = TmpfsSizesAsConfigured,
            },
    },
};

PLIMSOLL_HOSTILE_PROGRAMS(Proc, kProcPrograms);

}  // namespace
}  // namespace plimsoll::hostile
