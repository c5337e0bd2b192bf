#include "broker/circuit_breaker.h"

#include <gtest/gtest.h>

#include <chrono>
#include <optional>
#include <string_view>

namespace plimsoll::broker {
namespace {

using namespace std::chrono_literals;
using Admission = CircuitBreaker::Admission;
using State = CircuitBreaker::State;

// A hand-driven clock: tests move time, nothing sleeps.
struct FakeClock {
  std::chrono::steady_clock::time_point steady{std::chrono::hours(1000)};
  // Sun, 06 Nov 1994 08:49:37 GMT
  std::chrono::system_clock::time_point wall{std::chrono::seconds(784111777)};

  BreakerClock AsBreakerClock() {
    return BreakerClock{[this] { return steady; }, [this] { return wall; }};
  }
  void Advance(std::chrono::steady_clock::duration by) {
    steady += by;
    wall += std::chrono::duration_cast<std::chrono::system_clock::duration>(by);
  }
};

TEST(RetryAfterWaitTest, ReadsSecondsAndDatesWithinLimits) {
  FakeClock clock;
  EXPECT_EQ(RetryAfterWait(std::nullopt, clock.wall), 5s);
  EXPECT_EQ(RetryAfterWait("0", clock.wall), 0s);
  EXPECT_EQ(RetryAfterWait("7", clock.wall), 7s);
  EXPECT_EQ(RetryAfterWait(" 12 ", clock.wall), 12s);
  EXPECT_EQ(RetryAfterWait("30", clock.wall), 30s);
  EXPECT_EQ(RetryAfterWait("31", clock.wall), 30s);
  EXPECT_EQ(RetryAfterWait("86400", clock.wall), 30s);
  EXPECT_EQ(RetryAfterWait("99999999999999999999999", clock.wall), 30s);
  EXPECT_EQ(RetryAfterWait("Sun, 06 Nov 1994 08:49:47 GMT", clock.wall), 10s);
  EXPECT_EQ(RetryAfterWait("Sun, 06 Nov 1994 09:49:37 GMT", clock.wall), 30s);
  EXPECT_EQ(RetryAfterWait("Sun, 06 Nov 1994 08:49:00 GMT", clock.wall), 0s);  // past
  EXPECT_EQ(RetryAfterWait("Mon, 07 Nov 1994 08:49:37 GMT", clock.wall), 30s);
  for (std::string_view bad : {"", "-1", "1.5", "soon", "10s", "Sun, 06 Nov 1994 08:49:47 UTC",
                               "Sunday, 06-Nov-94 08:49:47 GMT", "Sun Nov  6 08:49:47 1994",
                               "Sun, 31 Feb 1994 08:49:47 GMT", "Sun, 06 Nov 1994 25:49:47 GMT",
                               "Xyz, 06 Nov 1994 08:49:47 GMT", "Sun, 06 Foo 1994 08:49:47 GMT"}) {
    EXPECT_EQ(RetryAfterWait(bad, clock.wall), 5s) << bad;
  }
}

TEST(CircuitBreakerTest, StaysClosedOnOrdinaryAnswers) {
  FakeClock clock;
  CircuitBreaker breaker(clock.AsBreakerClock());
  for (int status : {200, 201, 301, 404, 500, 502, 0}) {
    EXPECT_EQ(breaker.Admit(), Admission::kCall);
    breaker.RecordAnswer(status, std::nullopt);
    EXPECT_EQ(breaker.state(), State::kClosed) << status;
  }
  EXPECT_EQ(breaker.RetryIn(), std::chrono::steady_clock::duration::zero());
}

TEST(CircuitBreakerTest, OpensOn429ForRetryAfterThenProbesWithTheCall) {
  FakeClock clock;
  CircuitBreaker breaker(clock.AsBreakerClock());
  ASSERT_EQ(breaker.Admit(), Admission::kCall);
  breaker.RecordAnswer(429, "3");
  EXPECT_EQ(breaker.state(), State::kOpen);
  EXPECT_EQ(breaker.RetryIn(), 3s);
  EXPECT_EQ(breaker.Admit(), Admission::kRefuse);
  clock.Advance(2999ms);
  EXPECT_EQ(breaker.Admit(), Admission::kRefuse);
  clock.Advance(1ms);
  EXPECT_EQ(breaker.Admit(), Admission::kProbe);
  EXPECT_EQ(breaker.state(), State::kProbing);
  EXPECT_EQ(breaker.Admit(), Admission::kRefuse);  // one probe at a time
  breaker.RecordProbeAnswer(404, std::nullopt);    // the upstream answered: it is back
  EXPECT_EQ(breaker.state(), State::kClosed);
  EXPECT_EQ(breaker.Admit(), Admission::kCall);
}

TEST(CircuitBreakerTest, OpensOn503AndAProbeReopensOnlyOnBackoffOrNoAnswer) {
  FakeClock clock;
  CircuitBreaker breaker(clock.AsBreakerClock());
  breaker.RecordAnswer(503, std::nullopt);  // no Retry-After: 5 s
  EXPECT_EQ(breaker.RetryIn(), 5s);
  clock.Advance(5s);
  ASSERT_EQ(breaker.Admit(), Admission::kProbe);
  breaker.RecordProbeAnswer(503, "Sun, 06 Nov 1994 08:49:59 GMT");  // 17 s after 08:49:42
  EXPECT_EQ(breaker.state(), State::kOpen);
  EXPECT_EQ(breaker.RetryIn(), 17s);
  clock.Advance(17s);
  ASSERT_EQ(breaker.Admit(), Admission::kProbe);
  breaker.RecordProbeAnswer(0, std::nullopt);  // no answer within the daemon's allowance
  EXPECT_EQ(breaker.state(), State::kOpen);
  EXPECT_EQ(breaker.RetryIn(), 5s);
  clock.Advance(5s);
  ASSERT_EQ(breaker.Admit(), Admission::kProbe);
  // A 500 on the route the probing guest chose is an answer, not a back-off
  // (issue 39: a guest calling such a route held the circuit open).
  breaker.RecordProbeAnswer(500, std::nullopt);
  EXPECT_EQ(breaker.state(), State::kClosed);
}

// Issue 39: the probe's fate is not the guest's to decide.
TEST(CircuitBreakerTest, AnAbandonedProbeLetsTheNextCallProbeAtOnce) {
  FakeClock clock;
  CircuitBreaker breaker(clock.AsBreakerClock());
  breaker.RecordAnswer(429, "4");
  clock.Advance(4s);
  ASSERT_EQ(breaker.Admit(), Admission::kProbe);
  EXPECT_EQ(breaker.Admit(), Admission::kRefuse);
  breaker.AbandonProbe();  // the guest's own deadline cut it short
  EXPECT_EQ(breaker.state(), State::kOpen);
  EXPECT_EQ(breaker.RetryIn(), std::chrono::steady_clock::duration::zero());
  ASSERT_EQ(breaker.Admit(), Admission::kProbe);  // no new wait
  breaker.RecordHealthCheck(200, std::nullopt);
  EXPECT_EQ(breaker.state(), State::kClosed);
  breaker.AbandonProbe();  // not probing: nothing changes
  EXPECT_EQ(breaker.state(), State::kClosed);
  EXPECT_EQ(breaker.Admit(), Admission::kCall);
}

TEST(CircuitBreakerTest, ACallAdmittedBeforeTheCircuitOpenedNeverDecidesTheProbe) {
  FakeClock clock;
  CircuitBreaker breaker(clock.AsBreakerClock());
  ASSERT_EQ(breaker.Admit(), Admission::kCall);  // a slow call, still out
  breaker.RecordAnswer(503, "1");                // another call's answer
  clock.Advance(1s);
  ASSERT_EQ(breaker.Admit(), Admission::kProbe);
  for (int status : {0, 500, 502, 200}) {
    breaker.RecordAnswer(status, std::nullopt);  // the slow call comes back
    EXPECT_EQ(breaker.state(), State::kProbing) << status;
  }
  breaker.RecordAnswer(429, "2");  // but a back-off is a back-off
  EXPECT_EQ(breaker.state(), State::kOpen);
  EXPECT_EQ(breaker.RetryIn(), 2s);
}

TEST(CircuitBreakerTest, HonoursAtMostThirtySeconds) {
  FakeClock clock;
  CircuitBreaker breaker(clock.AsBreakerClock());
  breaker.RecordAnswer(429, "3600");
  EXPECT_EQ(breaker.RetryIn(), 30s);
  clock.Advance(30s);
  EXPECT_EQ(breaker.Admit(), Admission::kProbe);
}

TEST(CircuitBreakerTest, AnotherBackoffWhileOpenNeverShortensTheWait) {
  FakeClock clock;
  CircuitBreaker breaker(clock.AsBreakerClock());
  breaker.RecordAnswer(429, "20");
  clock.Advance(1s);
  breaker.RecordAnswer(429, "2");  // a call admitted before the circuit opened
  EXPECT_EQ(breaker.RetryIn(), 19s);
  breaker.RecordAnswer(429, "25");
  EXPECT_EQ(breaker.RetryIn(), 25s);
  breaker.RecordAnswer(200, std::nullopt);  // a late success does not close it
  EXPECT_EQ(breaker.state(), State::kOpen);
}

TEST(CircuitBreakerTest, TheHealthCheckDecidesWhenThereIsOne) {
  FakeClock clock;
  CircuitBreaker breaker(clock.AsBreakerClock());
  breaker.RecordAnswer(429, "1");
  clock.Advance(1s);
  ASSERT_EQ(breaker.Admit(), Admission::kProbe);
  breaker.RecordHealthCheck(404, std::nullopt);  // a health check must say 2xx
  EXPECT_EQ(breaker.state(), State::kOpen);
  EXPECT_EQ(breaker.RetryIn(), 5s);
  clock.Advance(5s);
  ASSERT_EQ(breaker.Admit(), Admission::kProbe);
  breaker.RecordHealthCheck(429, "2");
  EXPECT_EQ(breaker.RetryIn(), 2s);
  clock.Advance(2s);
  ASSERT_EQ(breaker.Admit(), Admission::kProbe);
  breaker.RecordHealthCheck(204, std::nullopt);
  EXPECT_EQ(breaker.state(), State::kClosed);
  EXPECT_EQ(breaker.Admit(), Admission::kCall);
}

TEST(CircuitBreakerTest, ALostProbeIsReplacedAfterTheLease) {
  FakeClock clock;
  CircuitBreaker breaker(clock.AsBreakerClock());
  breaker.RecordAnswer(503, "0");
  ASSERT_EQ(breaker.Admit(), Admission::kProbe);
  clock.Advance(kProbeLease - 1s);
  EXPECT_EQ(breaker.Admit(), Admission::kRefuse);
  clock.Advance(1s);
  EXPECT_EQ(breaker.Admit(), Admission::kProbe);
}

TEST(CircuitBreakerTest, TheSystemClockWorks) {
  CircuitBreaker breaker(BreakerClock::System());
  EXPECT_EQ(breaker.Admit(), Admission::kCall);
  breaker.RecordAnswer(429, "0");
  EXPECT_EQ(breaker.Admit(), Admission::kProbe);
}

}  // namespace
}  // namespace plimsoll::broker
