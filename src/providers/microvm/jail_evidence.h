// The jail of a running VM, checked from the host (docs/microvm.md "The
// jailer"): what /proc/<QEMU pid> says, not what the jailer was asked for.
//
//   jail_user            Uid/Gid (real, effective, saved, fs) are the VM's
//                        own uid/gid, never 0; Groups only the spec's
//   jail_capabilities    CapInh, CapPrm, CapEff, CapBnd, CapAmb all empty
//   jail_no_new_privs    NoNewPrivs: 1
//   jail_seccomp         Seccomp: 2 (QEMU's -sandbox filter)
//   jail_namespaces      mnt, net, ipc and uts differ from the inspector's
//   jail_root            QEMU's root holds only the jail's top-level entries
//                        (no /home, /root, /proc, /etc/passwd)
//   jail_cgroup          QEMU is in the VM's cgroup, whose memory, pids and
//                        CPU limits are in place
//
// Usage (host side, as root, after MicrovmVm::Start):
//   for (auto& check : InspectJail(*vm)) evidence.checks.push_back(check);
#ifndef PLIMSOLL_PROVIDERS_MICROVM_JAIL_EVIDENCE_H_
#define PLIMSOLL_PROVIDERS_MICROVM_JAIL_EVIDENCE_H_

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "plimsoll/provider.h"
#include "providers/microvm/microvm_vm.h"

namespace plimsoll::microvm {

// One EvidenceCheck per line above; a check that cannot read what it needs
// fails (fail closed). Thread-safe for distinct VMs.
std::vector<EvidenceCheck> InspectJail(const MicrovmVm& vm);

// /proc/<pid>/status as {"Uid": "900000\t900000\t900000\t900000", ...}
// (values without leading blanks); empty when the process is gone.
std::map<std::string, std::string> ReadProcStatus(pid_t pid);
// A whole (small) file, "" when it cannot be read.
std::string ReadSmallTextFile(const std::string& path);

// The top-level names the jail's root holds for `spec` ("dev", "usr", ...).
std::vector<std::string> JailRootEntries(const JailSpec& spec);

}  // namespace plimsoll::microvm

#endif  // PLIMSOLL_PROVIDERS_MICROVM_JAIL_EVIDENCE_H_
