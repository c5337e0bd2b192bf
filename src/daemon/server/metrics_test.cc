#include "daemon/server/metrics.h"

#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace plimsoll::daemon {
namespace {

using std::chrono::milliseconds;

struct Sample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct Exposition {
  std::map<std::string, std::string> types;  // family -> counter/gauge/histogram
  std::set<std::string> helped;
  std::vector<Sample> samples;
};

// Parses the Prometheus text format strictly enough to catch what scrapers
// reject: every sample line is `name{label="value",...} value` or
// `name value`, label values are quoted with \\, \" and \n escapes, and every
// sample belongs to a family whose HELP and TYPE came first.
Exposition Parse(const std::string& text) {
  Exposition out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    EXPECT_FALSE(line.empty()) << "blank line";
    if (line.starts_with("# HELP ")) {
      std::string rest = line.substr(7);
      std::string family = rest.substr(0, rest.find(' '));
      EXPECT_GT(rest.size(), family.size() + 1) << "HELP without text: " << line;
      out.helped.insert(family);
      continue;
    }
    if (line.starts_with("# TYPE ")) {
      std::istringstream words(line.substr(7));
      std::string family, type;
      words >> family >> type;
      EXPECT_TRUE(type == "counter" || type == "gauge" || type == "histogram") << line;
      EXPECT_TRUE(out.helped.count(family)) << "TYPE before HELP: " << line;
      out.types[family] = type;
      continue;
    }
    EXPECT_NE(line[0], '#') << "unknown comment: " << line;
    Sample sample;
    size_t i = 0;
    while (i < line.size() && (std::isalnum(static_cast<unsigned char>(line[i])) || line[i] == '_'))
      ++i;
    sample.name = line.substr(0, i);
    EXPECT_FALSE(sample.name.empty()) << line;
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (i < line.size() && line[i] != '}') {
        size_t equals = line.find('=', i);
        EXPECT_NE(equals, std::string::npos) << line;
        if (equals == std::string::npos) break;
        std::string key = line.substr(i, equals - i);
        EXPECT_EQ(line[equals + 1], '"') << line;
        std::string value;
        size_t j = equals + 2;
        for (; j < line.size() && line[j] != '"'; ++j) {
          if (line[j] == '\\') {
            ++j;
            EXPECT_TRUE(line[j] == '\\' || line[j] == '"' || line[j] == 'n') << line;
            value += line[j] == 'n' ? '\n' : line[j];
          } else {
            value += line[j];
          }
        }
        EXPECT_LT(j, line.size()) << "unterminated label value: " << line;
        sample.labels[key] = value;
        i = j + 1;
        if (i < line.size() && line[i] == ',') ++i;
      }
      ++i;  // '}'
    }
    EXPECT_EQ(line[i], ' ') << line;
    std::string number = line.substr(i + 1);
    char* end = nullptr;
    sample.value = std::strtod(number.c_str(), &end);
    EXPECT_EQ(*end, '\0') << "bad value: " << line;
    std::string family = sample.name;
    for (std::string suffix : {"_bucket", "_sum", "_count"}) {
      std::string base = family.substr(0, family.size() - std::min(family.size(), suffix.size()));
      if (family.ends_with(suffix) && out.types.count(base) && out.types[base] == "histogram") {
        family = base;
      }
    }
    EXPECT_TRUE(out.types.count(family)) << "sample before its TYPE: " << line;
    out.samples.push_back(std::move(sample));
  }
  return out;
}

double Value(const Exposition& exposition, const std::string& name,
             const std::map<std::string, std::string>& labels = {}) {
  for (const Sample& sample : exposition.samples) {
    if (sample.name == name && sample.labels == labels) return sample.value;
  }
  ADD_FAILURE() << "no sample " << name;
  return -1;
}

TEST(Metrics, ConnectionRejectionsByCapStartAtZero) {
  Metrics metrics;
  Exposition before = Parse(metrics.Render());
  EXPECT_EQ(Value(before, "plimsoll_connections_rejected_total", {{"reason", "global"}}), 0);
  EXPECT_EQ(Value(before, "plimsoll_connections_rejected_total", {{"reason", "peer"}}), 0);
  metrics.CountConnectionRejected("peer");
  metrics.CountConnectionRejected("peer");
  metrics.CountConnectionRejected("global");
  metrics.CountReadinessCheck("failed");
  Exposition after = Parse(metrics.Render());
  EXPECT_EQ(Value(after, "plimsoll_connections_rejected_total", {{"reason", "peer"}}), 2);
  EXPECT_EQ(Value(after, "plimsoll_connections_rejected_total", {{"reason", "global"}}), 1);
  EXPECT_EQ(Value(after, "plimsoll_readiness_preflights_total", {{"result", "failed"}}), 1);
}

