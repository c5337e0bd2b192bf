// cgroups of the linux sandbox: one cgroup per run, under one parent.
//
// Layout (docs/linux-provider.md "Leftovers"):
//   v1: <controller mount>/plimsoll/linux/<run> for each of memory, pids,
//       cpu (when mounted) and freezer (when mounted)
//   v2: <cgroup2 mount>/plimsoll/linux/<run>, with +memory +pids (+cpu) enabled
//       in subtree_control along the way
//   <run> = "<owner pid>-<owner start time in clock ticks>-<sequence>"
// The owner part lets a restarted process (Reconcile) tell a crashed owner's
// leftovers from a live owner's runs: a run dir whose owner pid is gone, or
// now belongs to a process with another start time, is killed and removed.
//
// Limits: memory = Limits::memory_bytes with no swap (v1 memory.memsw where
// the kernel accounts swap, v2 memory.swap.max = 0), pids.max = Limits::pids,
// CPU quota = Limits::cpus_millis per 100 ms period.
//
// Killing: v2 writes cgroup.kill; v1 freezes the cgroup, SIGKILLs every pid
// in cgroup.procs, thaws, and repeats until it is empty. A RunCgroup's
// destructor kills whatever is left and removes the directories (RAII).
//
// Thread-safety: a RunCgroup belongs to one thread; DetectCgroups and
// ReconcileCgroups may run anywhere.
//
// Usage:
//   auto layout = DetectCgroups();                       // once
//   auto cgroup = RunCgroup::Create(*layout, NextRunName(), limits);
//   PLIMSOLL_RETURN_IF_ERROR(cgroup->AddProcess(child));
//   ...                                                  // run
//   cgroup->Kill();                                      // on timeout
#ifndef PLIMSOLL_OS_CGROUP_H_
#define PLIMSOLL_OS_CGROUP_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "os/owner.h"
#include "plimsoll/error.h"
#include "plimsoll/limits.h"

namespace plimsoll::os {

inline constexpr const char* kCgroupParent = "plimsoll/linux";

enum class CgroupVersion { kV1, kV2 };

struct CgroupLayout {
  CgroupVersion version = CgroupVersion::kV1;
  // v1: the mount point of each hierarchy ("" when absent). v2: `unified`.
  std::string memory, pids, cpu, freezer, unified;
  bool swap_accounting = false;  // memory.memsw (v1) / memory.swap.max (v2) exists
  std::string parent = kCgroupParent;

  // The parent directories runs are created in, one per hierarchy used.
  std::vector<std::string> ParentDirectories() const;
  // "v1 (memory, pids, cpu, freezer)" or "v2".
  std::string Describe() const;
};

// Finds the hierarchies from /proc/self/mountinfo. v1 is used when its
// memory and pids controllers are mounted; else v2 when its root offers
// memory and pids. Fails (kFailedPrecondition) when neither does.
Expected<CgroupLayout> DetectCgroups();

// Creates the parent directories (and on v2 enables the controllers).
Status EnsureCgroupParents(const CgroupLayout& layout);

// "<pid>-<starttime>-<n>" for this process, n counting up from 1.
std::string NextRunName();

class RunCgroup {
 public:
  // Takes charge of existing run directories (Reconcile).
  static RunCgroup Adopt(CgroupLayout layout, std::vector<std::string> directories) {
    return RunCgroup(std::move(layout), std::move(directories));
  }

  // Creates the run's directories under the parents and writes the limits.
  // Any failure removes what was created.
  static Expected<RunCgroup> Create(const CgroupLayout& layout, const std::string& name,
                                    const Limits& limits);

  RunCgroup(RunCgroup&& other) noexcept;
  RunCgroup& operator=(RunCgroup&& other) noexcept;
  RunCgroup(const RunCgroup&) = delete;
  RunCgroup& operator=(const RunCgroup&) = delete;
  ~RunCgroup();  // Kill() then Remove(); errors are swallowed

  // Moves `pid` into the run's cgroup in every hierarchy.
  Status AddProcess(pid_t pid);
  // Every process in the cgroup (host pids).
  std::vector<pid_t> Processes() const;
  // SIGKILLs every process until the cgroup is empty or `budget` runs out.
  Status Kill(std::chrono::milliseconds budget = std::chrono::milliseconds(2000));
  // Removes the directories (retrying briefly while the kernel finishes
  // releasing exited tasks). Idempotent.
  Status Remove(std::chrono::milliseconds budget = std::chrono::milliseconds(2000));

  const std::vector<std::string>& directories() const { return directories_; }
  // The values the kernel holds for this cgroup, e.g. {"memory.max", "268435456"}.
  std::vector<std::pair<std::string, std::string>> ReadLimits() const;

 private:
  RunCgroup(CgroupLayout layout, std::vector<std::string> directories)
      : layout_(std::move(layout)), directories_(std::move(directories)) {}

  CgroupLayout layout_;
  std::vector<std::string> directories_;  // empty once removed or moved from
};

// Sends `signal` to `pid` only if it is a member of the cgroup directory
// `cgroup` (or of one below it): the pid is pinned with a pidfd first, its
// membership read from /proc/<pid>/cgroup after that, and the signal sent
// through the pidfd. A pid read from cgroup.procs whose process has exited
// since, and whose number a process elsewhere got, is therefore never
// signalled. Returns whether the signal was sent.
bool SignalCgroupMember(const std::string& cgroup, pid_t pid, int signal);

// Removes the cgroup `path` (e.g. "/plimsoll/oci/<id>", as a runtime's
// cgroupsPath names it) from every hierarchy under /sys/fs/cgroup: each v1
// controller mount and the v2 tree where it has controllers. For a cgroup
// a runtime made and should have removed itself: members still in it are
// SIGKILLed (through SignalCgroupMember, never a recycled pid), and the
// removal is retried until `deadline`. Links between hierarchies (cpu ->
// cpu,cpuacct) are skipped. Returns the directories still there.
std::vector<std::string> RemoveCgroupEverywhere(const std::string& path,
                                                std::chrono::steady_clock::time_point deadline);

// Kills and removes every run cgroup under the parents whose owner is gone
// (see the naming scheme above). Returns how many were removed.
Expected<int> ReconcileCgroups(const CgroupLayout& layout);

}  // namespace plimsoll::os

#endif  // PLIMSOLL_OS_CGROUP_H_
