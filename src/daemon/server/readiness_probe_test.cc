#include "daemon/server/readiness_probe.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <thread>
#include <vector>

namespace plimsoll::daemon {
namespace {

namespace asio = boost::asio;
using std::chrono::milliseconds;

// Runs `count` Check() calls at once on one event-loop thread and returns
// their results in order of completion.
std::vector<Status> CheckConcurrently(ReadinessProbe& probe, int count) {
  asio::io_context io_context;
  std::vector<Status> results;
  for (int i = 0; i < count; ++i) {
    asio::co_spawn(io_context, probe.Check(), [&](std::exception_ptr, Status status) {
      results.push_back(std::move(status));
    });
  }
  io_context.run();
  return results;
}

TEST(ReadinessProbe, ConcurrentChecksShareOnePreflight) {
  std::atomic<int> calls{0};
  ReadinessProbe probe(
      [&] {
        ++calls;
        std::this_thread::sleep_for(milliseconds(200));
        return Status::Ok();
      },
      {.freshness = milliseconds(0), .wait_bound = milliseconds(5000), .max_waiters = 256});
  std::vector<Status> results = CheckConcurrently(probe, 20);
  ASSERT_EQ(results.size(), 20u);
  for (const Status& result : results) EXPECT_TRUE(result.ok());
  EXPECT_EQ(calls.load(), 1);
}

TEST(ReadinessProbe, AFreshResultIsReusedAndAStaleOneIsNot) {
  std::atomic<int> calls{0};
  ReadinessProbe probe([&] { return ++calls, Status::Ok(); },
                       {.freshness = milliseconds(300), .wait_bound = milliseconds(5000)});
  CheckConcurrently(probe, 1);
  CheckConcurrently(probe, 1);
  EXPECT_EQ(calls.load(), 1);
  std::this_thread::sleep_for(milliseconds(350));
  CheckConcurrently(probe, 1);
  EXPECT_EQ(calls.load(), 2);
}

TEST(ReadinessProbe, AWaitIsBoundedAndAFailureIsPassedOn) {
  std::atomic<bool> slow{true};
  ReadinessProbe probe(
      [&]() -> Status {
        if (slow) std::this_thread::sleep_for(milliseconds(600));
        return Failure(ErrorCode::kFailedPrecondition, "the runtime binary is gone");
      },
      {.freshness = milliseconds(0), .wait_bound = milliseconds(100)});
  auto started = std::chrono::steady_clock::now();
  std::vector<Status> bounded = CheckConcurrently(probe, 3);
  EXPECT_LT(std::chrono::steady_clock::now() - started, milliseconds(500));
  ASSERT_EQ(bounded.size(), 3u);
  for (const Status& result : bounded) {
    ASSERT_FALSE(result.ok());
    EXPECT_NE(result.error().message().find("did not finish within 100 ms"), std::string::npos);
  }
  slow = false;
  std::this_thread::sleep_for(milliseconds(700));  // the slow one ends
  std::vector<Status> failed = CheckConcurrently(probe, 1);
  ASSERT_FALSE(failed[0].ok());
  EXPECT_EQ(failed[0].error().message(), "the runtime binary is gone");
}

TEST(ReadinessProbe, TooManyWaitersAreAnsweredAtOnce) {
  ReadinessProbe probe(
      [] {
        std::this_thread::sleep_for(milliseconds(300));
        return Status::Ok();
      },
      {.freshness = milliseconds(0), .wait_bound = milliseconds(5000), .max_waiters = 2});
  std::vector<Status> results = CheckConcurrently(probe, 4);
  ASSERT_EQ(results.size(), 4u);
  int refused = 0;
  for (const Status& result : results) refused += result.ok() ? 0 : 1;
  EXPECT_EQ(refused, 2);
}

}  // namespace
}  // namespace plimsoll::daemon
