// The lifeline's Stop() is on every report's path (main.cc stops it before
// the report leaves), so it must return at once, not when the watcher's poll
// times out or its thread exits. The hang-up path is tested on the real agent (agent_test.cc,
// AProviderThatHangsUpMidRunEndsTheJobAtOnce).
#include "guest/agent/lifeline.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

namespace plimsoll::guest::agent {
namespace {

TEST(Lifeline, StopReturnsAtOnceWhileTheProviderIsStillThere) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  std::vector<double> stops_ms;
  for (int i = 0; i < 10; ++i) {
    Lifeline lifeline(fds[0], SweepScope::kDescendants, 99);
    // A job's worth of time, so the watcher is inside its poll.
    std::this_thread::sleep_for(std::chrono::milliseconds(3 + i));
    auto start = std::chrono::steady_clock::now();
    lifeline.Stop();
    stops_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  std::sort(stops_ms.begin(), stops_ms.end());
  // A watcher waited out by its 50 ms poll took 35-47 ms here.
  EXPECT_LT(stops_ms[stops_ms.size() / 2], 5.0);
  EXPECT_LT(stops_ms.back(), 30.0);
  close(fds[0]);
  close(fds[1]);
}

TEST(Lifeline, AHangUpAfterStopIsTheProviderLeavingNotACrash) {
  // Stop() does not wait for the watcher (the report leaves at once), so
  // the provider may read the report and hang up while the watcher is
  // still winding down: that hang-up must not end the agent (this test
  // process would exit 99).
  for (int i = 0; i < 20; ++i) {
    int fds[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    {
      Lifeline lifeline(fds[0], SweepScope::kDescendants, 99);
      if (i % 2 == 1) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      lifeline.Stop();
      close(fds[1]);  // the provider read the report and left
      std::this_thread::sleep_for(std::chrono::milliseconds(i % 3));
    }  // joins the watcher
    close(fds[0]);
  }
  SUCCEED() << "twenty hang-ups after Stop(), and the process is still here";
}

TEST(Lifeline, DataThatIsNotAHangUpNeitherEndsTheJobNorDelaysStop) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  ASSERT_EQ(write(fds[1], "x", 1), 1);
  Lifeline lifeline(fds[0], SweepScope::kDescendants, 99);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  auto start = std::chrono::steady_clock::now();
  lifeline.Stop();  // the process is still here: data alone never ended it
  using Milliseconds = std::chrono::duration<double, std::milli>;
  EXPECT_LT(Milliseconds(std::chrono::steady_clock::now() - start).count(), 30.0);
  close(fds[0]);
  close(fds[1]);
}

}  // namespace
}  // namespace plimsoll::guest::agent
