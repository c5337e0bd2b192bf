// The proof SPEC §10 asks of a runner about to hold a hidden scenario: a
// process of the same user (what the controller is) can read neither the
// runner's memory nor its descriptors.
//
// ProbeFromSameUser forks a child (same uid, same capabilities, the
// controller's position: a child of the runner) and has it try, against
// this process:
//   "/proc/PID/mem"       open it and pread a canary buffer this process holds
//   "process_vm_readv"    read the same canary through the syscall
//   "/proc/PID/environ"   open it
//   "/proc/PID/fd/N"      open and read a canary memfd this process holds
//   "readlink fd"         readlink /proc/PID/fd/N
// and reports which attempts succeeded. With PR_SET_DUMPABLE 0 and no
// CAP_SYS_PTRACE every one fails (the kernel's ptrace access check); as
// root on a bare host, or with the process still dumpable, they succeed.
// An attempt the child is killed for (a seccomp policy that kills) counts
// as failed: no same-user process can make it either.
//
// Usage:
//   Expected<std::vector<std::string>> leaks = ProbeFromSameUser();
//   if (leaks.ok() && !leaks->empty()) { ... refuse: *leaks names them ... }
//
// Thread-safety: forks; the child calls only async-signal-safe functions
// (open, pread, process_vm_readv, readlink, write, _exit), so any thread
// may call it.
#ifndef PLIMSOLL_TRIAL_SAME_USER_PROBE_H_
#define PLIMSOLL_TRIAL_SAME_USER_PROBE_H_

#include <string>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::trial {

// The names above of the attempts that read something; empty when the
// process is hidden from its own user. Errors (kInternal): the probe
// itself could not run (memfd, pipe, fork).
Expected<std::vector<std::string>> ProbeFromSameUser();

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_SAME_USER_PROBE_H_
