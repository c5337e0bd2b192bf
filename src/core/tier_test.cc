#include "plimsoll/tier.h"

#include <gtest/gtest.h>

namespace plimsoll {
namespace {

TEST(TierTest, ParseAndPrintRoundTrip) {
  for (Tier tier :
       {Tier::kNone, Tier::kUnknown, Tier::kProcess, Tier::kContainer, Tier::kKernel, Tier::kVm}) {
    EXPECT_EQ(ParseTier(TierName(tier)), tier);
  }
  EXPECT_FALSE(ParseTier("").has_value());
  EXPECT_FALSE(ParseTier("VM").has_value());
  EXPECT_FALSE(ParseTier("hypervisor").has_value());
}

TEST(TierTest, OrderIsProcessContainerKernelVm) {
  EXPECT_LT(CompareTiers(Tier::kProcess, Tier::kContainer), 0);
  EXPECT_LT(CompareTiers(Tier::kContainer, Tier::kKernel), 0);
  EXPECT_LT(CompareTiers(Tier::kKernel, Tier::kVm), 0);
  EXPECT_EQ(CompareTiers(Tier::kKernel, Tier::kKernel), 0);
  EXPECT_LT(CompareTiers(Tier::kNone, Tier::kProcess), 0);
  EXPECT_LT(CompareTiers(Tier::kUnknown, Tier::kProcess), 0);
}

TEST(TierTest, MeetsFloor) {
  EXPECT_TRUE(MeetsFloor(Tier::kVm, Tier::kProcess));
  EXPECT_TRUE(MeetsFloor(Tier::kKernel, Tier::kKernel));
  EXPECT_FALSE(MeetsFloor(Tier::kContainer, Tier::kKernel));
  EXPECT_FALSE(MeetsFloor(Tier::kProcess, Tier::kVm));
  // none and unknown meet no floor, and are no floor.
  EXPECT_FALSE(MeetsFloor(Tier::kNone, Tier::kProcess));
  EXPECT_FALSE(MeetsFloor(Tier::kUnknown, Tier::kProcess));
  EXPECT_FALSE(MeetsFloor(Tier::kVm, Tier::kNone));
  EXPECT_FALSE(MeetsFloor(Tier::kVm, Tier::kUnknown));
}

TEST(TierTest, RunnableTiers) {
  EXPECT_FALSE(IsRunnableTier(Tier::kNone));
  EXPECT_FALSE(IsRunnableTier(Tier::kUnknown));
  EXPECT_TRUE(IsRunnableTier(Tier::kProcess));
  EXPECT_TRUE(IsRunnableTier(Tier::kVm));
}

}  // namespace
}  // namespace plimsoll
