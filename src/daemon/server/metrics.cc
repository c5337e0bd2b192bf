#include "daemon/server/metrics.h"

#include <charconv>
#include <sstream>

namespace plimsoll::daemon {
namespace {

constexpr std::array<Tier, 6> kEvidenceTiers = {Tier::kNone,      Tier::kUnknown, Tier::kProcess,
                                                Tier::kContainer, Tier::kKernel,  Tier::kVm};
constexpr std::array<std::string_view, 3> kEvidenceResults = {"confirmed", "lowered", "failed"};

void Declare(std::ostringstream& out, std::string_view name, std::string_view type,
             std::string_view help) {
  out << "# HELP " << name << ' ' << help << "\n# TYPE " << name << ' ' << type << '\n';
}

void RenderFamily(std::ostringstream& out, std::string_view name, std::string_view type,
                  std::string_view help, const std::map<std::string, uint64_t>& samples) {
  Declare(out, name, type, help);
  for (const auto& [labels, value] : samples) out << name << '{' << labels << "} " << value << '\n';
}

// The shortest text that reads back as `value` ("0.001", "2.5", "300").
std::string FormatDouble(double value) {
  std::array<char, 64> buffer;
  auto [end, error] = std::to_chars(buffer.data(), buffer.data() + buffer.size(), value);
  if (error != std::errc()) return "NaN";
  return std::string(buffer.data(), end);
}

std::string ReasonLabel(std::string_view reason) {
  return "reason=\"" + EscapeLabelValue(reason) + "\"";
}

}  // namespace

std::string EscapeLabelValue(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

Metrics::Metrics() {
  // Every result has a series from the start, so rates work from the first scrape.
  for (std::string_view result : kEvidenceResults) {
    evidence_checks_["result=\"" + std::string(result) + "\""] = 0;
  }
  for (std::string_view reason : {"global", "peer"}) connections_rejected_[ReasonLabel(reason)] = 0;
}

void Metrics::CountAnswer(unsigned http_status, std::optional<NotDispatched> refusal) {
  std::lock_guard lock(mutex_);
  ++answers_["status=\"" + std::to_string(http_status) + "\""];
  if (refusal) ++refusals_[ReasonLabel(NotDispatchedName(*refusal))];
}

void Metrics::CountRun(std::string_view provider, Tier tier, std::string_view outcome) {
  std::string labels = "provider=\"" + EscapeLabelValue(provider) + "\",isolation=\"" +
                       std::string(TierName(tier)) + "\",outcome=\"" + EscapeLabelValue(outcome) +
                       "\"";
  std::lock_guard lock(mutex_);
  ++runs_[labels];
}

void Metrics::CountShed(std::string_view reason) {
  std::lock_guard lock(mutex_);
  ++shed_[ReasonLabel(reason)];
}

void Metrics::CountBrokerCalls(std::string_view profile, int64_t allowed, int64_t denied) {
  std::lock_guard lock(mutex_);
  const std::string label = "profile=\"" + EscapeLabelValue(profile) + "\",outcome=";
  if (allowed > 0) broker_calls_[label + "\"allowed\""] += static_cast<uint64_t>(allowed);
  if (denied > 0) broker_calls_[label + "\"denied\""] += static_cast<uint64_t>(denied);
}

void Metrics::ObserveRunDuration(std::chrono::nanoseconds elapsed) {
  double seconds = std::chrono::duration<double>(elapsed).count();
  if (seconds < 0) seconds = 0;
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < kRunDurationBuckets.size(); ++i) {
    if (seconds <= kRunDurationBuckets[i]) {
      ++duration_buckets_[i];
      break;
    }
  }
  ++duration_count_;
  duration_sum_seconds_ += seconds;
}

void Metrics::CountCeilingHit() {
  std::lock_guard lock(mutex_);
  ++ceiling_hits_;
}

void Metrics::SetEvidence(Tier tier, bool confirmed,
                          std::optional<std::chrono::system_clock::time_point> last_confirmed) {
  std::lock_guard lock(mutex_);
  evidence_tier_ = tier;
  evidence_confirmed_ = confirmed;
  if (last_confirmed) {
    evidence_last_confirmed_unix_ =
        std::chrono::duration_cast<std::chrono::seconds>(last_confirmed->time_since_epoch())
            .count();
  }
}

void Metrics::CountEvidenceCheck(std::string_view result) {
  std::lock_guard lock(mutex_);
  ++evidence_checks_["result=\"" + EscapeLabelValue(result) + "\""];
}

void Metrics::CountConnectionRejected(std::string_view reason) {
  std::lock_guard lock(mutex_);
  ++connections_rejected_[ReasonLabel(reason)];
}

void Metrics::CountReadinessCheck(std::string_view result) {
  std::lock_guard lock(mutex_);
  ++readiness_checks_["result=\"" + EscapeLabelValue(result) + "\""];
}

void Metrics::CountAuditFailure() {
  std::lock_guard lock(mutex_);
  ++audit_failures_;
}

void Metrics::SetPoolSource(std::function<std::optional<PoolState>()> source) {
  std::lock_guard lock(mutex_);
  pool_source_ = std::move(source);
}

void Metrics::SetOpenConnectionsSource(std::function<std::map<std::string, uint64_t>()> source) {
  std::lock_guard lock(mutex_);
  open_connections_source_ = std::move(source);
}

std::string Metrics::Render() const {
  std::ostringstream out;
  std::function<std::optional<PoolState>()> pool_source;
  std::function<std::map<std::string, uint64_t>()> open_connections_source;
  {
    std::lock_guard lock(mutex_);
    pool_source = pool_source_;
    open_connections_source = open_connections_source_;
  }
  // Read outside the lock: the provider and the limiters take their own.
  std::optional<PoolState> pool = pool_source ? pool_source() : std::nullopt;
  std::map<std::string, uint64_t> open_connections;
  if (open_connections_source) {
    for (const auto& [listener, count] : open_connections_source()) {
      open_connections["listener=\"" + EscapeLabelValue(listener) + "\""] = count;
    }
  }
  std::lock_guard lock(mutex_);
  RenderFamily(out, "plimsoll_http_answers_total", "counter",
               "HTTP answers of the API listener by status.", answers_);
  RenderFamily(out, "plimsoll_refusals_total", "counter",
               "Answers that ran nothing, by not-dispatched reason.", refusals_);
  RenderFamily(out, "plimsoll_runs_total", "counter",
               "Dispatched runs by provider, tier and outcome.", runs_);
  RenderFamily(out, "plimsoll_admission_shed_total", "counter",
               "Runs shed by admission (capacity), by limit.", shed_);
  RenderFamily(out, "plimsoll_broker_calls_total", "counter",
               "Calls granted runs made through the broker, by grant profile and outcome.",
               broker_calls_);
  Declare(out, "plimsoll_runs_in_flight", "gauge",
          "Runs dispatched whose provider has not returned yet.");
  out << "plimsoll_runs_in_flight " << in_flight_.load() << '\n';

  Declare(out, "plimsoll_run_duration_seconds", "histogram",
          "Time dispatched runs spent in the sandbox, from dispatch to the provider's return.");
  uint64_t cumulative = 0;
  for (size_t i = 0; i < kRunDurationBuckets.size(); ++i) {
    cumulative += duration_buckets_[i];
    out << "plimsoll_run_duration_seconds_bucket{le=\"" << FormatDouble(kRunDurationBuckets[i])
        << "\"} " << cumulative << '\n';
  }
  out << "plimsoll_run_duration_seconds_bucket{le=\"+Inf\"} " << duration_count_ << '\n'
      << "plimsoll_run_duration_seconds_sum " << FormatDouble(duration_sum_seconds_) << '\n'
      << "plimsoll_run_duration_seconds_count " << duration_count_ << '\n';

  Declare(out, "plimsoll_run_ceiling_hits_total", "counter",
          "Runs answered deadline_exceeded because the provider had not returned by the run's "
          "deadline plus the grace.");
  out << "plimsoll_run_ceiling_hits_total " << ceiling_hits_ << '\n';

  Declare(out, "plimsoll_evidence_tier", "gauge",
          "The tier the current evidence proves: 1 on that tier's series, 0 on the others.");
  for (Tier tier : kEvidenceTiers) {
    out << "plimsoll_evidence_tier{tier=\"" << TierName(tier) << "\"} "
        << (tier == evidence_tier_ ? 1 : 0) << '\n';
  }
  Declare(out, "plimsoll_evidence_confirmed", "gauge",
          "1 while the evidence proves at least the tier proven at startup, else 0.");
  out << "plimsoll_evidence_confirmed " << (evidence_confirmed_ ? 1 : 0) << '\n';
  RenderFamily(out, "plimsoll_evidence_checks_total", "counter",
               "Background evidence checks by result (confirmed, lowered, failed).",
               evidence_checks_);
  Declare(out, "plimsoll_evidence_last_confirmed_timestamp_seconds", "gauge",
          "Unix time of the last check that confirmed the startup tier (0: never).");
  out << "plimsoll_evidence_last_confirmed_timestamp_seconds " << evidence_last_confirmed_unix_
      << '\n';

  RenderFamily(out, "plimsoll_connections_open", "gauge",
               "Connections open now (admitted under the caps), by listener (api, metrics).",
               open_connections);
  RenderFamily(out, "plimsoll_connections_rejected_total", "counter",
               "Connections closed before any request was read because a cap on open "
               "connections was reached, by cap (global, peer).",
               connections_rejected_);
  RenderFamily(out, "plimsoll_readiness_preflights_total", "counter",
               "Provider preflights run for /readyz off the event loop, by result (passed, "
               "failed).",
               readiness_checks_);

  Declare(out, "plimsoll_audit_write_failures_total", "counter",
          "Audit lines that could not be written.");
  out << "plimsoll_audit_write_failures_total " << audit_failures_ << '\n';

  const std::pair<const char*, const char*> pool_gauges[] = {
      {"plimsoll_pool_size", "Sandboxes the provider's warm pool keeps started."},
      {"plimsoll_pool_ready", "Started, healthy sandboxes waiting for a run."},
      {"plimsoll_pool_enabled", "1 while the pool serves (its evidence is confirmed), else 0."}};
  const std::pair<const char*, const char*> pool_counters[] = {
      {"plimsoll_pool_handed_out_total", "Runs served by a sandbox from the pool."},
      {"plimsoll_pool_found_empty_total",
       "Runs that found the pool empty and started their own sandbox."},
      {"plimsoll_pool_unhealthy_total",
       "Pooled sandboxes destroyed unused because a check failed."},
      {"plimsoll_pool_start_failures_total", "Pooled sandboxes that failed to start."}};
  const uint64_t gauge_values[] = {pool ? pool->size : 0, pool ? pool->ready : 0,
                                   pool && pool->enabled ? 1u : 0u};
  const uint64_t counter_values[] = {pool ? pool->handed_out : 0, pool ? pool->found_empty : 0,
                                     pool ? pool->unhealthy : 0, pool ? pool->start_failures : 0};
  for (size_t i = 0; i < std::size(pool_gauges); ++i) {
    Declare(out, pool_gauges[i].first, "gauge", pool_gauges[i].second);
    if (pool) out << pool_gauges[i].first << ' ' << gauge_values[i] << '\n';
  }
  for (size_t i = 0; i < std::size(pool_counters); ++i) {
    Declare(out, pool_counters[i].first, "counter", pool_counters[i].second);
    if (pool) out << pool_counters[i].first << ' ' << counter_values[i] << '\n';
  }
  return out.str();
}

}  // namespace plimsoll::daemon
