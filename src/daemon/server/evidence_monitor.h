// The evidence monitor: re-checks the sandbox's wall while the daemon serves
// (docs/daemon.md, "Evidence monitor").
//
// Startup proves a tier (DaemonMain collects the provider's evidence before
// serving). A wall can decay afterwards: a runtime removed, a cgroup
// controller unmounted, a kernel module unloaded. Every `interval` a thread of
// its own (not an I/O thread, not a run worker) runs
// Sandbox::CollectEvidence(budget) again. The Sandbox keeps what it finds:
// a failed check withdraws the evidence (every run then re-collects it first
// and is refused `environment` while it fails), a lower tier lowers it, and
// Sandbox::Run checks each request's floor against the current evidence right
// before dispatch (`isolation` refusals). This class remembers the tier proven
// at startup, classifies each check, logs the transitions, and keeps the state
// that /metrics, /readyz and describe show.
//
// Each check is one of:
//   confirmed - it passed and shows at least the startup tier;
//   lowered   - it passed but shows a lower tier;
//   failed    - the preflight or the smoke test failed.
// The state is "confirmed" until a check is lowered or failed ("lost",
// logged as a warning) and again after a confirmed check ("recovered", info).
//
// Thread-safety: status() and CheckNow() may be called from any thread;
// Start() and Stop() from one controlling thread. The observer is called on
// the thread that made the check, outside the monitor's lock.
//
// Usage:
//   EvidenceMonitor monitor(sandbox, log, {.interval = 60s, .budget = 30s},
//                           [&](const EvidenceStatus& status, auto result) { ... });
//   PLIMSOLL_RETURN_IF_ERROR(monitor.Start());   // after the startup evidence
//   ...
//   monitor.Stop();                               // prompt: wakes the thread
#ifndef PLIMSOLL_DAEMON_SERVER_EVIDENCE_MONITOR_H_
#define PLIMSOLL_DAEMON_SERVER_EVIDENCE_MONITOR_H_

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "daemon/log.h"
#include "plimsoll/sandbox.h"

namespace plimsoll::daemon {

enum class EvidenceCheckResult { kConfirmed, kLowered, kFailed };

// "confirmed", "lowered", "failed" (metric labels, describe).
std::string_view EvidenceCheckResultName(EvidenceCheckResult result);

struct EvidenceStatus {
  using TimePoint = std::chrono::system_clock::time_point;

  std::chrono::milliseconds interval{0};  // 0: no background checks
  Tier startup_tier = Tier::kUnknown;     // proven before serving
  Tier current_tier = Tier::kUnknown;     // what the last check showed (unknown: failed)
  // The last check (or the startup evidence) proved at least startup_tier.
  bool confirmed = false;
  // Why the evidence is lost; "" while confirmed.
  std::string lost_reason;
  std::optional<EvidenceCheckResult> last_result;  // none before the first background check
  TimePoint last_check{};                          // startup counts as a check
  std::optional<TimePoint> last_confirmed;
  uint64_t checks = 0;  // background checks made
};

class EvidenceMonitor {
 public:
  struct Options {
    std::chrono::milliseconds interval{60'000};  // 0: no thread; CheckNow() still works
    std::chrono::milliseconds budget{30'000};    // bound of one preflight + smoke test
    size_t stack_bytes = size_t{8} << 20;        // the embedded engine's smoke test needs >= 4 MiB
  };
  // After Start() and after every check; `result` is empty for the startup state.
  using Observer =
      std::function<void(const EvidenceStatus& status, std::optional<EvidenceCheckResult> result)>;

  // `sandbox` and `log` must outlive the monitor.
  EvidenceMonitor(Sandbox& sandbox, Log& log, Options options, Observer observer = {});
  ~EvidenceMonitor();  // Stop()
  EvidenceMonitor(const EvidenceMonitor&) = delete;
  EvidenceMonitor& operator=(const EvidenceMonitor&) = delete;

  // Takes the sandbox's current evidence as the startup proof (confirmed when
  // present with every check passed) and, when the interval is not 0, starts
  // the thread. An error when the thread cannot be created. Call once.
  Status Start();
  // Wakes the thread and joins it; a check in progress finishes first
  // (bounded by the budget). Idempotent.
  void Stop();

  // One check on the calling thread (what the thread does every interval).
  EvidenceCheckResult CheckNow();

  EvidenceStatus status() const;

 private:
  static void* ThreadMain(void* monitor);
  void Loop();
  // Records a check's outcome and logs a transition; returns the new status.
  EvidenceStatus Record(EvidenceCheckResult result, Tier tier, std::string why);

  Sandbox& sandbox_;
  Log& log_;
  const Options options_;
  const Observer observer_;

  mutable std::mutex mutex_;  // guards everything below
  std::condition_variable wake_;
  bool stopping_ = false;
  std::optional<pthread_t> thread_;
  EvidenceStatus status_;
  std::mutex check_mutex_;  // one check at a time (thread and CheckNow)
};

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_EVIDENCE_MONITOR_H_
