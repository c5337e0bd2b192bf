// User namespace identities of the linux sandbox (docs/linux-provider.md).
//
// Inside every sandbox two identities exist, each mapped to an unprivileged
// host identity that no host account uses:
//   inside 0    (the agent, "root" only inside)  -> host kHostRootId
//   inside 1000 (guest::kGuestUid, steps run as) -> host kHostGuestId
// Nothing else is mapped, so every other host identity (host root included)
// appears as the overflow id (65534) inside and grants nothing.
//
// The host side (the provider, root on the host) writes the maps for the
// child it cloned; the child then drops the host's supplementary groups
// itself (see DropHostGroups), which is why /proc/<pid>/setgroups stays
// "allow": denying it would freeze the host's supplementary groups into the
// sandbox. setgroups can only ever name the two mapped gids.
//
// Usage (parent, after clone, before releasing the child):
//   PLIMSOLL_RETURN_IF_ERROR(linux_sandbox::WriteIdMaps(pid, linux_sandbox::DefaultIdentities()));
#ifndef PLIMSOLL_PROVIDERS_LINUX_USER_H_
#define PLIMSOLL_PROVIDERS_LINUX_USER_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::linux_sandbox {

inline constexpr uint32_t kHostRootId = 1'500'000'000;   // host uid/gid of inside 0
inline constexpr uint32_t kHostGuestId = 1'500'001'000;  // host uid/gid of inside 1000

struct IdMapping {
  uint32_t inside = 0;
  uint32_t outside = 0;
  uint32_t count = 1;
};

struct Identities {
  std::vector<IdMapping> uids;
  std::vector<IdMapping> gids;
};

// inside 0 -> kHostRootId, inside 1000 -> kHostGuestId, for uids and gids.
Identities DefaultIdentities();

// The text /proc/<pid>/uid_map expects: one "inside outside count\n" per
// mapping. Empty for no mappings.
std::string MapText(const std::vector<IdMapping>& mappings);

// Writes uid_map and gid_map of `pid` (a child in a fresh user namespace
// that has not written them itself). Precondition: the caller may map these
// host ids (root on the host).
Status WriteIdMaps(pid_t pid, const Identities& identities);

// Child side, async-signal-safe: become inside-root (uid/gid 0) and drop the
// host's supplementary groups. Returns 0 or an errno; `*what` names the call.
int BecomeInsideRoot(const char** what);

}  // namespace plimsoll::linux_sandbox

#endif  // PLIMSOLL_PROVIDERS_LINUX_USER_H_
