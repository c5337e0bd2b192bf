#include "daemon/admission/token_bucket.h"

#include <gtest/gtest.h>

namespace plimsoll::admission {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

TEST(TokenBucketTest, StartsFullThenRefillsAtTheRate) {
  FakeClock clock;
  TokenBucket bucket(60, 60);  // one per second, 60 at once
  for (int i = 0; i < 60; ++i) EXPECT_TRUE(bucket.TryTake(clock.Now())) << i;
  EXPECT_FALSE(bucket.TryTake(clock.Now()));
  EXPECT_EQ(bucket.WaitForNext(clock.Now()), seconds(1));

  clock.Advance(milliseconds(999));
  EXPECT_FALSE(bucket.TryTake(clock.Now()));
  EXPECT_EQ(bucket.WaitForNext(clock.Now()), milliseconds(1));
  clock.Advance(milliseconds(1));
  EXPECT_TRUE(bucket.TryTake(clock.Now()));
  EXPECT_FALSE(bucket.TryTake(clock.Now()));

  clock.Advance(seconds(10));
  for (int i = 0; i < 10; ++i) EXPECT_TRUE(bucket.TryTake(clock.Now())) << i;
  EXPECT_FALSE(bucket.TryTake(clock.Now()));
}

TEST(TokenBucketTest, NeverHoldsMoreThanTheBurst) {
  FakeClock clock;
  TokenBucket bucket(6, 3);  // one per 10 s, 3 at once
  clock.Advance(std::chrono::hours(5));
  EXPECT_TRUE(bucket.Full(clock.Now()));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(bucket.TryTake(clock.Now()));
  EXPECT_FALSE(bucket.TryTake(clock.Now()));
  EXPECT_FALSE(bucket.Full(clock.Now()));
  clock.Advance(seconds(30));
  EXPECT_TRUE(bucket.Full(clock.Now()));
}

TEST(TokenBucketTest, OverAMinuteTheCountMatchesTheRatePlusTheBurst) {
  FakeClock clock;
  TokenBucket bucket(120, 120);
  int taken = 0;
  for (int ms = 0; ms < 60'000; ms += 10) {
    while (bucket.TryTake(clock.Now())) ++taken;
    clock.Advance(milliseconds(10));
  }
  EXPECT_EQ(taken,
            120 + 120 - 1);  // the first burst, then 119 refills in 59.99 s (one every 0.5 s)
}

TEST(TokenBucketTest, ALowerLimitTakesEffectWithoutGrantingExtraRuns) {
  FakeClock clock;
  TokenBucket bucket(60, 60);
  for (int i = 0; i < 60; ++i) ASSERT_TRUE(bucket.TryTake(clock.Now()));
  bucket.Reconfigure(6, 6, clock.Now());
  EXPECT_FALSE(bucket.TryTake(clock.Now()));
  clock.Advance(seconds(10));
  EXPECT_TRUE(bucket.TryTake(clock.Now()));
}

}  // namespace
}  // namespace plimsoll::admission
