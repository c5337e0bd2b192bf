// The circuit breaker of one grant profile's upstream (SPEC §8).
//
// When the upstream answers 429 or 503 the circuit opens for the time its
// Retry-After asks (integer seconds or an HTTP date; at most 30 s; 5 s when
// absent or unparseable). While it is open, calls are refused without
// reaching the upstream (trace reason "circuit_open"). When the wait is over
// the next call is admitted as the one probe: the broker sends the profile's
// health_check route first when it has one (RecordHealthCheck), else lets the
// call itself be the probe (RecordProbeAnswer). Success closes the circuit;
// failure opens it again. Other calls are refused while the probe is out; a
// probe that never reports back is replaced after kProbeLease.
//
// The breaker is shared by every run of a profile, so no guest may decide a
// probe for the others (issue 39):
//   - a probe's missing answer is a failure only when the probe had the
//     daemon's own allowance, kProbeDeadline; when the guest's (or its
//     run's) earlier deadline cut it short, the broker calls AbandonProbe
//     and the next call probes at once;
//   - a call that is the probe fails it only with the upstream's own
//     back-off (429, 503) or no answer; a 500 from a route the guest chose
//     says nothing about the upstream's load. Only the operator's
//     health_check is held to "2xx or it failed".
//
// Time comes from an injected BreakerClock, so tests need no sleeps.
//
// Usage:
//
//   CircuitBreaker breaker(BreakerClock::System());
//   switch (breaker.Admit()) {
//     case CircuitBreaker::Admission::kRefuse: return Refused(CallRefusal::kCircuitOpen);
//     case CircuitBreaker::Admission::kProbe:
//       if (profile.health_check) {
//         auto health = Send(*profile.health_check, std::min(deadline, now + kProbeDeadline));
//         if (cut short by the guest's deadline) breaker.AbandonProbe();
//         else breaker.RecordHealthCheck(health.status, health.retry_after);
//         if (breaker.state() != CircuitBreaker::State::kClosed) return Refused(kCircuitOpen);
//       }
//       [[fallthrough]];
//     case CircuitBreaker::Admission::kCall: {
//       auto answer = Send(call);  // status 0 when no answer came
//       if (!probe) breaker.RecordAnswer(answer.status, answer.retry_after);
//       else if (cut short by the guest's deadline) breaker.AbandonProbe();
//       else breaker.RecordProbeAnswer(answer.status, answer.retry_after);
//     }
//   }
//
// Thread-safe.
#ifndef PLIMSOLL_BROKER_CIRCUIT_BREAKER_H_
#define PLIMSOLL_BROKER_CIRCUIT_BREAKER_H_

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>

namespace plimsoll::broker {

inline constexpr std::chrono::seconds kMaxRetryAfter{30};
inline constexpr std::chrono::seconds kDefaultRetryAfter{5};
inline constexpr std::chrono::seconds kProbeLease{30};
// The daemon's own deadline for a probe: a probe that got no answer counts
// as the upstream's failure only when it was given at least this long.
inline constexpr std::chrono::seconds kProbeDeadline{10};

// Where the breaker reads the time: a steady clock for its waits, and the
// wall clock to turn a Retry-After date into a wait.
struct BreakerClock {
  std::function<std::chrono::steady_clock::time_point()> now;
  std::function<std::chrono::system_clock::time_point()> wall_now;

  static BreakerClock System();
};

// The wait a Retry-After header value asks for: "120" (seconds) or an HTTP
// date ("Sun, 06 Nov 1994 08:49:37 GMT", IMF-fixdate), clamped to
// [0, kMaxRetryAfter]; kDefaultRetryAfter when absent or unparseable.
std::chrono::seconds RetryAfterWait(std::optional<std::string_view> retry_after,
                                    std::chrono::system_clock::time_point wall_now);

class CircuitBreaker {
 public:
  enum class State { kClosed, kOpen, kProbing };
  enum class Admission {
    kCall,    // go ahead
    kProbe,   // go ahead as the probe (health check first when there is one)
    kRefuse,  // refuse without reaching the upstream
  };

  explicit CircuitBreaker(BreakerClock clock);

  Admission Admit();

  // The answer to a call admitted with kCall: 429 and 503 open the circuit
  // (or lengthen its wait); nothing else changes anything, so a call that
  // was admitted before the circuit opened never decides the probe.
  void RecordAnswer(int status, std::optional<std::string_view> retry_after);

  // The answer to the call that was the probe (admitted with kProbe, no
  // health_check): `status` is the HTTP status, 0 when no answer came within
  // the daemon's own allowance, kProbeDeadline (a call the guest's deadline
  // cut short is AbandonProbe instead). 0, 429 and 503 reopen the circuit;
  // anything else (a 500 on the guest's route included) closes it. When the
  // probe's lease has passed meanwhile, it counts as RecordAnswer.
  void RecordProbeAnswer(int status, std::optional<std::string_view> retry_after);

  // The answer to the health_check probe: a 2xx closes the circuit, anything
  // else (0, no answer within kProbeDeadline, included) reopens it.
  void RecordHealthCheck(int status, std::optional<std::string_view> retry_after);

  // The probe ended without the upstream's verdict (the guest's own deadline
  // cut it short, or it was never sent): the circuit stays open and the next
  // call may probe at once, without a new wait. No effect unless probing.
  void AbandonProbe();

  State state() const;
  // How long until a probe may go; zero unless open.
  std::chrono::steady_clock::duration RetryIn() const;

 private:
  // Precondition: mutex_ held.
  void OpenLocked(std::optional<std::string_view> retry_after);

  BreakerClock clock_;
  mutable std::mutex mutex_;
  State state_ = State::kClosed;                         // guarded by mutex_
  std::chrono::steady_clock::time_point until_;          // kOpen: when a probe may go
  std::chrono::steady_clock::time_point probe_started_;  // kProbing
};

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_CIRCUIT_BREAKER_H_
