#include "plimsoll/tier.h"

#include <array>

namespace plimsoll {
namespace {

struct TierName_ {
  Tier tier;
  std::string_view name;
};

constexpr std::array<TierName_, 6> kTierNames = {{
    {Tier::kNone, "none"},
    {Tier::kUnknown, "unknown"},
    {Tier::kProcess, "process"},
    {Tier::kContainer, "container"},
    {Tier::kKernel, "kernel"},
    {Tier::kVm, "vm"},
}};

// Strength of a runnable tier; 0 for none and unknown.
int Strength(Tier tier) {
  switch (tier) {
    case Tier::kProcess:
      return 1;
    case Tier::kContainer:
      return 2;
    case Tier::kKernel:
      return 3;
    case Tier::kVm:
      return 4;
    case Tier::kNone:
    case Tier::kUnknown:
      return 0;
  }
  return 0;
}

}  // namespace

std::string_view TierName(Tier tier) {
  for (const auto& entry : kTierNames) {
    if (entry.tier == tier) return entry.name;
  }
  return "unknown";
}

std::optional<Tier> ParseTier(std::string_view name) {
  for (const auto& entry : kTierNames) {
    if (entry.name == name) return entry.tier;
  }
  return std::nullopt;
}

bool IsRunnableTier(Tier tier) {
  return Strength(tier) > 0;
}

int CompareTiers(Tier a, Tier b) {
  return Strength(a) - Strength(b);
}

bool MeetsFloor(Tier actual, Tier floor) {
  if (!IsRunnableTier(actual) || !IsRunnableTier(floor)) return false;
  return Strength(actual) >= Strength(floor);
}

}  // namespace plimsoll
