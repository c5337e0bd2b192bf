// Reconcile of the `microvm` provider: what a crashed owner left under the
// state directory (its VM directories, <state>/vm-<dead owner>-*) removed,
// and only QEMU processes provably its own killed.
//
// A process is killed only when, read after a pidfd pinned it (so a pid
// recycled meanwhile is never signalled: the signal goes through that
// pidfd), all of these hold:
//   - its command line names the stale VM directory (QEMU's console log and
//     QMP socket live there);
//   - its executable is the configured QEMU (same device and inode);
//   - its real uid is one of the jail's uids (UidRange), never root;
//   - the VM directory is owned by that uid (MicrovmVm::Start chowns it to
//     the VM's leased uid);
//   - it sits in one of our VM cgroups (<hierarchy>/plimsoll/microvm/...).
// Anything else whose argv merely names a stale directory (a shell, an
// editor, a decoy) survives, and is listed in `spared` with the reason.
//
// Thread-safe (touches only /proc and the state directory). Usage:
//   auto outcome = ReconcileVmDirectories({state_dir, "/usr/bin/qemu-system-x86_64", uids});
//   if (!outcome.problems.empty()) ...
#ifndef PLIMSOLL_PROVIDERS_MICROVM_MICROVM_RECONCILE_H_
#define PLIMSOLL_PROVIDERS_MICROVM_MICROVM_RECONCILE_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "providers/microvm/jail_uid.h"

namespace plimsoll::microvm {

struct VmReconcileScope {
  std::string state_dir;
  // The configured QEMU binary (absolute); "": no process can be proven
  // ours, so none is killed (the directories are still removed).
  std::string qemu;
  UidRange uids;
};

struct VmReconcileOutcome {
  std::vector<pid_t> killed;         // provably our QEMUs, SIGKILLed and gone
  std::vector<std::string> spared;   // "pid N: why it is not provably ours"
  std::vector<std::string> removed;  // stale VM directories removed
  std::string problems;              // "" when everything went
};

// Why `pid` is not provably a QEMU of the stale VM directory `directory`
// under `scope`; "" when it is. Reads /proc/<pid>: call with a pidfd of
// `pid` held, so the answer is about the process that pidfd names.
std::string WhyNotOurQemu(pid_t pid, const std::string& directory, const VmReconcileScope& scope);

// Kills the provable QEMUs of every stale VM directory (waiting until each
// is gone, bounded), then removes those directories; removes the uid lease
// files a crashed provider left (RemoveStaleLeases).
VmReconcileOutcome ReconcileVmDirectories(const VmReconcileScope& scope);

}  // namespace plimsoll::microvm

#endif  // PLIMSOLL_PROVIDERS_MICROVM_MICROVM_RECONCILE_H_
