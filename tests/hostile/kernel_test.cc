// System calls the seccomp policy denies (SPEC §6: deny by default; no new
// namespaces, no ptrace, no mount, no keyring, no bpf, no perf_event_open)
// and calls only a privileged process may make. Every one must fail with
// EPERM: seccomp's answer, and also what the kernel says to a process with
// no capabilities. Calls go through python3's ctypes (libpython3.11-stdlib is
// in the image) with x86-64 system call numbers. The policy is the same on
// every OS-level tier (gVisor applies it inside its kernel with runsc
// --oci-seccomp, the microvm agent installs it in every step), so every tier
// gets the same verdict; the kernel boundary of the higher tiers is behind it.
#include <sys/inotify.h>
#include <unistd.h>

#include "hostile/hostile.h"

namespace plimsoll::hostile {
namespace {

const Program kKernelPrograms[] = {
    {
        .name = "PtraceIsDenied",
        .verdict = "ptrace fails with EPERM for PTRACE_TRACEME, for attaching to a child of the "
                   "program's own (which the kernel alone would allow) and for attaching to its "
                   "parent, the agent",
        .script = R"py(import os, signal, time
from hostile import *
PTRACE_TRACEME, PTRACE_ATTACH, PTRACE_SEIZE = 0, 16, 0x4206
child = os.fork()
if child == 0:
    time.sleep(30)
    os._exit(0)
attempt("ptrace(PTRACE_ATTACH, own child)", lambda: syscall(101, PTRACE_ATTACH, child, 0, 0))
attempt("ptrace(PTRACE_SEIZE, own child)", lambda: syscall(101, PTRACE_SEIZE, child, 0, 0))
parent = os.getppid()
if parent > 0:
    attempt("ptrace(PTRACE_ATTACH, parent)", lambda: syscall(101, PTRACE_ATTACH, parent, 0, 0))
else:
    print("ptrace(PTRACE_ATTACH, parent): EPERM")  # the parent is not even visible
os.kill(child, signal.SIGKILL)
os.waitpid(child, 0)
attempt("ptrace(PTRACE_TRACEME)", lambda: syscall(101, PTRACE_TRACEME, 0, 0, 0))
)py",
        .stdout_lines = {Denied("ptrace(PTRACE_ATTACH, own child)", "EPERM"),
                         Denied("ptrace(PTRACE_SEIZE, own child)", "EPERM"),
                         Denied("ptrace(PTRACE_ATTACH, parent)", "EPERM"),
                         Denied("ptrace(PTRACE_TRACEME)", "EPERM")},
    },
    {
        .name = "MountingIsDenied",
        .verdict = "mount, remount, bind mount, umount, chroot, pivot_root and the new mount API "
                   "all fail with EPERM (ENOSYS accepted for the new mount API)",
        .script = R"py(from hostile import *
MS_RDONLY, MS_REMOUNT, MS_BIND, MS_REC, MNT_DETACH = 1, 32, 4096, 16384, 2
attempt("mount tmpfs on /tmp", lambda: syscall(165, b"none", b"/tmp", b"tmpfs", 0, b"size=1m"))
attempt("remount / read-write", lambda: syscall(165, b"none", b"/", None, MS_REMOUNT, None))
attempt("bind mount / on /work", lambda: syscall(165, b"/", b"/work", None, MS_BIND | MS_REC, None))
attempt("mount proc on /tmp", lambda: syscall(165, b"proc", b"/tmp", b"proc", 0, None))
attempt("umount /work", lambda: syscall(166, b"/work", MNT_DETACH))
attempt("umount /proc", lambda: syscall(166, b"/proc", MNT_DETACH))
attempt("chroot /tmp", lambda: syscall(161, b"/tmp"))
attempt("pivot_root", lambda: syscall(155, b"/tmp", b"/tmp"))
attempt("fsopen tmpfs", lambda: syscall(430, b"tmpfs", 0))
attempt("open_tree /", lambda: syscall(428, -100, b"/", 1))
)py",
        .stdout_lines = {Denied("mount tmpfs on /tmp", "EPERM"),
                         Denied("remount / read-write", "EPERM"),
                         Denied("bind mount / on /work", "EPERM"),
                         Denied("mount proc on /tmp", "EPERM"), Denied("umount /work", "EPERM"),
                         Denied("umount /proc", "EPERM"), Denied("chroot /tmp", "EPERM"),
                         Denied("pivot_root", "EPERM"), Denied("fsopen tmpfs", "EPERM|ENOSYS"),
                         Denied("open_tree /", "EPERM|ENOSYS")},
    },
    {
        .name = "NewNamespacesAreDenied",
        .verdict = "unshare, clone and clone3 with namespace flags and setns fail with EPERM "
                   "(a nested user namespace would hand the program every capability inside it); "
                   "clone3 may say ENOSYS",
        .script = R"py(import os
from hostile import *
CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC = 0x20000, 0x02000000, 0x04000000, 0x08000000
CLONE_NEWUSER, CLONE_NEWPID, CLONE_NEWNET, SIGCHLD = 0x10000000, 0x20000000, 0x40000000, 17

def clone(flags):
    pid = syscall(56, flags | SIGCHLD, 0, 0, 0, 0)
    if pid == 0:
        os._exit(0)  # the child of a clone that should not have worked
    os.waitpid(pid, 0)
    return pid

def clone3(flags):
    args = ctypes.create_string_buffer(88)  # struct clone_args, version 0
    ctypes.memmove(args, ctypes.byref(ctypes.c_uint64(flags)), 8)
    ctypes.memmove(ctypes.addressof(args) + 32, ctypes.byref(ctypes.c_uint64(SIGCHLD)), 8)
    pid = syscall(435, args, 88)
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid

def setns(path, kind):
    fd = os.open(path, os.O_RDONLY)
    try:
        return syscall(308, fd, kind)
    finally:
        os.close(fd)

attempt("setns own mount namespace", lambda: setns("/proc/self/ns/mnt", CLONE_NEWNS))
attempt("setns own network namespace", lambda: setns("/proc/self/ns/net", CLONE_NEWNET))
for name, flag in [("CLONE_NEWNS", CLONE_NEWNS), ("CLONE_NEWNET", CLONE_NEWNET),
                   ("CLONE_NEWPID", CLONE_NEWPID), ("CLONE_NEWUTS", CLONE_NEWUTS),
                   ("CLONE_NEWIPC", CLONE_NEWIPC), ("CLONE_NEWCGROUP", CLONE_NEWCGROUP)]:
    attempt(f"unshare({name})", lambda: syscall(272, flag))
attempt("clone(CLONE_NEWUSER)", lambda: clone(CLONE_NEWUSER))
attempt("clone(CLONE_NEWUSER|CLONE_NEWNS)", lambda: clone(CLONE_NEWUSER | CLONE_NEWNS))
attempt("clone3(CLONE_NEWUSER)", lambda: clone3(CLONE_NEWUSER))
# Last: if this one works, the program is in a new user namespace from here on.
uid = os.getuid()
if attempt("unshare(CLONE_NEWUSER)", lambda: syscall(272, CLONE_NEWUSER)) is not None:
    # The runtime's own kernel made it (gVisor): as root of the new namespace,
    # with every capability in it, the program must gain nothing.
    MS_REMOUNT = 32
    def map_root():
        with open("/proc/self/uid_map", "w") as f:
            f.write(f"0 {uid} 1")
    attempt("map uid 0 to the program's uid", map_root)
    attempt("unshare(CLONE_NEWNS) as its root", lambda: syscall(272, CLONE_NEWNS))
    attempt("mount tmpfs on /tmp as its root", lambda: syscall(165, b"none", b"/tmp", b"tmpfs", 0, b"size=1m"))
    attempt("remount / read-write as its root", lambda: syscall(165, b"none", b"/", None, MS_REMOUNT, None))
    attempt("read /etc/shadow as its root", lambda: read("/etc/shadow"))
    attempt("create /planted as its root", lambda: open("/planted", "w"))
    attempt("sethostname as its root", lambda: syscall(170, b"escaped", 7))
)py",
        .stdout_lines =
            {Denied("setns own mount namespace", "EPERM"),
             Denied("setns own network namespace", "EPERM"),
             Denied("unshare(CLONE_NEWNS)", "EPERM"), Denied("unshare(CLONE_NEWNET)", "EPERM"),
             Denied("unshare(CLONE_NEWPID)", "EPERM"), Denied("unshare(CLONE_NEWUTS)", "EPERM"),
             Denied("unshare(CLONE_NEWIPC)", "EPERM"), Denied("unshare(CLONE_NEWCGROUP)", "EPERM"),
             Denied("clone(CLONE_NEWUSER)", "EPERM"),
             Denied("clone(CLONE_NEWUSER|CLONE_NEWNS)", "EPERM"),
             Denied("clone3(CLONE_NEWUSER)", "EPERM|ENOSYS"),
             Denied("unshare(CLONE_NEWUSER)", "EPERM")},
        .under_gvisor =
            GvisorVerdict{
                .difference =
                    "our policy refuses every namespace call as everywhere; gVisor's /proc has no "
                    "ns/mnt entry, so the first setns fails at open (ENOENT), and clone3 gets "
                    "the policy's ENOSYS from the step's own filter (runsc's config.json keeps "
                    "no errno but EPERM, so the agent installs the policy, compiled, in each step)",
                .stdout_lines = {Denied("setns own mount namespace", "ENOENT"),
                                 Denied("setns own network namespace", "EPERM"),
                                 Denied("unshare(CLONE_NEWNS)", "EPERM"),
                                 Denied("unshare(CLONE_NEWNET)", "EPERM"),
                                 Denied("unshare(CLONE_NEWPID)", "EPERM"),
                                 Denied("unshare(CLONE_NEWUTS)", "EPERM"),
                                 Denied("unshare(CLONE_NEWIPC)", "EPERM"),
                                 Denied("unshare(CLONE_NEWCGROUP)", "EPERM"),
                                 Denied("clone(CLONE_NEWUSER)", "EPERM"),
                                 Denied("clone(CLONE_NEWUSER|CLONE_NEWNS)", "EPERM"),
                                 Denied("clone3(CLONE_NEWUSER)", "ENOSYS"),
                                 Denied("unshare(CLONE_NEWUSER)", "EPERM")},
            },
    },
    {
        .name = "KeyringIsDenied",
        .verdict = "keyctl, add_key and request_key fail with EPERM (the kernel would allow all "
                   "three to an unprivileged process)",
        .script = R"py(from hostile import *
KEY_SPEC_SESSION_KEYRING, KEYCTL_GET_KEYRING_ID, KEYCTL_JOIN_SESSION_KEYRING = -3, 0, 1
attempt("keyctl(KEYCTL_GET_KEYRING_ID)", lambda: syscall(250, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 1))
attempt("keyctl(KEYCTL_JOIN_SESSION_KEYRING)", lambda: syscall(250, KEYCTL_JOIN_SESSION_KEYRING, b"hostile"))
attempt("add_key(user)", lambda: syscall(248, b"user", b"hostile", b"payload", 7, KEY_SPEC_SESSION_KEYRING))
attempt("request_key(user)", lambda: syscall(249, b"user", b"hostile", None, KEY_SPEC_SESSION_KEYRING))
)py",
        .stdout_lines = {Denied("keyctl(KEYCTL_GET_KEYRING_ID)", "EPERM"),
                         Denied("keyctl(KEYCTL_JOIN_SESSION_KEYRING)", "EPERM"),
                         Denied("add_key(user)", "EPERM"), Denied("request_key(user)", "EPERM")},
    },
    {
        .name = "BpfIsDenied",
        .verdict = "bpf(BPF_MAP_CREATE) and bpf(BPF_PROG_LOAD) fail with EPERM",
        .script = R"py(import struct
from hostile import *
BPF_MAP_CREATE, BPF_PROG_LOAD, BPF_MAP_TYPE_ARRAY, BPF_PROG_TYPE_SOCKET_FILTER = 0, 5, 2, 1
attr = ctypes.create_string_buffer(struct.pack("IIII", BPF_MAP_TYPE_ARRAY, 4, 4, 1), 128)
attempt("bpf(BPF_MAP_CREATE)", lambda: syscall(321, BPF_MAP_CREATE, attr, 128))
# "r0 = 0; exit", licence "GPL".
program = ctypes.create_string_buffer(bytes.fromhex("b700000000000000" "9500000000000000"))
licence = ctypes.create_string_buffer(b"GPL")
attr = ctypes.create_string_buffer(128)
struct.pack_into("IIQQ", attr, 0, BPF_PROG_TYPE_SOCKET_FILTER, 2,
                 ctypes.addressof(program), ctypes.addressof(licence))
attempt("bpf(BPF_PROG_LOAD)", lambda: syscall(321, BPF_PROG_LOAD, attr, 128))
)py",
        .stdout_lines = {Denied("bpf(BPF_MAP_CREATE)", "EPERM"),
                         Denied("bpf(BPF_PROG_LOAD)", "EPERM")},
    },
    {
        .name = "PerfEventOpenIsDenied",
        .verdict = "perf_event_open for a software counter of the program itself (allowed by the "
                   "kernel at perf_event_paranoid 2) fails with EPERM",
        .script = R"py(import struct
from hostile import *
PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK = 1, 0
attr = ctypes.create_string_buffer(128)
# type, size, config, sample_period, sample_type, read_format, then the flag
# bits: disabled | exclude_kernel | exclude_hv.
struct.pack_into("IIQQQQQ", attr, 0, PERF_TYPE_SOFTWARE, 128, PERF_COUNT_SW_CPU_CLOCK, 0, 0, 0,
                 (1 << 0) | (1 << 5) | (1 << 6))
attempt("perf_event_open(software cpu clock, self)", lambda: syscall(298, attr, 0, -1, -1, 0))
)py",
        .stdout_lines = {Denied("perf_event_open(software cpu clock, self)", "EPERM")},
    },
    {
        .name = "PrivilegedCallsAreDenied",
        .verdict = "module loading, kexec, reboot, swapon, setting the clock or host name, port "
                   "I/O, process accounting, the kernel log and open_by_handle_at (the 'shocker' "
                   "escape) all fail with EPERM",
        .script = R"py(import os, struct
from hostile import *
attempt("init_module", lambda: syscall(175, b"\0" * 64, 64, b""))
attempt("finit_module", lambda: syscall(313, 0, b"", 0))
# Arguments are chosen so that even a privileged caller would change nothing:
# a module that does not exist, invalid kexec flags and descriptors, a
# reboot with wrong magic numbers, the clock set to what it already is.
attempt("delete_module", lambda: syscall(176, b"plimsoll_no_such_module", 0))
attempt("kexec_load", lambda: syscall(246, 0, 0, None, 0xffff0000))
attempt("kexec_file_load", lambda: syscall(320, -1, -1, 0, b"", 0))
attempt("reboot", lambda: syscall(169, 0, 0, 0, None))
attempt("swapon", lambda: syscall(167, b"/work/swap", 0))
attempt("sethostname", lambda: syscall(170, b"escaped", 7))
def now(scale):
    import time
    seconds, fraction = divmod(time.time_ns(), 10**9)
    return ctypes.create_string_buffer(struct.pack("qq", seconds, fraction // scale), 16)
attempt("settimeofday", lambda: syscall(164, now(1000), None))
attempt("clock_settime", lambda: syscall(227, 0, now(1)))
attempt("iopl(3)", lambda: syscall(172, 3))
attempt("ioperm", lambda: syscall(173, 0x80, 1, 1))
attempt("acct", lambda: syscall(163, b"/work/acct"))
log = ctypes.create_string_buffer(4096)
size = attempt("syslog(SYSLOG_ACTION_READ_ALL)", lambda: syscall(103, 3, log, 4096))
if size is not None:  # a runtime's kernel with a log of its own (gVisor's) must not show the host's
    print("the kernel log read is gVisor's:", "yes" if b"Starting gVisor" in log.raw[:size] else "no")
handle = ctypes.create_string_buffer(128)
ctypes.memmove(handle, ctypes.byref(ctypes.c_uint32(8)), 4)  # handle_bytes
attempt("open_by_handle_at", lambda: syscall(304, os.open("/", os.O_RDONLY), handle, 0))
)py",
        .stdout_lines = {Denied("init_module", "EPERM"), Denied("finit_module", "EPERM"),
                         Denied("delete_module", "EPERM"), Denied("kexec_load", "EPERM"),
                         Denied("kexec_file_load", "EPERM"), Denied("reboot", "EPERM"),
                         Denied("swapon", "EPERM"), Denied("sethostname", "EPERM"),
                         Denied("settimeofday", "EPERM"), Denied("clock_settime", "EPERM"),
                         Denied("iopl(3)", "EPERM"), Denied("ioperm", "EPERM"),
                         Denied("acct", "EPERM"), Denied("syslog(SYSLOG_ACTION_READ_ALL)", "EPERM"),
                         Denied("open_by_handle_at", "EPERM")},
    },
    {
        .name = "ExploitPrimitivesAreDenied",
        .verdict = "userfaultfd and io_uring_setup, favourite tools of kernel exploits that no "
                   "project needs, are outside a deny-by-default policy: EPERM (ENOSYS accepted)",
        .script = R"py(import os
from hostile import *
fd = attempt("userfaultfd", lambda: syscall(323, 0))
if fd is not None: os.close(fd)
fd = attempt("io_uring_setup", lambda: syscall(425, 1, ctypes.create_string_buffer(120)))
if fd is not None: os.close(fd)
)py",
        .stdout_lines = {Denied("userfaultfd", "EPERM|ENOSYS"),
                         Denied("io_uring_setup", "EPERM|ENOSYS")},
    },
    {
        .name = "InotifyInstancesAreDenied",
        .verdict = "inotify instances are counted per user, up to the host uid every sandbox "
                   "maps to (the user namespace's ucounts), so one sandbox holding them all "
                   "would starve the others: inotify_init1 and inotify_init fail with EPERM, "
                   "and 200 attempts get no instance at all",
        .script = R"py(from hostile import *
instances, failure = [], "none"
for _ in range(200):
    try:
        instances.append(syscall(294, 0))  # inotify_init1
    except OSError as e:
        failure = errname(e.errno)
        break
print(f"inotify_init1: {len(instances)} instances, then {failure}")
attempt("inotify_init", lambda: syscall(253))
)py",
        .stdout_lines = {"inotify_init1: 0 instances, then EPERM", Denied("inotify_init", "EPERM")},
        // And the host, after the guest's 200 attempts, still gets one.
        .check =
            [](const Result&, const Description&) {
              int instance = inotify_init1(IN_CLOEXEC);
              EXPECT_GE(instance, 0) << "the host cannot open an inotify instance";
              if (instance >= 0) close(instance);
            },
    },
};

PLIMSOLL_HOSTILE_PROGRAMS(Kernel, kKernelPrograms);

}  // namespace
}  // namespace plimsoll::hostile
