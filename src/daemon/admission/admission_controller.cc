#include "daemon/admission/admission_controller.h"

#include <algorithm>
#include <mutex>
#include <unordered_map>

#include "daemon/admission/token_bucket.h"

namespace plimsoll::admission {

struct CallerState {
  int64_t in_flight = 0;
  std::optional<TokenBucket> bucket;
};

struct Permit::State {
  State(AdmissionLimits limits_in, const Clock& clock_in) : limits(limits_in), clock(clock_in) {}

  // Drops state that carries no information: nothing in flight and a full
  // (or no) bucket, so memory follows active callers. Precondition: lock held.
  void Forget(std::unordered_map<std::string, CallerState>::iterator entry, Clock::TimePoint now) {
    const CallerState& caller = entry->second;
    if (caller.in_flight == 0 && (!caller.bucket || caller.bucket->Full(now))) {
      callers.erase(entry);
    }
  }

  const AdmissionLimits limits;
  const Clock& clock;
  mutable std::mutex mutex;
  std::unordered_map<std::string, CallerState> callers;
  int64_t in_flight = 0;
  uint64_t since_sweep = 0;
  AdmissionStats stats;
};

namespace {

constexpr uint64_t kSweepEvery = 1024;

std::string Plural(int64_t count, std::string_view noun) {
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

Error Shed(ShedInfo* out, ShedReason reason, Clock::Duration retry_after, std::string message) {
  if (out != nullptr) *out = ShedInfo{reason, retry_after};
  return Refusal(NotDispatched::kCapacity, std::move(message));
}

}  // namespace

std::string_view ShedReasonName(ShedReason reason) {
  switch (reason) {
    case ShedReason::kCallerConcurrency:
      return "caller_concurrency";
    case ShedReason::kGlobalConcurrency:
      return "global_concurrency";
    case ShedReason::kCallerRate:
      return "caller_rate";
  }
  return "global_concurrency";
}

Permit& Permit::operator=(Permit&& other) noexcept {
  if (this != &other) {
    Release();
    state_ = std::move(other.state_);
    caller_ = std::move(other.caller_);
  }
  return *this;
}

void Permit::Release() {
  if (state_ == nullptr) return;
  std::shared_ptr<State> state = std::move(state_);
  state_ = nullptr;
  std::lock_guard lock(state->mutex);
  --state->in_flight;
  --state->stats.in_flight;
  auto entry = state->callers.find(caller_);
  if (entry != state->callers.end()) {
    --entry->second.in_flight;
    state->Forget(entry, state->clock.Now());
  }
}

AdmissionController::AdmissionController(AdmissionLimits limits, const Clock& clock)
    : state_(std::make_shared<Permit::State>(
          AdmissionLimits{std::max<int64_t>(limits.max_concurrent, 1)}, clock)) {}

AdmissionController::~AdmissionController() = default;

Expected<Permit> AdmissionController::TryAdmit(const CallerQuota& quota, ShedInfo* shed) {
  Permit::State& state = *state_;
  std::string name(quota.name);
  std::lock_guard lock(state.mutex);
  Clock::TimePoint now = state.clock.Now();

  if (++state.since_sweep >= kSweepEvery) {
    state.since_sweep = 0;
    for (auto entry = state.callers.begin(); entry != state.callers.end();) {
      auto next = std::next(entry);
      state.Forget(entry, now);
      entry = next;
    }
  }

  // A named iterator, not a structured binding: the lambdas below capture it
  // (Clang 14, which builds the sanitized tree, cannot capture a binding).
  const auto emplaced = state.callers.try_emplace(name);
  const auto entry = emplaced.first;
  const bool inserted = emplaced.second;
  CallerState& caller = entry->second;
  auto refuse = [&](ShedReason reason, Clock::Duration retry_after, std::string message) {
    switch (reason) {
      case ShedReason::kCallerConcurrency:
        ++state.stats.shed_caller_concurrency;
        break;
      case ShedReason::kGlobalConcurrency:
        ++state.stats.shed_global_concurrency;
        break;
      case ShedReason::kCallerRate:
        ++state.stats.shed_caller_rate;
        break;
    }
    state.Forget(entry, now);
    return Shed(shed, reason, retry_after, std::move(message));
  };

  if (quota.max_concurrent && caller.in_flight >= *quota.max_concurrent) {
    return refuse(ShedReason::kCallerConcurrency, Clock::Duration::zero(),
                  "The caller \"" + name + "\" is at its limit of " +
                      Plural(std::max<int64_t>(*quota.max_concurrent, 0), "concurrent run") +
                      "; try again when one finishes.");
  }
  if (state.in_flight >= state.limits.max_concurrent) {
    return refuse(ShedReason::kGlobalConcurrency, Clock::Duration::zero(),
                  "The daemon is at its limit of " +
                      Plural(state.limits.max_concurrent, "concurrent run") +
                      " across all callers; try again shortly or on another daemon.");
  }
  if (quota.rate_per_min) {
    if (*quota.rate_per_min < 1) {
      return refuse(ShedReason::kCallerRate, Clock::Duration::zero(),
                    "The caller \"" + name + "\" has a rate limit of 0 runs per minute.");
    }
    if (!caller.bucket) {
      caller.bucket.emplace(*quota.rate_per_min, *quota.rate_per_min);
    } else if (caller.bucket->rate_per_min() != *quota.rate_per_min) {
      caller.bucket->Reconfigure(*quota.rate_per_min, *quota.rate_per_min, now);
    }
    if (!caller.bucket->TryTake(now)) {
      Clock::Duration wait = caller.bucket->WaitForNext(now);
      auto seconds = std::chrono::ceil<std::chrono::seconds>(wait).count();
      return refuse(ShedReason::kCallerRate, wait,
                    "The caller \"" + name + "\" is over its rate of " +
                        Plural(*quota.rate_per_min, "run") + " per minute; try again in " +
                        Plural(std::max<int64_t>(seconds, 1), "second") + ".");
    }
  } else {
    caller.bucket.reset();  // the limit was lifted
  }

  ++caller.in_flight;
  ++state.in_flight;
  ++state.stats.in_flight;
  ++state.stats.admitted;
  return Permit(state_, std::move(name));
}

AdmissionStats AdmissionController::Stats() const {
  std::lock_guard lock(state_->mutex);
  return state_->stats;
}

int64_t AdmissionController::InFlight(std::string_view caller) const {
  std::lock_guard lock(state_->mutex);
  auto entry = state_->callers.find(std::string(caller));
  return entry == state_->callers.end() ? 0 : entry->second.in_flight;
}

std::size_t AdmissionController::TrackedCallers() const {
  std::lock_guard lock(state_->mutex);
  return state_->callers.size();
}

}  // namespace plimsoll::admission
