#include "daemon/server/evidence_monitor.h"

#include <utility>

namespace plimsoll::daemon {
namespace {

// A check that passed shows at least the startup tier. `none` and `unknown`
// are not ordered, so a provider that proved `none` (disabled) stays
// confirmed only at `none`.
bool KeepsStartupTier(Tier current, Tier startup) {
  if (current == startup) return true;
  return IsRunnableTier(startup) && MeetsFloor(current, startup);
}

std::string TierText(Tier tier) {
  return std::string(TierName(tier));
}

// Error messages are sentences; the log line adds its own full stop.
std::string WithoutFullStop(std::string text) {
  while (!text.empty() && text.back() == '.') text.pop_back();
  return text;
}

}  // namespace

std::string_view EvidenceCheckResultName(EvidenceCheckResult result) {
  switch (result) {
    case EvidenceCheckResult::kConfirmed:
      return "confirmed";
    case EvidenceCheckResult::kLowered:
      return "lowered";
    case EvidenceCheckResult::kFailed:
      return "failed";
  }
  return "failed";
}

EvidenceMonitor::EvidenceMonitor(Sandbox& sandbox, Log& log, Options options, Observer observer)
    : sandbox_(sandbox), log_(log), options_(options), observer_(std::move(observer)) {
  status_.interval = options_.interval;
}

EvidenceMonitor::~EvidenceMonitor() {
  Stop();
}

Status EvidenceMonitor::Start() {
  std::optional<Evidence> startup = sandbox_.evidence();
  EvidenceStatus snapshot;
  {
    std::lock_guard lock(mutex_);
    status_.last_check = std::chrono::system_clock::now();
    if (startup && startup->AllChecksPassed()) {
      status_.startup_tier = startup->tier;
      status_.current_tier = startup->tier;
      status_.confirmed = true;
      status_.last_confirmed = status_.last_check;
    } else {
      status_.lost_reason = "the sandbox was not confirmed at startup";
    }
    snapshot = status_;
  }
  if (observer_) observer_(snapshot, std::nullopt);
  if (options_.interval.count() <= 0) return Status::Ok();

  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  int error = pthread_attr_setstacksize(&attributes, options_.stack_bytes);
  pthread_t thread;
  if (error == 0) error = pthread_create(&thread, &attributes, &EvidenceMonitor::ThreadMain, this);
  pthread_attr_destroy(&attributes);
  if (error != 0) return SystemError("Cannot start the evidence monitor thread", error);
  std::lock_guard lock(mutex_);
  thread_ = thread;
  return Status::Ok();
}

void EvidenceMonitor::Stop() {
  std::optional<pthread_t> thread;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    thread.swap(thread_);
  }
  wake_.notify_all();
  if (thread) pthread_join(*thread, nullptr);
}

void* EvidenceMonitor::ThreadMain(void* monitor) {
  static_cast<EvidenceMonitor*>(monitor)->Loop();
  return nullptr;
}

void EvidenceMonitor::Loop() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, options_.interval, [this] { return stopping_; })) {
    lock.unlock();
    CheckNow();
    lock.lock();
  }
}

EvidenceCheckResult EvidenceMonitor::CheckNow() {
  std::lock_guard check_lock(check_mutex_);
  Tier startup_tier = status().startup_tier;
  Expected<Evidence> evidence = sandbox_.CollectEvidence(options_.budget);
  EvidenceCheckResult result;
  Tier tier = Tier::kUnknown;
  std::string why;
  if (!evidence.ok()) {
    result = EvidenceCheckResult::kFailed;
    why = WithoutFullStop(evidence.error().message());
  } else if (KeepsStartupTier(evidence->tier, startup_tier)) {
    result = EvidenceCheckResult::kConfirmed;
    tier = evidence->tier;
  } else {
    result = EvidenceCheckResult::kLowered;
    tier = evidence->tier;
    why = "the smoke test now shows tier " + TierText(tier) + ", below the " +
          TierText(startup_tier) + " proven at startup";
  }
  EvidenceStatus snapshot = Record(result, tier, std::move(why));
  if (observer_) observer_(snapshot, result);
  return result;
}

EvidenceStatus EvidenceMonitor::Record(EvidenceCheckResult result, Tier tier, std::string why) {
  std::lock_guard lock(mutex_);
  const bool was_confirmed = status_.confirmed;
  const std::string previous_reason = status_.lost_reason;
  status_.last_check = std::chrono::system_clock::now();
  status_.last_result = result;
  status_.current_tier = tier;
  ++status_.checks;
  status_.confirmed = result == EvidenceCheckResult::kConfirmed;
  status_.lost_reason = status_.confirmed ? std::string() : std::move(why);
  if (status_.confirmed) status_.last_confirmed = status_.last_check;

  if (was_confirmed && !status_.confirmed) {
    log_.Warning("The sandbox evidence is lost: " + status_.lost_reason +
                 ". Requests whose floor is above tier " + TierText(tier) +
                 " are refused until a check confirms the " + TierText(status_.startup_tier) +
                 " tier again.");
  } else if (!was_confirmed && status_.confirmed) {
    log_.Info("The sandbox evidence recovered: tier " + TierText(tier) + " confirmed again.");
  } else if (!status_.confirmed && status_.lost_reason != previous_reason) {
    log_.Warning("The sandbox evidence is still lost: " + status_.lost_reason + ".");
  }
  return status_;
}

EvidenceStatus EvidenceMonitor::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

}  // namespace plimsoll::daemon