TEST(Metrics, OpenConnectionsAreReadFromTheSourceAtEveryScrape) {
  Metrics metrics;
  uint64_t api = 3;
  metrics.SetOpenConnectionsSource([&api] {
    return std::map<std::string, uint64_t>{{"api", api}, {"metrics", 1}};
  });
  Exposition first = Parse(metrics.Render());
  EXPECT_EQ(Value(first, "plimsoll_connections_open", {{"listener", "api"}}), 3);
  EXPECT_EQ(Value(first, "plimsoll_connections_open", {{"listener", "metrics"}}), 1);
  api = 0;
  EXPECT_EQ(Value(Parse(metrics.Render()), "plimsoll_connections_open", {{"listener", "api"}}), 0);
}

TEST(Metrics, EveryFamilyIsDeclaredEvenBeforeAnythingHappened) {
  Metrics metrics;
  Exposition exposition = Parse(metrics.Render());
  for (const char* family : {"plimsoll_http_answers_total",
                             "plimsoll_refusals_total",
                             "plimsoll_runs_total",
                             "plimsoll_admission_shed_total",
                             "plimsoll_runs_in_flight",
                             "plimsoll_run_duration_seconds",
                             "plimsoll_run_ceiling_hits_total",
                             "plimsoll_evidence_tier",
                             "plimsoll_evidence_confirmed",
                             "plimsoll_evidence_checks_total",
                             "plimsoll_evidence_last_confirmed_timestamp_seconds",
                             "plimsoll_audit_write_failures_total",
                             "plimsoll_connections_open",
                             "plimsoll_connections_rejected_total",
                             "plimsoll_readiness_preflights_total",
                             "plimsoll_pool_size",
                             "plimsoll_pool_ready",
                             "plimsoll_pool_enabled",
                             "plimsoll_pool_handed_out_total",
                             "plimsoll_pool_found_empty_total",
                             "plimsoll_pool_unhealthy_total",
                             "plimsoll_pool_start_failures_total"}) {
    EXPECT_TRUE(exposition.types.count(family)) << family;
    EXPECT_TRUE(exposition.helped.count(family)) << family;
  }
  EXPECT_EQ(exposition.types["plimsoll_run_duration_seconds"], "histogram");
  EXPECT_EQ(Value(exposition, "plimsoll_run_duration_seconds_count"), 0);
  EXPECT_EQ(Value(exposition, "plimsoll_evidence_confirmed"), 0);
  EXPECT_EQ(Value(exposition, "plimsoll_evidence_tier", {{"tier", "unknown"}}), 1);
  EXPECT_EQ(Value(exposition, "plimsoll_evidence_checks_total", {{"result", "failed"}}), 0);
}

TEST(Metrics, AWarmPoolIsShownAtEveryScrapeAndNoPoolHasNoSamples) {
  Metrics metrics;
  std::optional<PoolState> pool;
  metrics.SetPoolSource([&pool] { return pool; });
  Exposition none = Parse(metrics.Render());
  for (const Sample& sample : none.samples) {
    EXPECT_NE(sample.name.rfind("plimsoll_pool_", 0), 0u)
        << "a provider without a pool: " << sample.name;
  }
  pool = PoolState{.size = 2,
                   .ready = 1,
                   .enabled = true,
                   .handed_out = 7,
                   .found_empty = 3,
                   .unhealthy = 1,
                   .start_failures = 4};
  Exposition shown = Parse(metrics.Render());
  EXPECT_EQ(Value(shown, "plimsoll_pool_size"), 2);
  EXPECT_EQ(Value(shown, "plimsoll_pool_ready"), 1);
  EXPECT_EQ(Value(shown, "plimsoll_pool_enabled"), 1);
  EXPECT_EQ(Value(shown, "plimsoll_pool_handed_out_total"), 7);
  EXPECT_EQ(Value(shown, "plimsoll_pool_found_empty_total"), 3);
  EXPECT_EQ(Value(shown, "plimsoll_pool_unhealthy_total"), 1);
  EXPECT_EQ(Value(shown, "plimsoll_pool_start_failures_total"), 4);
  pool->enabled = false;
  EXPECT_EQ(Value(Parse(metrics.Render()), "plimsoll_pool_enabled"), 0);
}

