// Admission: whether a run may start now (SPEC §4, docs/callers.md).
//
// Three limits, checked in this order, none of which ever waits:
//   1. the caller's own concurrency (CallerQuota::max_concurrent),
//   2. the daemon's global concurrency (AdmissionLimits::max_concurrent),
//   3. the caller's rate: a token bucket of rate_per_min runs per minute with
//      a burst of rate_per_min (a full minute's worth may start at once).
// A run either gets a Permit at once or is shed with a `capacity` refusal
// (resource_exhausted) naming the limit; a shed run spends no rate token.
// There is no queue: waiting would hold connections and memory for work that
// a client can retry (capacity is retryable on another daemon, SPEC §3).
//
// A Permit is held for the whole run and releases its slots when destroyed
// (or Release()d). Permits may outlive the controller.
//
// Usage:
//
//   admission::AdmissionController admission({.max_concurrent = 8});
//   ...per run, from any thread:
//   admission::ShedInfo shed;
//   auto permit = admission.TryAdmit({.name = caller.name,
//                                     .max_concurrent = caller.max_concurrent,
//                                     .rate_per_min = caller.rate_per_min}, &shed);
//   if (!permit.ok()) {
//     // shed.reason -> metrics label; shed.retry_after -> Retry-After header
//     return permit.error();
//   }
//   RunIt();  // *permit released at end of scope
//
// Thread-safety: every method may be called from any thread.
#ifndef PLIMSOLL_DAEMON_ADMISSION_ADMISSION_CONTROLLER_H_
#define PLIMSOLL_DAEMON_ADMISSION_ADMISSION_CONTROLLER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/admission/clock.h"
#include "plimsoll/error.h"

namespace plimsoll::admission {

struct AdmissionLimits {
  int64_t max_concurrent = 1;  // runs in flight across all callers; >= 1
};

// A caller's own limits (auth::Caller has the same fields). Absent = none of
// its own. Values below 1 shed every run (fail closed).
struct CallerQuota {
  std::string_view name{};
  std::optional<int64_t> max_concurrent{};
  std::optional<int64_t> rate_per_min{};
};

enum class ShedReason { kCallerConcurrency, kGlobalConcurrency, kCallerRate };

// "caller_concurrency", "global_concurrency", "caller_rate" (metric labels).
std::string_view ShedReasonName(ShedReason reason);

struct ShedInfo {
  ShedReason reason = ShedReason::kGlobalConcurrency;
  // When a retry may succeed: exact for the rate, zero (unknown) otherwise.
  Clock::Duration retry_after{};
};

// Counters since construction; shed_* by reason, for /metrics.
struct AdmissionStats {
  uint64_t admitted = 0;
  uint64_t shed_caller_concurrency = 0;
  uint64_t shed_global_concurrency = 0;
  uint64_t shed_caller_rate = 0;
  int64_t in_flight = 0;
};

class AdmissionController;

// Move-only proof of admission; releases its slots when destroyed.
class Permit {
 public:
  Permit() = default;
  Permit(Permit&& other) noexcept = default;
  Permit& operator=(Permit&& other) noexcept;
  Permit(const Permit&) = delete;
  Permit& operator=(const Permit&) = delete;
  ~Permit() { Release(); }

  bool held() const { return state_ != nullptr; }
  // Gives the slots back now; later calls do nothing.
  void Release();

 private:
  friend class AdmissionController;
  struct State;
  Permit(std::shared_ptr<State> state, std::string caller)
      : state_(std::move(state)), caller_(std::move(caller)) {}
  std::shared_ptr<State> state_;
  std::string caller_;
};

class AdmissionController {
 public:
  // Precondition: limits.max_concurrent >= 1 (values below are treated as 1).
  // `clock` must outlive the controller and its permits.
  explicit AdmissionController(AdmissionLimits limits, const Clock& clock = SystemClock());
  ~AdmissionController();
  AdmissionController(const AdmissionController&) = delete;
  AdmissionController& operator=(const AdmissionController&) = delete;

  // A permit now, or a capacity refusal (filling `shed` when non-null).
  Expected<Permit> TryAdmit(const CallerQuota& caller, ShedInfo* shed = nullptr);

  AdmissionStats Stats() const;
  // Runs in flight for one caller.
  int64_t InFlight(std::string_view caller) const;
  // How many callers currently have state (in flight or a non-full bucket).
  std::size_t TrackedCallers() const;

 private:
  std::shared_ptr<Permit::State> state_;
};

}  // namespace plimsoll::admission

#endif  // PLIMSOLL_DAEMON_ADMISSION_ADMISSION_CONTROLLER_H_
