#include "providers/linux/user.h"

#include <gtest/gtest.h>

namespace plimsoll::linux_sandbox {
namespace {

TEST(UserMapTest, MapTextIsOneLinePerMapping) {
  EXPECT_EQ(MapText({}), "");
  EXPECT_EQ(MapText({{0, 1500000000, 1}, {1000, 1500001000, 1}}),
            "0 1500000000 1\n1000 1500001000 1\n");
}

TEST(UserMapTest, DefaultIdentitiesMapOnlyRootAndTheGuestToUnprivilegedHostIds) {
  Identities ids = DefaultIdentities();
  ASSERT_EQ(ids.uids.size(), 2u);
  EXPECT_EQ(MapText(ids.uids), MapText(ids.gids));
  for (const IdMapping& mapping : ids.uids) {
    EXPECT_NE(mapping.outside, 0u);
    EXPECT_GE(mapping.outside, 1'000'000u);  // far from real accounts
    EXPECT_EQ(mapping.count, 1u);
  }
  EXPECT_EQ(ids.uids[0].inside, 0u);
  EXPECT_EQ(ids.uids[1].inside, 1000u);
}

}  // namespace
}  // namespace plimsoll::linux_sandbox
