#include "client/request_id.h"

#include <gtest/gtest.h>

#include <set>

namespace plimsoll::client {
namespace {

TEST(RequestIdTest, IdsAre32LowercaseHexDigitsAndFresh) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    Expected<std::string> id = NewRequestId();
    ASSERT_TRUE(id.ok()) << id.error().ToString();
    EXPECT_TRUE(IsWellFormedRequestId(*id)) << *id;
    EXPECT_TRUE(seen.insert(*id).second) << "repeated " << *id;
  }
}

TEST(RequestIdTest, WellFormedMeansExactly32LowercaseHex) {
  EXPECT_TRUE(IsWellFormedRequestId("0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(IsWellFormedRequestId("0123456789ABCDEF0123456789abcdef"));
  EXPECT_FALSE(IsWellFormedRequestId("0123456789abcdef0123456789abcde"));
  EXPECT_FALSE(IsWellFormedRequestId("0123456789abcdef0123456789abcdefa"));
  EXPECT_FALSE(IsWellFormedRequestId("0123456789abcdef0123456789abcdeg"));
  EXPECT_FALSE(IsWellFormedRequestId(""));
}

}  // namespace
}  // namespace plimsoll::client
