#include "broker/call_budget.h"

#include <gtest/gtest.h>

namespace plimsoll::broker {
namespace {

Profile Capped(int64_t max_calls) {
  Profile profile;
  profile.name = "p";
  profile.max_calls = max_calls;
  profile.route_max_calls["POST /items"] = 2;
  return profile;
}

TEST(CallBudgetTest, RefusesPastMaxCalls) {
  CallBudget budget(Capped(kDefaultMaxCalls));
  int allowed = 0;
  int refused = 0;
  for (int i = 0; i < 1000; ++i) {
    CallRefusal refusal = budget.Take("GET /items/*");
    if (refusal == CallRefusal::kNone) {
      ++allowed;
    } else {
      EXPECT_EQ(refusal, CallRefusal::kMaxCalls);
      ++refused;
    }
  }
  EXPECT_EQ(allowed, kDefaultMaxCalls);
  EXPECT_EQ(refused, 1000 - kDefaultMaxCalls);
  EXPECT_EQ(budget.used(), kDefaultMaxCalls);
}

TEST(CallBudgetTest, RouteCapsApplyToTheirRouteOnly) {
  CallBudget budget(Capped(5));
  EXPECT_EQ(budget.Take("POST /items"), CallRefusal::kNone);
  EXPECT_EQ(budget.Take("POST /items"), CallRefusal::kNone);
  EXPECT_EQ(budget.Take("POST /items"), CallRefusal::kRouteMaxCalls);
  EXPECT_EQ(budget.used(), 2);  // the refused call spent nothing
  EXPECT_EQ(budget.Take("GET /items"), CallRefusal::kNone);
  EXPECT_EQ(budget.Take("GET /items"), CallRefusal::kNone);
  EXPECT_EQ(budget.Take("GET /items"), CallRefusal::kNone);
  EXPECT_EQ(budget.Take("GET /items"), CallRefusal::kMaxCalls);
  EXPECT_EQ(budget.Take("POST /items"), CallRefusal::kMaxCalls);  // the profile's cap comes first
}

}  // namespace
}  // namespace plimsoll::broker
