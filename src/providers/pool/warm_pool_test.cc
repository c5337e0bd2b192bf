#include "providers/pool/warm_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

namespace plimsoll {
namespace {

using namespace std::chrono_literals;

// A sandbox that remembers the generation it was started for.
struct FakeSandbox {
  uint64_t generation = 0;
  std::atomic<int>* destroyed = nullptr;
  bool Healthy() const { return true; }
  Status Destroy(Deadline) {
    ++*destroyed;
    return Status::Ok();
  }
};

struct PoolFixture {
  std::atomic<int> started{0};
  std::atomic<int> destroyed{0};
  pool::Destroyer<FakeSandbox> destroyer{8};
  pool::WarmPool<FakeSandbox> pool{
      2,
      [this](uint64_t generation) -> Expected<std::unique_ptr<FakeSandbox>> {
        ++started;
        return std::make_unique<FakeSandbox>(FakeSandbox{generation, &destroyed});
      },
      [this](std::unique_ptr<FakeSandbox> sandbox) { destroyer.Add(std::move(sandbox)); }};

  // Waits (bounded) until the pool has `count` ready.
  bool WaitForReady(size_t count) {
    auto give_up = std::chrono::steady_clock::now() + 10s;
    while (pool.stats().ready < count) {
      if (std::chrono::steady_clock::now() > give_up) return false;
      std::this_thread::sleep_for(5ms);
    }
    return true;
  }
};

TEST(WarmPoolTest, HandsOutOnlySandboxesOfTheServingGeneration) {
  PoolFixture fixture;
  fixture.pool.Enable(1);
  ASSERT_TRUE(fixture.WaitForReady(2));
  EXPECT_EQ(fixture.pool.Take(2), nullptr);  // asked for another generation
  auto taken = fixture.pool.Take(1);
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(taken->generation, 1u);
}

// Issue 13: a pool filled under configuration A never serves after a
// switch to B (before, it kept handing A's sandboxes out).
TEST(WarmPoolTest, ServingANewGenerationDestroysTheIdleSandboxesOfTheOld) {
  PoolFixture fixture;
  fixture.pool.Enable(1);
  ASSERT_TRUE(fixture.WaitForReady(2));
  fixture.pool.Enable(2);
  fixture.destroyer.Drain();
  EXPECT_GE(fixture.destroyed, 2);
  EXPECT_EQ(fixture.pool.Take(1), nullptr);
  ASSERT_TRUE(fixture.WaitForReady(2));
  auto taken = fixture.pool.Take(2);
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(taken->generation, 2u);
  EXPECT_EQ(fixture.pool.stats().generation, 2u);
}

TEST(WarmPoolTest, EvidenceOfAGenerationServesIt) {
  PoolFixture fixture;
  Evidence evidence;
  evidence.tier = Tier::kContainer;
  evidence.generation = 3;
  evidence.checks.push_back({"root_read_only", true, "observed"});
  fixture.pool.FollowEvidence(evidence);
  ASSERT_TRUE(fixture.WaitForReady(1));
  EXPECT_NE(fixture.pool.Take(3), nullptr);
  evidence.checks.push_back({"seccomp", false, "off"});
  fixture.pool.FollowEvidence(evidence);
  EXPECT_FALSE(fixture.pool.stats().enabled);
  EXPECT_EQ(fixture.pool.Take(3), nullptr);
}

// A run may hold the refill its take calls for until it answered; an
// empty pool refills regardless.
TEST(WarmPoolTest, AHeldRefillWaitsForItsReleaseUnlessThePoolIsEmpty) {
  PoolFixture fixture;
  fixture.pool.Enable(1);
  ASSERT_TRUE(fixture.WaitForReady(2));
  auto first = fixture.pool.Take(1, /*hold_refill=*/true);
  ASSERT_NE(first, nullptr);
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(fixture.started, 2) << "refilled while a run held it";
  fixture.pool.ReleaseRefill();
  ASSERT_TRUE(fixture.WaitForReady(2));
  EXPECT_EQ(fixture.started, 3);
  // Both taken under holds: the pool is empty, so it refills at once.
  auto second = fixture.pool.Take(1, true);
  auto third = fixture.pool.Take(1, true);
  ASSERT_NE(second, nullptr);
  ASSERT_NE(third, nullptr);
  ASSERT_TRUE(fixture.WaitForReady(1));
  fixture.pool.ReleaseRefill();
  fixture.pool.ReleaseRefill();
  ASSERT_TRUE(fixture.WaitForReady(2));
  // Released with a delay: no refill before it has passed.
  auto fourth = fixture.pool.Take(1, true);
  ASSERT_NE(fourth, nullptr);
  int before = fixture.started;
  fixture.pool.ReleaseRefill(std::chrono::milliseconds(300));
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(fixture.started, before) << "refilled before the delay passed";
  ASSERT_TRUE(fixture.WaitForReady(2));
  EXPECT_EQ(fixture.started, before + 1);
}

}  // namespace
}  // namespace plimsoll
