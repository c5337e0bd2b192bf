// The filesystem wall (SPEC §6): a read-only root; /tmp (16 MiB) and /work
// (128 MiB) tmpfs with noexec,nosuid,nodev; a minimal /dev; artifacts that
// never follow a symlink out of /work.
#include <algorithm>
#include <regex>

#include "hostile/hostile.h"

namespace plimsoll::hostile {
namespace {

constexpr const char* kReadOnly = "EROFS|EACCES|EPERM|ETXTBSY";

// Fills a directory until the filesystem refuses, in files of 8 MiB (under
// RLIMIT_FSIZE), and prints "<dir>: <ERRNO> after <MiB> MiB".
constexpr const char* kFillScript = R"py(import os, sys
from hostile import *
directory = sys.argv[2]
chunk = b"\xa5" * (1 << 20)
written, index, error = 0, 0, "no error"
try:
    while written < (1 << 31):
        fd = os.open(f"{directory}/fill-{index}", os.O_WRONLY | os.O_CREAT, 0o600)
        index += 1
        try:
            for _ in range(8):
                view = memoryview(chunk)
                while view:
                    count = os.write(fd, view)
                    written += count
                    view = view[count:]
        finally:
            os.close(fd)
except OSError as e:
    error = errname(e.errno)
print(f"{directory}: {error} after {written >> 20} MiB", flush=True)
)py";

// Checks the "<dir>: ENOSPC after N MiB" line against the configured size.
std::function<void(const Result&, const Description&)> FilledUpTo(std::string directory,
                                                                  int64_t Limits::*size) {
  return [directory, size](const Result& result, const Description& description) {
    std::smatch match;
    std::string out = result.steps.empty() ? "" : result.steps.front().stdout_bytes;
    ASSERT_TRUE(std::regex_search(out, match, std::regex(directory + ": ENOSPC after (\\d+) MiB")))
        << out;
    int64_t mib = std::stoll(match[1]);
    int64_t limit_mib = (description.limits.*size) >> 20;
    EXPECT_LE(mib, limit_mib) << directory << " took more than its configured size";
    EXPECT_GE(mib, limit_mib - 8) << directory << " is much smaller than configured";
  };
}

const Program kFilesystemPrograms[] = {
    {
        .name = "FillingWorkStopsAtItsSize",
        .verdict = "writing to /work until it fails stops with ENOSPC at its configured size "
                   "(128 MiB by default), and the next step still runs",
        .steps = {{"python3", "probe.py", "{TOKEN}", "/work"},
                  {"python3", "-c", "print('next step ran')", "{TOKEN}"}},
        .files = {{"probe.py", kFillScript}},
        .timeout_ms = 20'000,
        .step_count = 2,
        .stdout_lines = {"/work: ENOSPC after \\d+ MiB", "next step ran"},
        .check = FilledUpTo("/work", &Limits::work_bytes),
    },
    {
        .name = "FillingTmpStopsAtItsSize",
        .verdict = "writing to /tmp until it fails stops with ENOSPC at its configured size "
                   "(16 MiB by default), and the next step still runs",
        .steps = {{"python3", "probe.py", "{TOKEN}", "/tmp"},
                  {"python3", "-c", "print('next step ran')", "{TOKEN}"}},
        .files = {{"probe.py", kFillScript}},
        .step_count = 2,
        .stdout_lines = {"/tmp: ENOSPC after \\d+ MiB", "next step ran"},
        .check = FilledUpTo("/tmp", &Limits::tmp_bytes),
    },
    {
        .name = "TheRootFilesystemIsReadOnly",
        .verdict = "every write to the root filesystem fails (EROFS, or EACCES/EPERM/ETXTBSY "
                   "where a permission check comes first): appending to /etc/passwd, creating "
                   "files, replacing the agent or qjs, renaming, chmod, symlinks, unlink, truncate",
        .script = R"py(import os
from hostile import *
attempt("append /etc/passwd", lambda: open("/etc/passwd", "a"))
attempt("create /usr/bin/planted", lambda: open("/usr/bin/planted", "w"))
attempt("create /planted", lambda: open("/planted", "w"))
attempt("create /var/tmp/planted", lambda: open("/var/tmp/planted", "w"))
attempt("write /usr/local/bin/plimsoll-guest", lambda: os.open("/usr/local/bin/plimsoll-guest", os.O_WRONLY))
attempt("write /usr/local/bin/qjs", lambda: os.open("/usr/local/bin/qjs", os.O_WRONLY))
attempt("write /usr/bin/python3.11", lambda: os.open("/usr/bin/python3.11", os.O_WRONLY))
attempt("mkdir /opt/planted", lambda: os.mkdir("/opt/planted"))
attempt("rename /etc/hosts", lambda: os.rename("/etc/hosts", "/etc/hosts.old"))
attempt("chmod /etc/shadow", lambda: os.chmod("/etc/shadow", 0o666))
attempt("symlink /etc/planted", lambda: os.symlink("/work", "/etc/planted"))
attempt("unlink /bin/sh", lambda: os.unlink("/bin/sh"))
attempt("truncate /usr/lib/x86_64-linux-gnu/libc.so.6", lambda: os.truncate("/usr/lib/x86_64-linux-gnu/libc.so.6", 0))
attempt("utime /etc/hostname", lambda: os.utime("/etc/hostname", (0, 0)))
)py",
        .stdout_lines =
            {Denied("append /etc/passwd", kReadOnly), Denied("create /usr/bin/planted", kReadOnly),
             Denied("create /planted", kReadOnly), Denied("create /var/tmp/planted", kReadOnly),
             Denied("write /usr/local/bin/plimsoll-guest", kReadOnly),
             Denied("write /usr/local/bin/qjs", kReadOnly),
             Denied("write /usr/bin/python3.11", kReadOnly),
             Denied("mkdir /opt/planted", kReadOnly), Denied("rename /etc/hosts", kReadOnly),
             Denied("chmod /etc/shadow", kReadOnly), Denied("symlink /etc/planted", kReadOnly),
             Denied("unlink /bin/sh", kReadOnly),
             Denied("truncate /usr/lib/x86_64-linux-gnu/libc.so.6", kReadOnly),
             Denied("utime /etc/hostname", kReadOnly)},
    },
    {
        .name = "FilesWrittenToTmpfsCannotBeExecuted",
        .verdict = "a copy of /bin/true (and a #! script) written to /work or /tmp and made "
                   "executable cannot be executed (EACCES), nor run through the dynamic loader, "
                   "nor mapped executable (EPERM)",
        .script = R"py(import mmap, os, shutil, subprocess
from hostile import *
for directory in ("/work", "/tmp"):
    binary = f"{directory}/true"
    shutil.copyfile("/bin/true", binary)
    os.chmod(binary, 0o755)
    script = f"{directory}/script.sh"
    with open(script, "w") as f:
        f.write("#!/bin/sh\necho escaped\n")
    os.chmod(script, 0o755)
    attempt(f"execute {binary}", lambda: subprocess.run([binary]))
    attempt(f"execute {script}", lambda: subprocess.run([script]))
    loader = subprocess.run(["/lib64/ld-linux-x86-64.so.2", binary], capture_output=True)
    print(f"ld.so {binary}:", "refused" if loader.returncode != 0 else "ran")
    with open(binary, "rb") as f:
        attempt(f"mmap {binary} PROT_EXEC", lambda: mmap.mmap(f.fileno(), 4096, prot=mmap.PROT_READ | mmap.PROT_EXEC))
)py",
        .stdout_lines = {Denied("execute /work/true", "EACCES"),
                         Denied("execute /work/script.sh", "EACCES"), "ld\\.so /work/true: refused",
                         Denied("mmap /work/true PROT_EXEC", "EPERM|EACCES"),
                         Denied("execute /tmp/true", "EACCES"),
                         Denied("execute /tmp/script.sh", "EACCES"), "ld\\.so /tmp/true: refused",
                         Denied("mmap /tmp/true PROT_EXEC", "EPERM|EACCES")},
        .under_gvisor =
            GvisorVerdict{
                .difference =
                    "gVisor (this version) applies noexec in execve only, not in mmap: the "
                    "dynamic loader maps and runs the copy of /bin/true. That code still runs on "
                    "gVisor's kernel, with nothing the anonymous executable memory every provider "
                    "allows (mprotect: node's JIT needs it) does not already give",
                .stdout_lines = {Denied("execute /work/true", "EACCES"),
                                 Denied("execute /work/script.sh", "EACCES"),
                                 "ld\\.so /work/true: ran", "mmap /work/true PROT_EXEC: ok",
                                 Denied("execute /tmp/true", "EACCES"),
                                 Denied("execute /tmp/script.sh", "EACCES"),
                                 "ld\\.so /tmp/true: ran", "mmap /tmp/true PROT_EXEC: ok"},
            },
    },
    {
        .name = "FilelessExecutionIsRefused",
        .verdict = "an ELF with no file on a noexec mount cannot be run: memfd_create fails with "
                   "EPERM (so no memfd can be executed through /proc/self/fd/N), a file in /tmp "
                   "executed through /proc/self/fd/N fails with EACCES (noexec), "
                   "and execveat(fd, \"\", AT_EMPTY_PATH) fails with EPERM even for /bin/true; "
                   "execveat by path still runs /bin/true",
        .script = R"py(import os, subprocess
from hostile import *
elf = read("/bin/true")
def run_fd(fd):
    done = subprocess.run([f"/proc/self/fd/{fd}"], pass_fds=(fd,))
    if done.returncode != 0:
        raise OSError(0, "exit %d" % done.returncode)
memfd = attempt("memfd_create", lambda: os.memfd_create("payload", 0))
if memfd is not None:
    os.write(memfd, elf)
    attempt("execute the memfd through /proc/self/fd", lambda: run_fd(memfd))
with open("/tmp/payload", "wb") as f:
    f.write(elf)
os.chmod("/tmp/payload", 0o755)
payload = os.open("/tmp/payload", os.O_RDONLY)
attempt("execute a /tmp file through /proc/self/fd", lambda: run_fd(payload))
def execveat(dirfd, path, flags):
    pid = os.fork()
    if pid == 0:
        argv = (ctypes.c_char_p * 2)(b"true", None)
        envp = (ctypes.c_char_p * 1)(None)
        try:
            syscall(322, dirfd, path, argv, envp, flags)
        except OSError as e:
            os._exit(e.errno)
        os._exit(255)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise OSError(code, os.strerror(code))
AT_FDCWD, AT_EMPTY_PATH = -100, 0x1000
true_fd = os.open("/bin/true", os.O_RDONLY)
attempt("execveat(/bin/true fd, AT_EMPTY_PATH)", lambda: execveat(true_fd, b"", AT_EMPTY_PATH))
attempt("execveat(AT_FDCWD, /bin/true)", lambda: execveat(AT_FDCWD, b"/bin/true", 0))
)py",
        .stdout_lines = {Denied("memfd_create", "EPERM"),
                         Denied("execute a /tmp file through /proc/self/fd", "EACCES"),
                         Denied("execveat(/bin/true fd, AT_EMPTY_PATH)", "EPERM"),
                         "execveat\\(AT_FDCWD, /bin/true\\): ok"},
    },
    {
        .name = "AStepCannotExecuteAProjectFile",
        .verdict = "a step whose program is a project file (./run.sh, made executable by an "
                   "earlier step) cannot start: exit code 126, outcome setup_failed, and it "
                   "prints nothing",
        .steps = {{"/bin/chmod", "755", "run.sh"}, {"./run.sh", "{TOKEN}"}},
        .files = {{"run.sh", "#!/bin/sh\necho escaped\n"}},
        .outcome = ProjectOutcome::kSetupFailed,
        .exit_code = 126,
        .step_count = 2,
        .check =
            [](const Result& result, const Description&) {
              EXPECT_EQ(result.steps.back().stdout_bytes, "");
              EXPECT_NE(result.steps.back().stderr_bytes, "") << "no reason given";
            },
    },
    {
        .name = "SetuidGainsNothing",
        .verdict = "the program runs as uid 1000 with no capabilities; setuid and file "
                   "capabilities cannot lift it (no_new_privs is set, or every mount is nosuid); "
                   "it cannot make a setuid file owned by anyone else, and no setuid binary of "
                   "the image (su, mount, ...) runs with another effective uid",
        .script = R"py(import os, stat, subprocess, time
from hostile import *
status = dict(line.split(":", 1) for line in open("/proc/self/status").read().splitlines())
print("uid:", os.getuid(), os.geteuid(), "gid:", os.getgid(), os.getegid())
for key in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
    print(f"{key}:", status[key].strip() if key in status else "not shown")
nosuid_everywhere = True
for line in open("/proc/self/mountinfo"):
    fields = line.split()
    options = set(fields[5].split(",")) | set(fields[fields.index("-") + 3].split(","))
    if "nosuid" not in options:
        nosuid_everywhere = False
PR_GET_NO_NEW_PRIVS = 39  # what /proc's NoNewPrivs line shows, where there is one
protected = libc.prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1 or nosuid_everywhere
print("setuid bits are ignored:", "yes" if protected else "no")
shutil_copy = open("/work/su", "wb"); shutil_copy.write(open("/bin/sh", "rb").read()); shutil_copy.close()
attempt("chown /work/su to root", lambda: os.chown("/work/su", 0, 0))
attempt("chmod u+s /work/su", lambda: os.chmod("/work/su", 0o4755))
# Every setuid or setgid binary of the image, started with a stdin that never
# answers; its effective IDs are read from /proc while it waits or exits.
escalated = []
for root in ("/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/lib", "/usr/libexec"):
    for directory, _, names in os.walk(root):
        for name in names:
            path = os.path.join(directory, name)
            try:
                mode = os.lstat(path).st_mode
            except OSError:
                continue
            if not stat.S_ISREG(mode) or not mode & (stat.S_ISUID | stat.S_ISGID):
                continue
            child = subprocess.Popen([path], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.05)
            try:
                ids = dict(l.split(":", 1) for l in open(f"/proc/{child.pid}/status").read().splitlines())
                euid, egid = ids["Uid"].split()[1], ids["Gid"].split()[1]
                if euid != "1000" or egid != "1000":
                    escalated.append(f"{path} (euid {euid}, egid {egid})")
            except (OSError, KeyError):
                pass
            child.kill(); child.wait()
print("setuid binaries that changed identity:", ", ".join(escalated) or "none")
)py",
        .stdout_lines = {"uid: 1000 1000 gid: 1000 1000", "CapInh: 0+", "CapPrm: 0+", "CapEff: 0+",
                         "CapAmb: 0+", "setuid bits are ignored: yes",
                         Denied("chown /work/su to root", "EPERM|EINVAL"),
                         // Allowed on one's own file; nosuid and noexec make it harmless.
                         "chmod u\\+s /work/su: (ok|EPERM)",
                         "setuid binaries that changed identity: none"},
        .under_gvisor =
            GvisorVerdict{
                .difference = "gVisor's /proc/self/status has no CapAmb line; the ambient set is "
                              "always within the permitted and inheritable sets "
                              "(capabilities(7)), which it shows empty",
                .stdout_lines = {"uid: 1000 1000 gid: 1000 1000", "CapInh: 0+", "CapPrm: 0+",
                                 "CapEff: 0+", "CapAmb: not shown", "setuid bits are ignored: yes",
                                 Denied("chown /work/su to root", "EPERM"),
                                 "chmod u\\+s /work/su: ok",
                                 "setuid binaries that changed identity: none"},
            },
    },
    {
        .name = "DevicesAreOutOfReach",
        .verdict = "/dev holds only harmless nodes; opening memory, port, kernel log, disk, "
                   "loop, fuse, kvm and tun devices fails, and mknod of a character or block "
                   "device fails with EPERM",
        .script = R"py(import fcntl, os, stat, struct
from hostile import *
opened = {}
for path, flags in [("/dev/mem", os.O_RDONLY), ("/dev/kmem", os.O_RDONLY), ("/dev/port", os.O_RDONLY),
                    ("/dev/kmsg", os.O_RDONLY), ("/dev/sda", os.O_RDONLY), ("/dev/vda", os.O_RDONLY),
                    ("/dev/loop0", os.O_RDONLY), ("/dev/loop-control", os.O_RDONLY),
                    ("/dev/fuse", os.O_RDWR), ("/dev/kvm", os.O_RDWR), ("/dev/net/tun", os.O_RDWR),
                    ("/dev/cpu/0/msr", os.O_RDONLY)]:
    fd = attempt(f"open {path}", lambda: os.open(path, flags))
    if fd is not None:
        opened[path] = fd
# Where a runtime's own kernel serves these devices (gVisor's FUSE and TUN),
# opening one must still give nothing: no filesystem mounted, no interface made.
if "/dev/fuse" in opened:
    options = f"fd={opened['/dev/fuse']},rootmode=40000,user_id={os.getuid()},group_id={os.getgid()}"
    attempt("mount fuse on /tmp", lambda: syscall(165, b"fuse", b"/tmp", b"fuse", 0, options.encode()))
if "/dev/net/tun" in opened:
    IFF_TUN, IFF_NO_PI, TUNSETIFF = 0x0001, 0x1000, 0x400454ca
    request = struct.pack("16sH22x", b"plimsoll0", IFF_TUN | IFF_NO_PI)
    attempt("ioctl(TUNSETIFF)", lambda: fcntl.ioctl(opened["/dev/net/tun"], TUNSETIFF, request))
# A node that could be made must not open a device.
for node, kind, numbers in [("/tmp/mem", stat.S_IFCHR, (1, 1)), ("/work/sda", stat.S_IFBLK, (8, 0))]:
    label = f"mknod {node} {'c' if kind == stat.S_IFCHR else 'b'} {numbers[0]} {numbers[1]}"
    if attempt(label, lambda: os.mknod(node, kind | 0o666, os.makedev(*numbers)) or True):
        attempt(f"open {node}", lambda: os.close(os.open(node, os.O_RDONLY)))
harmless = {"null", "zero", "full", "random", "urandom", "tty", "fd", "stdin", "stdout", "stderr",
            "pts", "ptmx", "shm", "mqueue", "core"}
print("unexpected /dev entries:", " ".join(sorted(set(os.listdir("/dev")) - harmless)) or "none")
)py",
        .stdout_lines = {Denied("open /dev/mem", "ENOENT|EACCES|EPERM"),
                         Denied("open /dev/kmem", "ENOENT|EACCES|EPERM"),
                         Denied("open /dev/port", "ENOENT|EACCES|EPERM"),
                         Denied("open /dev/kmsg", "ENOENT|EACCES|EPERM"),
                         Denied("open /dev/sda", "ENOENT|EACCES|EPERM"),
                         Denied("open /dev/vda", "ENOENT|EACCES|EPERM"),
                         Denied("open /dev/loop0", "ENOENT|EACCES|EPERM"),
                         Denied("open /dev/loop-control", "ENOENT|EACCES|EPERM"),
                         Denied("open /dev/fuse", "ENOENT|EACCES|EPERM"),
                         Denied("open /dev/kvm", "ENOENT|EACCES|EPERM"),
                         Denied("open /dev/net/tun", "ENOENT|EACCES|EPERM"),
                         Denied("open /dev/cpu/0/msr", "ENOENT|EACCES|EPERM"),
                         Denied("mknod /tmp/mem c 1 1", "EPERM"),
                         Denied("mknod /work/sda b 8 0", "EPERM"), "unexpected /dev entries: none"},
        .under_gvisor =
            GvisorVerdict{
                .difference =
                    "gVisor's /dev also holds fuse and net/tun, devices its own kernel implements "
                    "(opening a file is no system call a policy can tell apart): they open, but "
                    "they are the Sentry's own code, not the host's FUSE or TUN, no FUSE "
                    "filesystem can be mounted (mount: our policy's EPERM) and no TUN interface "
                    "made (TUNSETIFF needs CAP_NET_ADMIN: EPERM). mknod of a device node is "
                    "refused by our policy as everywhere",
                .stdout_lines =
                    {Denied("open /dev/mem", "ENOENT"), Denied("open /dev/kmem", "ENOENT"),
                     Denied("open /dev/port", "ENOENT"), Denied("open /dev/kmsg", "ENOENT"),
                     Denied("open /dev/sda", "ENOENT"), Denied("open /dev/vda", "ENOENT"),
                     Denied("open /dev/loop0", "ENOENT"),
                     Denied("open /dev/loop-control", "ENOENT"), "open /dev/fuse: ok",
                     Denied("open /dev/kvm", "ENOENT"), "open /dev/net/tun: ok",
                     Denied("open /dev/cpu/0/msr", "ENOENT"), Denied("mount fuse on /tmp", "EPERM"),
                     Denied("ioctl(TUNSETIFF)", "EPERM"), Denied("mknod /tmp/mem c 1 1", "EPERM"),
                     Denied("mknod /work/sda b 8 0", "EPERM"), "unexpected /dev entries: fuse net"},
            },
    },
    {
        .name = "SymlinkArtifactsAreNotFollowed",
        .verdict = "artifacts that are symlinks (to the guest's /etc/passwd, to the host's secret "
                   "file {SECRET_PATH}, to /proc/1/root, through a symlinked directory) are left "
                   "out; only the regular file comes back",
        .script = R"py(import os
from hostile import *
with open("real.txt", "w") as f:
    f.write("regular\n")
os.symlink("/etc/passwd", "passwd")
os.symlink("{SECRET_PATH}", "secret")
os.symlink("/proc/1/root/etc/shadow", "shadow")
os.symlink("/proc/self/root/etc/hostname", "hostname")
os.symlink("/", "root")
os.symlink("real.txt", "relative")
print("planted")
)py",
        .artifacts = {"passwd", "secret", "shadow", "hostname", "root/etc/passwd", "relative",
                      "real.txt"},
        .stdout_lines = {"planted"},
        .check =
            [](const Result& result, const Description&) {
              ASSERT_EQ(result.artifacts.size(), 1u);
              EXPECT_EQ(result.artifacts[0].path, "real.txt");
              EXPECT_EQ(result.artifacts[0].content, "regular\n");
              EXPECT_FALSE(result.artifacts[0].truncated);
            },
    },
    {
        .name = "ArtifactsThatAreFifosOrHugeAreHandled",
        .verdict = "a FIFO artifact (which would block a naive reader) is left out without "
                   "stalling the run (if the policy lets the program make one at all); a sparse "
                   "file far bigger than the cap comes back truncated at max_artifact_bytes",
        .script = R"py(import os
from hostile import *
attempt("mkfifo pipe", lambda: os.mkfifo("pipe"))
with open("sparse.bin", "wb") as f:
    f.truncate(100 << 20)
print("planted")
)py",
        .artifacts = {"pipe", "sparse.bin"},
        .timeout_ms = 20'000,  // a stall would hold the run to it
        .stdout_lines = {Denied("mkfifo pipe", "ok|EPERM"), "planted"},
        .check =
            [](const Result& result, const Description& description) {
              ASSERT_EQ(result.artifacts.size(), 1u);
              EXPECT_EQ(result.artifacts[0].path, "sparse.bin");
              EXPECT_TRUE(result.artifacts[0].truncated);
              EXPECT_LE(static_cast<int64_t>(result.artifacts[0].content.size()),
                        description.limits.max_artifact_bytes);
              EXPECT_TRUE(std::all_of(result.artifacts[0].content.begin(),
                                      result.artifacts[0].content.end(),
                                      [](char c) { return c == '\0'; }));
              // Well under the 20 s a stalled reader would take, with room for
              // a cold VM boot under TCG on a busy host (5.6 s was seen).
              EXPECT_LT(result.duration_ms, 10'000) << "the FIFO stalled the run";
            },
    },
    {
        .name = "ArtifactSwappedForASymlinkMidCollection",
        .verdict = "a process left running swaps the artifact between a regular file and a "
                   "symlink to /etc/shadow as fast as it can; what comes back is never shadow's "
                   "content: the artifact is absent or exactly the regular file",
        .steps = {{"python3", "probe.py", "{TOKEN}"},
                  {"python3", "-c", "import time; time.sleep(0.3); print('racer running')",
                   "{TOKEN}"}},
        .files = {{"probe.py", R"py(import os, sys
from hostile import *
with open("regular", "w") as f:
    f.write("regular\n")
os.symlink("/etc/shadow", "link")
if os.fork() == 0:
    os.setsid()
    devnull = os.open("/dev/null", os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    os.link("regular", "regular-copy")
    while True:  # swap race.txt between the two, forever
        os.symlink("/etc/shadow", "race-link")
        os.rename("race-link", "race.txt")
        os.link("regular-copy", "race-file")
        os.rename("race-file", "race.txt")
print("racer started")
)py"}},
        .artifacts = {"race.txt"},
        .step_count = 2,
        .stdout_lines = {"racer started", "racer running"},
        .check =
            [](const Result& result, const Description&) {
              for (const Artifact& artifact : result.artifacts) {
                EXPECT_EQ(artifact.path, "race.txt");
                EXPECT_EQ(artifact.content, "regular\n") << "a symlink was followed";
              }
            },
    },
};

PLIMSOLL_HOSTILE_PROGRAMS(Filesystem, kFilesystemPrograms);

}  // namespace
}  // namespace plimsoll::hostile
