// The daemon's counters, rendered in the Prometheus text format on the
// metrics listener (SPEC §4 `GET /metrics`).
//
// This first slice counts answers by status, refusals by reason, runs by
// provider / tier / outcome, and runs in flight. Later slices add the run
// duration histogram, shed counts and evidence state; every family is
// declared in Render() so its HELP/TYPE lines always appear.
//
// Thread-safety: every method may be called from any thread.
//
// Usage:
//   metrics.CountAnswer(answer.status, answer.not_dispatched);
//   std::string text = metrics.Render();
#ifndef PLIMSOLL_DAEMON_SERVER_METRICS_H_
#define PLIMSOLL_DAEMON_SERVER_METRICS_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "plimsoll/error.h"
#include "plimsoll/result.h"

namespace plimsoll::daemon {

class Metrics {
 public:
  void CountAnswer(unsigned http_status, std::optional<NotDispatched> refusal);
  // One finished run: outcome "exited" (any exit code), "timed_out", or
  // "failed" (an error after dispatch: no result).
  void CountRun(std::string_view provider, Tier tier, std::string_view outcome);
  // A run shed by admission; `reason` is admission::ShedReasonName.
  void CountShed(std::string_view reason);
  void RunStarted() { ++in_flight_; }
  void RunFinished() { --in_flight_; }
  int64_t runs_in_flight() const { return in_flight_.load(); }

  std::string Render() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t> answers_;   // label text -> count
  std::map<std::string, uint64_t> refusals_;  // label text -> count
  std::map<std::string, uint64_t> runs_;      // label text -> count
  std::map<std::string, uint64_t> shed_;      // label text -> count
  std::atomic<int64_t> in_flight_{0};
};

// A Prometheus label value with \, " and newline escaped.
std::string EscapeLabelValue(std::string_view value);

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_METRICS_H_
