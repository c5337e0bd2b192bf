// The daemon's metrics, rendered in the Prometheus text format (0.0.4) on
// the metrics listener (SPEC §4 `GET /metrics`; docs/daemon.md "Metrics"
// lists every family).
//
// Families: answers by status, refusals by reason, runs by provider / tier /
// outcome, runs in flight, admission sheds by limit, the run duration
// histogram, run-ceiling hits, the evidence state (tier, confirmed, checks by
// result, last confirmation time), open connections by listener,
// connections refused by a cap, /readyz
// preflights, audit write failures and the provider's
// warm pool (size, ready, enabled, and its counters) when it has one. Every family is
// declared in Render(), so its HELP and TYPE lines appear before the first
// sample does.
//
// Thread-safety: every method may be called from any thread.
//
// Usage:
//   metrics.CountAnswer(answer.status, answer.not_dispatched);
//   metrics.ObserveRunDuration(elapsed);
//   std::string text = metrics.Render();
#ifndef PLIMSOLL_DAEMON_SERVER_METRICS_H_
#define PLIMSOLL_DAEMON_SERVER_METRICS_H_

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "plimsoll/error.h"
#include "plimsoll/provider.h"
#include "plimsoll/result.h"

namespace plimsoll::daemon {

class Metrics {
 public:
  // Upper bounds (seconds) of the run duration histogram's buckets, from
  // 1 ms to the default run ceiling; +Inf is implied.
  static constexpr std::array<double, 17> kRunDurationBuckets = {
      0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};

  Metrics();

  void CountAnswer(unsigned http_status, std::optional<NotDispatched> refusal);
  // One finished run: outcome "exited" (any exit code), "timed_out", "failed"
  // (an error after dispatch: no result) or "ceiling_exceeded" (the daemon
  // answered before the provider returned).
  void CountRun(std::string_view provider, Tier tier, std::string_view outcome);
  // A run shed by admission; `reason` is admission::ShedReasonName.
  void CountShed(std::string_view reason);
  // A granted run's broker calls (SPEC §8): `allowed` went upstream,
  // `denied` were refused by the broker. `profile` is an operator-chosen
  // grant profile name (a bounded set), never guest text.
  void CountBrokerCalls(std::string_view profile, int64_t allowed, int64_t denied);
  void RunStarted() { ++in_flight_; }
  void RunFinished() { --in_flight_; }
  int64_t runs_in_flight() const { return in_flight_.load(); }

  // The time one dispatched run spent inside the Sandbox (refusals that ran
  // nothing are not observed).
  void ObserveRunDuration(std::chrono::nanoseconds elapsed);
  // A run answered `deadline_exceeded` by the daemon's own bound.
  void CountCeilingHit();

  // The evidence monitor's state (evidence_monitor.h).
  void SetEvidence(Tier tier, bool confirmed,
                   std::optional<std::chrono::system_clock::time_point> last_confirmed);
  // One background evidence check; `result` is EvidenceCheckResultName.
  void CountEvidenceCheck(std::string_view result);

  // A connection refused by a cap on open connections; `reason` is
  // http::RejectionName ("global", "peer").
  void CountConnectionRejected(std::string_view reason);
  // One provider preflight run for /readyz (readiness_probe.h): "passed" or
  // "failed".
  void CountReadinessCheck(std::string_view result);

  // An audit line that could not be written (audit.h).
  void CountAuditFailure();

  // Where Render() reads the provider's warm pool (e.g. from
  // Sandbox::Describe()); unset or returning nothing: the pool families carry
  // no samples. Called at every scrape.
  void SetPoolSource(std::function<std::optional<PoolState>()> source);
  // Where Render() reads how many connections each listener ("api",
  // "metrics") holds open now (its ConnectionLimiter). Unset: the family
  // carries no samples. Called at every scrape.
  void SetOpenConnectionsSource(std::function<std::map<std::string, uint64_t>()> source);

  std::string Render() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, uint64_t> answers_;                              // label text -> count
  std::map<std::string, uint64_t> refusals_;                             // label text -> count
  std::map<std::string, uint64_t> runs_;                                 // label text -> count
  std::map<std::string, uint64_t> shed_;                                 // label text -> count
  std::map<std::string, uint64_t> broker_calls_;                         // label text -> count
  std::map<std::string, uint64_t> evidence_checks_;                      // label text -> count
  std::map<std::string, uint64_t> connections_rejected_;                 // label text -> count
  std::map<std::string, uint64_t> readiness_checks_;                     // label text -> count
  std::array<uint64_t, kRunDurationBuckets.size()> duration_buckets_{};  // not cumulative
  uint64_t duration_count_ = 0;
  double duration_sum_seconds_ = 0;
  uint64_t ceiling_hits_ = 0;
  uint64_t audit_failures_ = 0;
  Tier evidence_tier_ = Tier::kUnknown;
  bool evidence_confirmed_ = false;
  int64_t evidence_last_confirmed_unix_ = 0;  // 0: never
  std::atomic<int64_t> in_flight_{0};
  std::function<std::optional<PoolState>()> pool_source_;
  std::function<std::map<std::string, uint64_t>()> open_connections_source_;
};

// A Prometheus label value with \, " and newline escaped.
std::string EscapeLabelValue(std::string_view value);

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_METRICS_H_
