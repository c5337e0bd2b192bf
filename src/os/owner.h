// Owner tags: what a provider leaves on the host while it works (the run
// cgroups of the linux and microvm providers, the microvm provider's VM
// directories, the oci provider's container ids and bundles) is named after
// the process that made it, "<pid>-<start time in clock ticks>-...". A
// Reconcile removes only what a dead owner left: a pid that is gone, or that
// now belongs to another process (another start time). What a live process
// on the same host uses (a second daemon with the default state directory, a
// test) is never touched.
//
// Thread-safety: every function may be called from any thread.
//
// Usage:
//   std::string name = "vm-" + OwnerTag() + "-" + random_hex;
//   ...
//   if (LeftByDeadOwner(name.substr(3))) remove(name);   // in Reconcile
#ifndef PLIMSOLL_OS_OWNER_H_
#define PLIMSOLL_OS_OWNER_H_

#include <sys/types.h>

#include <string>
#include <string_view>

namespace plimsoll::os {

// The start time (clock ticks since boot) of `pid`, or -1 when it is gone.
long long ProcessStartTime(pid_t pid);

// "<pid>-<start time>" of this process (computed once).
const std::string& OwnerTag();

// Whether `name` begins with an owner tag ("<digits>-<digits>", then the end
// or '-') whose process still runs. A name without a tag has no live owner.
bool OwnerAlive(std::string_view name);

// What Reconcile may remove: a name (its prefix, e.g. "vm-", already cut)
// without a live owner. Names from before owner tags have none.
inline bool LeftByDeadOwner(std::string_view name) {
  return !OwnerAlive(name);
}

}  // namespace plimsoll::os

#endif  // PLIMSOLL_OS_OWNER_H_