TEST(Metrics, TheRunDurationHistogramIsCumulativeAndEndsAtCount) {
  Metrics metrics;
  for (auto elapsed : {milliseconds(0), milliseconds(1), milliseconds(3), milliseconds(40),
                       milliseconds(2'000), milliseconds(400'000)}) {
    metrics.ObserveRunDuration(elapsed);
  }
  Exposition exposition = Parse(metrics.Render());
  std::vector<std::pair<std::string, double>> buckets;
  for (const Sample& sample : exposition.samples) {
    if (sample.name == "plimsoll_run_duration_seconds_bucket") {
      buckets.emplace_back(sample.labels.at("le"), sample.value);
    }
  }
  ASSERT_EQ(buckets.size(), Metrics::kRunDurationBuckets.size() + 1);
  EXPECT_EQ(buckets.front().first, "0.001");
  EXPECT_EQ(buckets[buckets.size() - 2].first, "300");
  EXPECT_EQ(buckets.back().first, "+Inf");
  double upper = 0;
  for (size_t i = 0; i + 1 < buckets.size(); ++i) {
    double bound = std::strtod(buckets[i].first.c_str(), nullptr);
    EXPECT_GT(bound, upper) << "le values must increase";
    upper = bound;
    if (i > 0) {
      EXPECT_GE(buckets[i].second, buckets[i - 1].second) << "buckets must be cumulative";
    }
  }
  EXPECT_EQ(buckets[0].second, 2);  // 0 ms and 1 ms are <= 0.001 s
  EXPECT_EQ(Value(exposition, "plimsoll_run_duration_seconds_bucket", {{"le", "0.005"}}), 3);
  EXPECT_EQ(Value(exposition, "plimsoll_run_duration_seconds_bucket", {{"le", "300"}}), 5);
  EXPECT_EQ(buckets.back().second, 6);  // 400 s is only in +Inf
  EXPECT_EQ(Value(exposition, "plimsoll_run_duration_seconds_count"), 6);
  EXPECT_NEAR(Value(exposition, "plimsoll_run_duration_seconds_sum"), 402.044, 1e-9);
}

TEST(Metrics, EvidenceStateIsOneTierAtATime) {
  Metrics metrics;
  auto confirmed_at = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  metrics.SetEvidence(Tier::kContainer, true, confirmed_at);
  metrics.CountEvidenceCheck("confirmed");
  metrics.SetEvidence(Tier::kProcess, false, std::nullopt);  // lowered: the time stays
  metrics.CountEvidenceCheck("lowered");
  Exposition exposition = Parse(metrics.Render());
  double ones = 0;
  for (const Sample& sample : exposition.samples) {
    if (sample.name == "plimsoll_evidence_tier") ones += sample.value;
  }
  EXPECT_EQ(ones, 1);
  EXPECT_EQ(Value(exposition, "plimsoll_evidence_tier", {{"tier", "process"}}), 1);
  EXPECT_EQ(Value(exposition, "plimsoll_evidence_tier", {{"tier", "container"}}), 0);
  EXPECT_EQ(Value(exposition, "plimsoll_evidence_confirmed"), 0);
  EXPECT_EQ(Value(exposition, "plimsoll_evidence_last_confirmed_timestamp_seconds"), 1'700'000'000);
  EXPECT_EQ(Value(exposition, "plimsoll_evidence_checks_total", {{"result", "confirmed"}}), 1);
  EXPECT_EQ(Value(exposition, "plimsoll_evidence_checks_total", {{"result", "lowered"}}), 1);
}

TEST(Metrics, CountersAndLabelEscaping) {
  Metrics metrics;
  metrics.CountAnswer(200, std::nullopt);
  metrics.CountAnswer(409, NotDispatched::kIsolation);
  metrics.CountRun("odd\"name\\with\nnewline", Tier::kProcess, "exited");
  metrics.CountCeilingHit();
  metrics.CountAuditFailure();
  metrics.RunStarted();
  Exposition exposition = Parse(metrics.Render());
  EXPECT_EQ(Value(exposition, "plimsoll_http_answers_total", {{"status", "409"}}), 1);
  EXPECT_EQ(Value(exposition, "plimsoll_refusals_total", {{"reason", "isolation"}}), 1);
  EXPECT_EQ(Value(exposition, "plimsoll_runs_total",
                  {{"provider", "odd\"name\\with\nnewline"},
                   {"isolation", "process"},
                   {"outcome", "exited"}}),
            1);
  EXPECT_EQ(Value(exposition, "plimsoll_run_ceiling_hits_total"), 1);
  EXPECT_EQ(Value(exposition, "plimsoll_audit_write_failures_total"), 1);
  EXPECT_EQ(Value(exposition, "plimsoll_runs_in_flight"), 1);
}

}  // namespace
}  // namespace plimsoll::daemon
