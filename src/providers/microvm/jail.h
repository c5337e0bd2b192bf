// plimsoll-vmm-jail: privileged setup, then exec of the unprivileged VMM
// (in the spirit of Firecracker's jailer; docs/microvm.md "The jailer").
//
// Runs as root, started by MicrovmVm::Start through os::Spawn (stdin
// /dev/null, stdout+stderr a pipe, the agent channel on fd 3). In order:
//   1. joins the VM's cgroup(s) (the provider made them, with the limits);
//   2. sets rlimits: RLIMIT_CORE 0, RLIMIT_NOFILE and RLIMIT_FSIZE from the
//      spec;
//   3. unshares the mount, network, IPC and UTS namespaces (no pid
//      namespace: /proc is not mounted in the jail, so QEMU sees no process,
//      and its unique uid keeps it from signalling or tracing any other);
//   4. makes / private and opens every path of the spec (O_PATH) while the
//      host's tree is still visible (as root: a 0700 /root is no obstacle);
//   5. builds a fresh root on a tmpfs: each path bound at its own absolute
//      path (read-only, nosuid, nodev; files also noexec; the writable VM
//      directory nosuid, nodev, noexec), symlinks recreated, /dev holding
//      only the named device nodes; the tmpfs is then made read-only, and
//      pivot_root moves into it, detaching the old root entirely; then the
//      working directory (--chdir) is entered;
//   6. closes every descriptor but 0-3;
//   7. empties the capability bounding and ambient sets, setgroups (only the
//      spec's groups), setresgid, setresuid to the spec's ids, clears the
//      inheritable set, sets PR_SET_NO_NEW_PRIVS, and checks that no
//      capability is left in any set; sets the parent-death signal
//      (SIGKILL) again, which the uid change cleared, so QEMU ends with the
//      provider that started it;
//   8. execs the command (QEMU, which adds its own seccomp filter).
// Any failure writes one line "plimsoll-vmm-jail: <what failed>: <why>" to
// stderr and exits kJailFailureExit before the command starts.
//
// Usage (jail_main.cc):
//   auto spec = ParseJailCommandLine(args);
//   Error error = RunJail(*spec);   // returns only on failure
#ifndef PLIMSOLL_PROVIDERS_MICROVM_JAIL_H_
#define PLIMSOLL_PROVIDERS_MICROVM_JAIL_H_

#include "plimsoll/error.h"
#include "providers/microvm/jail_spec.h"

namespace plimsoll::microvm {

// Builds the jail and execs spec.command. Returns only on failure (the
// process may by then be half-jailed: the caller must exit). Needs root
// (CAP_SYS_ADMIN, CAP_SETUID, CAP_SETGID, CAP_SETPCAP). Single-threaded
// callers only.
Error RunJail(const JailSpec& spec);

}  // namespace plimsoll::microvm

#endif  // PLIMSOLL_PROVIDERS_MICROVM_JAIL_H_
