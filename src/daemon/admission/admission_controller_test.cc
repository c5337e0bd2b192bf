#include "daemon/admission/admission_controller.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

namespace plimsoll::admission {
namespace {

using std::chrono::seconds;

void ExpectShed(const Expected<Permit>& permit, std::string_view words) {
  ASSERT_FALSE(permit.ok());
  EXPECT_EQ(permit.error().code(), ErrorCode::kResourceExhausted);
  EXPECT_EQ(NotDispatchedReason(permit.error()), NotDispatched::kCapacity);
  EXPECT_NE(permit.error().message().find(words), std::string::npos) << permit.error().message();
}

TEST(AdmissionTest, GlobalConcurrencyShedsAndPermitsReleaseOnDestruction) {
  FakeClock clock;
  AdmissionController admission({.max_concurrent = 2}, clock);
  auto a = admission.TryAdmit({.name = "a"});
  auto b = admission.TryAdmit({.name = "b"});
  ASSERT_TRUE(a.ok() && b.ok());
  ShedInfo shed;
  ExpectShed(admission.TryAdmit({.name = "c"}, &shed), "daemon is at its limit of 2 concurrent");
  EXPECT_EQ(shed.reason, ShedReason::kGlobalConcurrency);
  EXPECT_EQ(admission.Stats().in_flight, 2);
  {
    Permit released = std::move(*a);
    EXPECT_FALSE(a->held());
    EXPECT_TRUE(released.held());
  }
  EXPECT_EQ(admission.Stats().in_flight, 1);
  EXPECT_TRUE(admission.TryAdmit({.name = "c"}).ok());  // and released again at once
  AdmissionStats stats = admission.Stats();
  EXPECT_EQ(stats.admitted, 3u);
  EXPECT_EQ(stats.shed_global_concurrency, 1u);
  EXPECT_EQ(stats.in_flight, 1);
}

TEST(AdmissionTest, PerCallerConcurrencyIsolatesCallers) {
  FakeClock clock;
  AdmissionController admission({.max_concurrent = 10}, clock);
  CallerQuota ci{.name = "ci", .max_concurrent = 1};
  auto first = admission.TryAdmit(ci);
  ASSERT_TRUE(first.ok());
  ShedInfo shed;
  ExpectShed(admission.TryAdmit(ci, &shed), "caller \"ci\" is at its limit of 1 concurrent run;");
  EXPECT_EQ(shed.reason, ShedReason::kCallerConcurrency);
  EXPECT_TRUE(admission.TryAdmit({.name = "other", .max_concurrent = 1}).ok());
  EXPECT_EQ(admission.InFlight("ci"), 1);
  first->Release();
  first->Release();  // a second release does nothing
  EXPECT_EQ(admission.InFlight("ci"), 0);
  EXPECT_TRUE(admission.TryAdmit(ci).ok());
  EXPECT_EQ(admission.Stats().shed_caller_concurrency, 1u);
}

TEST(AdmissionTest, RateIsATokenBucketPerCaller) {
  FakeClock clock;
  AdmissionController admission({.max_concurrent = 100}, clock);
  CallerQuota ci{.name = "ci", .rate_per_min = 3};
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(admission.TryAdmit(ci).ok()) << i;  // burst = rate
  ShedInfo shed;
  ExpectShed(admission.TryAdmit(ci, &shed), "over its rate of 3 runs per minute; try again in 20");
  EXPECT_EQ(shed.reason, ShedReason::kCallerRate);
  EXPECT_EQ(shed.retry_after, seconds(20));
  EXPECT_TRUE(admission.TryAdmit({.name = "other", .rate_per_min = 3}).ok());  // isolated

  clock.Advance(seconds(19));
  EXPECT_FALSE(admission.TryAdmit(ci).ok());
  clock.Advance(seconds(1));
  EXPECT_TRUE(admission.TryAdmit(ci).ok());
  EXPECT_FALSE(admission.TryAdmit(ci).ok());
  clock.Advance(seconds(60));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(admission.TryAdmit(ci).ok()) << i;
  EXPECT_EQ(admission.Stats().shed_caller_rate, 3u);
}

TEST(AdmissionTest, AShedRunSpendsNoRateToken) {
  FakeClock clock;
  AdmissionController admission({.max_concurrent = 1}, clock);
  CallerQuota ci{.name = "ci", .rate_per_min = 2};
  auto held = admission.TryAdmit(ci);
  ASSERT_TRUE(held.ok());
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(admission.TryAdmit(ci).ok());  // global limit
  held->Release();
  EXPECT_TRUE(admission.TryAdmit(ci).ok());  // the second token of the burst is still there
  EXPECT_FALSE(admission.TryAdmit(ci).ok());
}

TEST(AdmissionTest, IdleCallersAreForgotten) {
  FakeClock clock;
  AdmissionController admission({.max_concurrent = 4}, clock);
  {
    auto permit = admission.TryAdmit({.name = "a", .rate_per_min = 60});
    ASSERT_TRUE(permit.ok());
    EXPECT_EQ(admission.TrackedCallers(), 1u);
  }
  EXPECT_EQ(admission.TrackedCallers(), 1u);  // its bucket is not full yet
  clock.Advance(seconds(2));
  { auto permit = admission.TryAdmit({.name = "b"}); }
  EXPECT_EQ(admission.TrackedCallers(), 1u);  // b is forgotten on release; a until a sweep
  for (int i = 0; i < 1100; ++i) (void)admission.TryAdmit({.name = "c"});  // periodic sweep
  EXPECT_EQ(admission.TrackedCallers(), 0u);
}

TEST(AdmissionTest, PermitsMayOutliveTheController) {
  std::optional<Permit> permit;
  {
    AdmissionController admission({.max_concurrent = 1});
    auto admitted = admission.TryAdmit({.name = "a"});
    ASSERT_TRUE(admitted.ok());
    permit.emplace(std::move(*admitted));
  }
  permit.reset();  // must not touch freed memory (ASan checks)
}

TEST(AdmissionTest, ZeroLimitsFailClosed) {
  AdmissionController admission({.max_concurrent = 0});  // treated as 1
  EXPECT_FALSE(admission.TryAdmit({.name = "a", .max_concurrent = 0}).ok());
  EXPECT_FALSE(admission.TryAdmit({.name = "a", .rate_per_min = 0}).ok());
}

TEST(AdmissionTest, ManyThreadsNeverExceedTheLimits) {
  constexpr int kGlobal = 5;
  constexpr int kPerCaller = 2;
  AdmissionController admission({.max_concurrent = kGlobal});
  std::atomic<int> global{0};
  std::atomic<int> max_global{0};
  std::array<std::atomic<int>, 4> per_caller{};
  std::atomic<int> max_per_caller{0};
  std::atomic<bool> broken{false};
  const std::array<std::string, 4> names = {"a", "b", "c", "d"};

  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 4000; ++i) {
        int which = (t + i) % 4;
        auto permit = admission.TryAdmit({.name = names[which], .max_concurrent = kPerCaller});
        if (!permit.ok()) {
          if (NotDispatchedReason(permit.error()) != NotDispatched::kCapacity) broken = true;
          continue;
        }
        int now_global = ++global;
        int now_caller = ++per_caller[which];
        int seen = max_global.load();
        while (now_global > seen && !max_global.compare_exchange_weak(seen, now_global)) {
        }
        seen = max_per_caller.load();
        while (now_caller > seen && !max_per_caller.compare_exchange_weak(seen, now_caller)) {
        }
        std::this_thread::yield();
        --per_caller[which];
        --global;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_FALSE(broken.load());
  EXPECT_LE(max_global.load(), kGlobal);
  EXPECT_LE(max_per_caller.load(), kPerCaller);
  AdmissionStats stats = admission.Stats();
  EXPECT_EQ(stats.in_flight, 0);
  EXPECT_EQ(stats.admitted + stats.shed_caller_concurrency + stats.shed_global_concurrency +
                stats.shed_caller_rate,
            8u * 4000u);
  EXPECT_EQ(admission.TrackedCallers(), 0u);
}

}  // namespace
}  // namespace plimsoll::admission
