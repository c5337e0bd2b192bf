// The check program a smoke test runs INSIDE a throwaway sandbox (SPEC §6),
// and the reading of its answer. The linux provider and the oci provider
// (runc, crun, runsc) run the same program, told which wall it stands in.
//
// The program is a Python 3 script, src/os/self_check.py (a data file
// embedded at build time by cmake/EmbedText.cmake), sent as a project file
// (so /work's noexec does not matter) and run as the guest user by the real
// agent with the real configuration. It prints one JSON object per line:
//   {"name": "root_read_only", "passed": true, "detail": "..."}
//
// Usage (a provider's smoke test):
//   Request check;
//   check.project = SelfCheckProject(limits, SelfCheckProfile::kGvisor);
//   ... run it like any request, then:
//   auto checks = ParseSelfCheckOutput(result.stdout_bytes, SelfCheckProfile::kGvisor);
//
// Profiles (the script's --profile; each measured on runc 1.1.5, crun 1.8.1
// and runsc 2022-12-19):
//  - every profile: seccomp_filter, our policy (image/seccomp.policy, the same
//    on every OS-level tier) proven by probes made in a child, each of which
//    must get exactly the policy's answer: a system call number no kernel
//    has (EPERM: deny by default; a kernel without a filter says ENOSYS),
//    clone3 (ENOSYS; a kernel says EINVAL), and EPERM for ptrace(TRACEME),
//    unshare(CLONE_NEWUSER), socket(AF_INET), memfd_create, inotify_init1,
//    mount, keyctl and bpf. "Seccomp: 2" alone proves nothing (an allow-all
//    filter shows it); it is required too, except under gVisor. Every
//    profile's only_tmpfs_writable also allows /run as a tmpfs owned by root
//    and not writable by others: a granted run's relay socket (docs/
//    grants.md; linux and oci mount it only for granted runs, microvm always).
//  - kLinux ("linux"): our own namespace wall. Checks: root_read_only,
//    tmp_is_bounded_tmpfs, work_is_bounded_tmpfs, only_tmpfs_writable,
//    proc_masked (the /proc entries of mount.h's lists masked or read-only),
//    loopback_only, no_route_out, pids_limit, seccomp_filter,
//    no_new_privileges, unprivileged_no_capabilities.
//  - kOciRunc ("oci-runc"): runc and crun with our config.json (a read-only
//    /dev tmpfs). The same checks, with two differences in
//    only_tmpfs_writable: only the topmost mount at each mount point counts
//    (crun binds the real devices over placeholder files), and the writable
//    binds allowed are /dev/{null,zero,full,random,urandom,tty} when each is
//    that very character device, and masked /proc paths when each is the
//    character device 1:3 (the host's /dev/null).
//  - kGvisor ("gvisor"): runsc, where gVisor's kernel serves the calls our
//    policy allows (runsc --oci-seccomp applies the policy inside gVisor).
//    No proc_masked (gVisor's procfs has none of those entries); plus
//    guest_kernel_is_gvisor (another kernel release than the host's, and
//    gVisor's boot line in the kernel log or, as our policy denies
//    syslog(2), gVisor's fixed /proc/version banner) and
//    host_kernel_interfaces_absent (/proc/kallsyms, /proc/iomem,
//    /proc/sys/kernel/osrelease, /sys/kernel/debug). gVisor's own /sys, /dev
//    and /dev/pts may be writable; tmpfs and /proc need only noexec and the
//    size may read in bytes. no_route_out accepts a socket that could be
//    made only if its connect fails unreachable. pids_limit reads
//    RLIMIT_NPROC (the guest's limit under runsc, whose cgroup also counts
//    gVisor's own threads) and proves gVisor enforces it with the soft limit
//    lowered to 16: forking to the full limit would exhaust the sandbox's
//    host cgroup first.
//  - kMicrovm ("microvm"): plimsoll-guest in a QEMU microvm (docs/microvm.md),
//    served by the guest's own Linux behind our policy (the agent installs
//    it in each step). The root is a read-only EROFS disk; /tmp, /work and
//    /proc as under kLinux; nothing else writable (/dev is a read-only tmpfs
//    with mknod'ed nodes). No cgroup inside: instead guest_kernel_is_own
//    (another kernel release than the host's; its detail reports the CPU's
//    hypervisor flag, which TCG shows too, so nothing rests on it).
//    no_route_out and pids_limit as under kGvisor (RLIMIT_NPROC, set by the
//    agent to pids).
//
// Every wall check fails outside any wall (self_check_test runs each
// profile's program as root on the bare host).
#ifndef PLIMSOLL_OS_SELF_CHECK_H_
#define PLIMSOLL_OS_SELF_CHECK_H_

#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"
#include "plimsoll/limits.h"
#include "plimsoll/provider.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"

namespace plimsoll::os {

// The text of src/os/self_check.py, NUL terminated, as the build embedded it:
// one script for every profile, told which one it runs under by --profile;
// the checks share their parsing of mountinfo and their reports, and differ
// only where the runtimes differ (measured: runc 1.1.5, crun 1.8.1, runsc
// 2022-12-19). Its names __MASKED_PROC_PATHS__ and __READ_ONLY_PROC_PATHS__
// stand for proc_masks.h's lists, which SelfCheckProject writes in as Python
// list literals (so the file itself stays valid Python).
extern const char* const kSelfCheckScript;

// Which wall the self-check stands in (see the profiles above).
enum class SelfCheckProfile {
  kLinux,    // the linux provider's own namespaces
  kOciRunc,  // runc and crun with our config.json
  kGvisor,   // runsc (gVisor): the guest is served by gVisor's kernel
  kMicrovm,  // the microvm provider: the guest's own Linux in a QEMU VM
};

// The project that runs the script with the configured limits and the
// profile as arguments; for kGvisor also the host's kernel release (uname(2),
// read on each call). Thread-safe.
ProjectPayload SelfCheckProject(const Limits& limits,
                                SelfCheckProfile profile = SelfCheckProfile::kLinux);

// The checks named in stdout, one per JSON line. A line that is not a check
// is an error: the evidence must not be guessed. A name of `profile` that
// stdout lacks is added as a failed check.
Expected<std::vector<EvidenceCheck>> ParseSelfCheckOutput(
    std::string_view stdout_bytes, SelfCheckProfile profile = SelfCheckProfile::kLinux);

// The names every complete run under `profile` reports (a missing one fails
// the smoke test). The reference lives for the whole program.
const std::vector<std::string>& SelfCheckNames(SelfCheckProfile profile = SelfCheckProfile::kLinux);

// The memory probe every smoke test runs after the self-check: a python
// snippet allocating Limits::memory_bytes + 64 MiB.
Request MemoryProbeRequest(const Limits& limits);
// Its check, "memory_limit_enforced": the probe was killed with 137.
EvidenceCheck MemoryProbeCheck(const Result& probe);

// "cgroup_limits_configured": the limits the kernel holds for a sandbox's
// cgroup (file name -> value, read from the host: v1 memory.limit_in_bytes,
// memory.memsw.limit_in_bytes, pids.max or v2 memory.max, memory.swap.max,
// pids.max) are the configured memory, no swap beyond it (or no swap on the
// host at all), and `pids_limit`.
EvidenceCheck CgroupLimitsCheck(const Limits& limits, int64_t pids_limit,
                                const std::vector<std::pair<std::string, std::string>>& values);

}  // namespace plimsoll::os

#endif  // PLIMSOLL_OS_SELF_CHECK_H_
