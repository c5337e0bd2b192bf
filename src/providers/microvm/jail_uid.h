// The jailed VMM's uid: one per live VM, from a configured range, so that
// no two QEMUs can signal or trace each other (docs/microvm.md "The jailer").
//
// A lease is an exclusive flock(2) on <lock_dir>/<uid>, held for the VM's
// life by the provider process: the kernel drops it when the lease's fd is
// closed, so a crashed provider frees its uids by itself, and leases taken
// by several processes (a daemon, a CLI, tests) never collide. Releasing a
// lease unlinks its file before unlocking it; a leaser that locked a file
// already unlinked (its inode no longer at the path) tries again, so no two
// leases ever hold one uid and no file stays behind but a crashed
// provider's (harmless: reused by the next lease). A uid that
// some live process still runs as (a crashed provider's QEMU that Reconcile
// has not killed yet) is skipped too. gid = uid.
//
// Thread-safe. Usage:
//   auto lease = LeaseJailUid({"/run/plimsoll/microvm-uids", 900000, 1024});
//   chown(vm_directory, lease->uid(), lease->uid());
//   ...                                   // the VM lives
//   // ~UidLease: the uid is free again
#ifndef PLIMSOLL_PROVIDERS_MICROVM_JAIL_UID_H_
#define PLIMSOLL_PROVIDERS_MICROVM_JAIL_UID_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include "base/unique_fd.h"
#include "plimsoll/error.h"

namespace plimsoll::microvm {

// Default SANDBOX_MICROVM_JAIL_UID_BASE and the range's size: above the
// usual subordinate-id ranges (100000 + 65536 n for the first users) and far
// below the 2^31 tools trip on.
inline constexpr uid_t kDefaultJailUidBase = 900000;
inline constexpr uint32_t kJailUidCount = 1024;
inline constexpr const char* kDefaultUidLockDirectory = "/run/plimsoll/microvm-uids";

struct UidRange {
  std::string lock_directory = kDefaultUidLockDirectory;
  uid_t base = kDefaultJailUidBase;
  uint32_t count = kJailUidCount;
};

class UidLease {
 public:
  // `lock` holds the flock on `path`.
  UidLease(uid_t uid, std::string path, base::UniqueFd lock)
      : uid_(uid), path_(std::move(path)), lock_(std::move(lock)) {}
  UidLease(UidLease&& other) noexcept;
  UidLease& operator=(UidLease&& other) noexcept;
  ~UidLease();  // unlinks the file, then drops the lock
  uid_t uid() const { return uid_; }

 private:
  void Release();

  uid_t uid_;
  std::string path_;
  base::UniqueFd lock_;
};

// The uids of every live process (real, effective, saved, fs; zombies do
// not count), from /proc.
std::set<uid_t> UidsInUse();

// Ends every process that still runs as `uid` (any of its ids; zombies do
// not count): SIGKILL through a pidfd, the uid read again once the pidfd
// pinned the process (a recycled pid is never signalled), then waits until
// none is left. Ok when none is left by `deadline`. Only for a leased uid:
// each is one VM's, so whatever runs as it is that VM's.
Status EndProcessesOf(uid_t uid, std::chrono::steady_clock::time_point deadline);

// Removes the lease files of `range` that a crashed provider left (no
// holder, and no live process runs as their uid), as Release would have;
// a concurrent leaser that opened one meanwhile finds it stale and tries
// again (see above). Returns how many were removed. For Reconcile.
int RemoveStaleLeases(const UidRange& range);

// Keeps `lease` held until this process exits: for a uid whose processes
// could not be ended, so no other VM is given it (a restarted provider
// skips it too while any process runs as it: UidsInUse).
void HoldUntilExit(UidLease lease);

// The lowest uid of the range that is neither leased nor in `in_use`.
// kResourceExhausted when all are taken; kFailedPrecondition when the lock
// directory cannot be made (0700, root).
Expected<UidLease> LeaseJailUid(const UidRange& range, const std::set<uid_t>& in_use = UidsInUse());

}  // namespace plimsoll::microvm

#endif  // PLIMSOLL_PROVIDERS_MICROVM_JAIL_UID_H_
