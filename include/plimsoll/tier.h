// Isolation tiers (SPEC §1).
//
// Four tiers, weakest first: process < container < kernel < vm. Two non-tiers:
// `none` (execution disabled) and `unknown` (meets no floor). A tier is a
// value on every result; it rests on evidence the provider collected.
//
// Usage:
//
//   auto floor = plimsoll::ParseTier("container");   // std::optional<Tier>
//   if (!floor) { /* unknown tier name: refuse the request */ }
//   if (!plimsoll::MeetsFloor(provider_tier, *floor)) { /* refuse: isolation */ }
//   std::cout << plimsoll::TierName(plimsoll::Tier::kKernel);  // "kernel"
#ifndef PLIMSOLL_TIER_H_
#define PLIMSOLL_TIER_H_

#include <optional>
#include <string_view>

namespace plimsoll {

enum class Tier {
  kNone,       // execution disabled: runs nothing
  kUnknown,    // no evidence: meets no floor
  kProcess,    // no OS wall: a language/VM wall inside the daemon's process
  kContainer,  // namespaces, seccomp, cgroups, read-only root; host kernel shared
  kKernel,     // a separate kernel serves the guest's system calls
  kVm,         // hardware virtualisation (KVM)
};

// "none", "unknown", "process", "container", "kernel", "vm".
std::string_view TierName(Tier tier);

// Parses a tier name (exact, lowercase). Returns nullopt for anything else,
// including the empty string.
std::optional<Tier> ParseTier(std::string_view name);

// True for process, container, kernel and vm: tiers that can run code.
bool IsRunnableTier(Tier tier);

// Strict ordering of the four real tiers; `none` and `unknown` are below all
// of them and not ordered against each other. Returns <0, 0, >0.
int CompareTiers(Tier a, Tier b);

// Whether a sandbox of tier `actual` satisfies the floor `floor`. `none` and
// `unknown` meet no floor; a floor of `none` or `unknown` is not a floor a
// request can set (the validator refuses it), and is met by nothing.
bool MeetsFloor(Tier actual, Tier floor);

}  // namespace plimsoll

#endif  // PLIMSOLL_TIER_H_
