// Observability and safety over real HTTP: the run ceiling (refused before
// dispatch, and the daemon's own bound on a provider that does not return),
// the evidence monitor (a wall that weakens or fails refuses floors with
// nothing run, and recovers), /metrics in the Prometheus text format, and the
// audit log (one line per answer, never code, outputs, tokens or session IDs).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <thread>
#include <vector>

#include "auth/caller_store.h"
#include "daemon/server/daemon_main.h"
#include "daemon_fixture.h"

namespace plimsoll::daemon::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;

HttpCall PostRun(std::string body) {
  return {.method = "POST", .target = "/v1/runs", .body = std::move(body)};
}

// Polls `condition` until it holds or `timeout` passes (the daemon's threads
// move on their own; the test only observes).
template <class Condition>
bool WaitUntil(Condition condition, milliseconds timeout = milliseconds(20'000)) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(milliseconds(5));
  }
  return true;
}

// "name{labels}" -> value, from the metrics listener.
std::map<std::string, double> Scrape(DaemonUnderTest& daemon) {
  HttpReply reply = SendOnce(daemon.metrics_port(), {.method = "GET", .target = "/metrics"});
  EXPECT_EQ(reply.status, 200u);
  std::map<std::string, double> samples;
  std::istringstream lines(reply.body);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t space = line.rfind(' ');
    samples[line.substr(0, space)] = std::stod(line.substr(space + 1));
  }
  return samples;
}

// The audit lines in the operator log, parsed.
std::vector<json> AuditLines(DaemonUnderTest& daemon) {
  const std::string marker = "plimsolld: audit: ";
  std::vector<json> lines;
  std::istringstream log(daemon.log_text());
  std::string line;
  while (std::getline(log, line)) {
    if (line.starts_with(marker)) lines.push_back(json::parse(line.substr(marker.size())));
  }
  return lines;
}

// The audit line of the call whose request ID is `request_id`.
json AuditLineFor(DaemonUnderTest& daemon, const std::string& request_id) {
  json found;
  EXPECT_TRUE(WaitUntil([&] {
    for (const json& line : AuditLines(daemon)) {
      if (line["request_id"] == request_id) found = line;
    }
    return !found.is_null();
  })) << "no audit line for "
      << request_id << " in:\n"
      << daemon.log_text();
  return found;
}

std::string RandomHex() {
  std::random_device device;
  std::ostringstream out;
  out << std::hex << device() << device();
  return out.str();
}

// ---- Run ceiling -----------------------------------------------------------

TEST(RunCeiling, ATimeoutAboveTheCeilingIsARequestRefusalThatRunsNothing) {
  DaemonUnderTest daemon({.provider = "embedded", .dev = true, .tune = [](Settings& settings) {
                            settings.run_ceiling = milliseconds(2'000);
                          }});
  HttpReply reply = SendOnce(daemon.port(), PostRun(RunBody("1", R"("timeout_ms": 2001)")));
  EXPECT_EQ(reply.status, 400u) << reply.body;
  EXPECT_EQ(reply.Header("plimsoll-not-dispatched"), "request");
  json error = json::parse(reply.body)["error"];
  EXPECT_EQ(error["code"], "invalid_argument");
  EXPECT_NE(error["message"].get<std::string>().find("2000"), std::string::npos) << reply.body;
  EXPECT_EQ(daemon.provider().runs(), 0);

  // At the ceiling it runs; describe shows the ceiling.
  EXPECT_EQ(SendOnce(daemon.port(), PostRun(RunBody("1", R"("timeout_ms": 2000)"))).status, 200u);
  EXPECT_EQ(daemon.provider().runs(), 1);
  json described =
      json::parse(SendOnce(daemon.port(), {.method = "GET", .target = "/v1/describe"}).body);
  EXPECT_EQ(described["limits"]["run_ceiling_ms"], 2000);
}

TEST(RunCeiling, AProviderThatDoesNotReturnIsAnsweredDeadlineExceededAndKeepsItsSlot) {
  DaemonUnderTest daemon({.provider = "embedded", .dev = true, .tune = [](Settings& settings) {
                            settings.run_ceiling = milliseconds(300);
                            settings.run_grace = milliseconds(200);
                            settings.run_workers = 1;
                            settings.max_concurrent_runs = 1;
                          }});
  daemon.provider().Hold();
  auto started = std::chrono::steady_clock::now();
  HttpReply overran = SendOnce(daemon.port(), PostRun(RunBody("console.log(1)")));
  auto waited = std::chrono::steady_clock::now() - started;
  EXPECT_EQ(overran.status, 504u) << overran.body;
  EXPECT_EQ(overran.Count("plimsoll-not-dispatched"), 0u) << "code may have run: no mark";
  EXPECT_EQ(overran.Header("plimsoll-request-id"), overran.sent_request_id);
  json error = json::parse(overran.body)["error"];
  EXPECT_EQ(error["code"], "deadline_exceeded");
  EXPECT_FALSE(error.contains("not_dispatched"));
  EXPECT_GE(waited, milliseconds(500));  // the default timeout, capped at 300 ms, plus 200 ms
  EXPECT_EQ(daemon.provider().runs(), 1);

  // The provider still holds the run: its worker and admission slot stay taken.
  std::map<std::string, double> metrics = Scrape(daemon);
  EXPECT_EQ(metrics["plimsoll_run_ceiling_hits_total"], 1);
  EXPECT_EQ(metrics["plimsoll_runs_in_flight"], 1);
  EXPECT_EQ(metrics["plimsoll_runs_total{provider=\"embedded\",isolation=\"unknown\",outcome="
                    "\"ceiling_exceeded\"}"],
            1);
  HttpReply shed = SendOnce(daemon.port(), PostRun(RunBody("console.log(2)")));
  EXPECT_EQ(shed.status, 429u) << shed.body;
  EXPECT_EQ(shed.Header("plimsoll-not-dispatched"), "capacity");
  EXPECT_EQ(daemon.provider().runs(), 1);
  EXPECT_NE(daemon.log_text().find("did not return within its bound of 500 ms"), std::string::npos)
      << daemon.log_text();

  json audit = AuditLineFor(daemon, overran.sent_request_id);
  EXPECT_EQ(audit["status"], 504);
  EXPECT_TRUE(audit["not_dispatched"].is_null());
  EXPECT_TRUE(audit["run"]["exit_code"].is_null());

  // Once the provider returns, the slot is free again and the run is timed.
  daemon.provider().Release();
  ASSERT_TRUE(WaitUntil([&] { return Scrape(daemon)["plimsoll_runs_in_flight"] == 0; }));
  HttpReply after = SendOnce(daemon.port(), PostRun(RunBody("console.log(3)")));
  EXPECT_EQ(after.status, 200u) << after.body;
  EXPECT_EQ(daemon.provider().runs(), 2);
  EXPECT_EQ(Scrape(daemon)["plimsoll_run_duration_seconds_count"], 2);
}

// A module run is a project underneath (core/module_project.h): sent without
// timeout_ms, the daemon waits for it as long as the core lets it run (the
// project default), not a snippet's default (issue 39, item 9). A snippet
// held as long is answered deadline_exceeded: the bound is real.
TEST(RunCeiling, AModuleWithoutATimeoutIsBoundedAsTheProjectItRunsAs) {
  DaemonUnderTest daemon({.provider = "embedded", .dev = true, .tune = [](Settings& settings) {
                            settings.run_limits.snippet_timeout_ms = 200;
                            settings.run_limits.project_timeout_ms = 5'000;
                            settings.run_grace = milliseconds(200);
                          }});
  const std::string module_body =
      R"({"protocol": 1, "module": {"model": "cartpole", "rows": [[0, 0, 0.05, 0]],)"
      R"( "end_time": 1, "step": 0.01}})";
  const milliseconds held(1'500);  // past a snippet's 200 + 200 ms, within a project's 5 s

  daemon.provider().Hold();
  auto release = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(held);
    daemon.provider().Release();
  });
  HttpReply module = SendOnce(daemon.port(), PostRun(module_body));
  release.get();
  EXPECT_NE(module.status, 504u) << "the daemon gave up on a module the core still runs: "
                                 << module.body;
  EXPECT_EQ(daemon.provider().runs(), 1);
  ASSERT_TRUE(daemon.provider().last_request().has_value());
  EXPECT_EQ(daemon.provider().last_request()->timeout_ms, 5'000)
      << "the core resolved another timeout than the daemon's bound";

  daemon.provider().Hold();
  release = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(held);
    daemon.provider().Release();
  });
  HttpReply snippet = SendOnce(daemon.port(), PostRun(RunBody("console.log(1)")));
  release.get();
  EXPECT_EQ(snippet.status, 504u) << snippet.body;
  EXPECT_EQ(json::parse(snippet.body)["error"]["code"], "deadline_exceeded");
}

// ---- Evidence monitor --------------------------------------------------------

TEST(EvidenceMonitor, ALowerTierRefusesFloorsAboveItWithNothingRunAndThenRecovers) {
  DaemonUnderTest daemon;  // embedded: process proven at startup
  daemon.provider().LowerSmokeTestTo(Tier::kNone);
  ASSERT_EQ(daemon.server().evidence_monitor().CheckNow(), EvidenceCheckResult::kLowered);

  HttpReply refused =
      SendOnce(daemon.port(), PostRun(RunBody("1", R"("minimum_isolation": "process")")));
  EXPECT_EQ(refused.status, 409u) << refused.body;
  EXPECT_EQ(refused.Header("plimsoll-not-dispatched"), "isolation");
  EXPECT_EQ(json::parse(refused.body)["error"]["not_dispatched"], "isolation");
  EXPECT_EQ(daemon.provider().runs(), 0);

  EXPECT_EQ(SendOnce(daemon.port(), {.method = "GET", .target = "/readyz"}).status, 503u);
  json described =
      json::parse(SendOnce(daemon.port(), {.method = "GET", .target = "/v1/describe"}).body);
  EXPECT_EQ(described["tier"], "none");
  json monitor = described["evidence_monitor"];
  EXPECT_EQ(monitor["startup_tier"], "process");
  EXPECT_EQ(monitor["current_tier"], "none");
  EXPECT_EQ(monitor["confirmed"], false);
  EXPECT_EQ(monitor["last_result"], "lowered");
  EXPECT_EQ(monitor["checks"], 1);
  EXPECT_NE(monitor["lost_reason"].get<std::string>().find("below the process"), std::string::npos);
  std::map<std::string, double> metrics = Scrape(daemon);
  EXPECT_EQ(metrics["plimsoll_evidence_confirmed"], 0);
  EXPECT_EQ(metrics["plimsoll_evidence_tier{tier=\"none\"}"], 1);
  EXPECT_EQ(metrics["plimsoll_evidence_tier{tier=\"process\"}"], 0);
  EXPECT_EQ(metrics["plimsoll_evidence_checks_total{result=\"lowered\"}"], 1);
  EXPECT_NE(daemon.log_text().find("The sandbox evidence is lost"), std::string::npos);

  daemon.provider().RestoreSmokeTest();
  ASSERT_EQ(daemon.server().evidence_monitor().CheckNow(), EvidenceCheckResult::kConfirmed);
  HttpReply ran = SendOnce(
      daemon.port(), PostRun(RunBody("console.log(6*7)", R"("minimum_isolation": "process")")));
  EXPECT_EQ(ran.status, 200u) << ran.body;
  EXPECT_EQ(daemon.provider().runs(), 1);
  EXPECT_EQ(SendOnce(daemon.port(), {.method = "GET", .target = "/readyz"}).status, 200u);
  EXPECT_EQ(Scrape(daemon)["plimsoll_evidence_confirmed"], 1);
  EXPECT_NE(daemon.log_text().find("The sandbox evidence recovered"), std::string::npos);
}

TEST(EvidenceMonitor, AFailedSmokeTestRefusesEnvironmentWithNothingRun) {
  DaemonUnderTest daemon;
  daemon.provider().FailSmokeTestWith("the wall is gone");
  ASSERT_EQ(daemon.server().evidence_monitor().CheckNow(), EvidenceCheckResult::kFailed);
  // The Sandbox re-collects evidence before dispatch, fails again, runs nothing.
  for (std::string extra : {std::string(), std::string(R"("minimum_isolation": "process")")}) {
    HttpReply refused = SendOnce(daemon.port(), PostRun(RunBody("1", extra)));
    EXPECT_EQ(refused.status, 409u) << refused.body;
    EXPECT_EQ(refused.Header("plimsoll-not-dispatched"), "environment") << refused.body;
  }
  EXPECT_EQ(daemon.provider().runs(), 0);
  HttpReply ready = SendOnce(daemon.port(), {.method = "GET", .target = "/readyz"});
  EXPECT_EQ(ready.status, 503u);
  json described =
      json::parse(SendOnce(daemon.port(), {.method = "GET", .target = "/v1/describe"}).body);
  EXPECT_EQ(described["evidence_monitor"]["last_result"], "failed");
  EXPECT_EQ(described["evidence_monitor"]["current_tier"], "unknown");
  EXPECT_NE(
      described["evidence_monitor"]["lost_reason"].get<std::string>().find("the wall is gone"),
      std::string::npos);
  EXPECT_EQ(Scrape(daemon)["plimsoll_evidence_checks_total{result=\"failed\"}"], 1);
}

TEST(EvidenceMonitor, TheBackgroundThreadNoticesALossAndARecovery) {
  DaemonUnderTest daemon({.provider = "embedded", .dev = true, .tune = [](Settings& settings) {
                            settings.evidence_interval = milliseconds(20);
                          }});
  daemon.provider().LowerSmokeTestTo(Tier::kNone);
  ASSERT_TRUE(WaitUntil([&] { return Scrape(daemon)["plimsoll_evidence_confirmed"] == 0; }));
  EXPECT_FALSE(daemon.server().evidence_monitor().status().confirmed);
  daemon.provider().RestoreSmokeTest();
  ASSERT_TRUE(WaitUntil([&] { return Scrape(daemon)["plimsoll_evidence_confirmed"] == 1; }));
  EXPECT_GE(Scrape(daemon)["plimsoll_evidence_checks_total{result=\"confirmed\"}"], 1);
}

TEST(EvidenceMonitor, DescribeShowsTheMonitorWhileConfirmed) {
  DaemonUnderTest daemon;
  json described =
      json::parse(SendOnce(daemon.port(), {.method = "GET", .target = "/v1/describe"}).body);
  json monitor = described["evidence_monitor"];
  EXPECT_EQ(monitor["interval_ms"], 60'000);
  EXPECT_EQ(monitor["startup_tier"], "process");
  EXPECT_EQ(monitor["confirmed"], true);
  EXPECT_EQ(monitor["last_result"], "startup");
  EXPECT_EQ(monitor["checks"], 0);
  EXPECT_GT(monitor["last_check_unix_ms"].get<int64_t>(), 1'600'000'000'000);
  EXPECT_EQ(monitor["last_confirmed_unix_ms"], monitor["last_check_unix_ms"]);
  EXPECT_EQ(monitor["lost_reason"], "");
}

// ---- Metrics -----------------------------------------------------------------

TEST(Metrics, RealRunsShowInTheHistogramAndEveryFamilyIsDeclared) {
  DaemonUnderTest daemon;
  EXPECT_EQ(SendOnce(daemon.port(), PostRun(RunBody("console.log(1)"))).status, 200u);
  EXPECT_EQ(SendOnce(daemon.port(), PostRun(RunBody("for (;;) {}", R"("timeout_ms": 50)"))).status,
            200u);
  EXPECT_EQ(SendOnce(daemon.port(), PostRun("{")).status, 400u);  // refused: not timed

  HttpReply reply = SendOnce(daemon.metrics_port(), {.method = "GET", .target = "/metrics"});
  ASSERT_EQ(reply.status, 200u);
  std::map<std::string, std::string> types;
  std::vector<std::pair<std::string, double>> buckets;
  std::istringstream lines(reply.body);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.starts_with("# TYPE ")) {
      std::istringstream words(line.substr(7));
      std::string name, type;
      words >> name >> type;
      types[name] = type;
      continue;
    }
    if (line.starts_with("#")) continue;
    size_t space = line.rfind(' ');
    ASSERT_NE(space, std::string::npos) << line;
    std::string series = line.substr(0, space);
    std::string name = series.substr(0, series.find('{'));
    std::string family = name;
    for (std::string suffix : {"_bucket", "_sum", "_count"}) {
      if (name.ends_with(suffix) && types.count(name.substr(0, name.size() - suffix.size()))) {
        family = name.substr(0, name.size() - suffix.size());
      }
    }
    EXPECT_TRUE(types.count(family)) << "no TYPE before " << line;
    if (name == "plimsoll_run_duration_seconds_bucket") {
      buckets.emplace_back(series, std::stod(line.substr(space + 1)));
    }
  }
  ASSERT_FALSE(buckets.empty());
  for (size_t i = 1; i < buckets.size(); ++i) EXPECT_GE(buckets[i].second, buckets[i - 1].second);
  EXPECT_EQ(buckets.back().first, "plimsoll_run_duration_seconds_bucket{le=\"+Inf\"}");
  std::map<std::string, double> samples = Scrape(daemon);
  EXPECT_EQ(buckets.back().second, 2);
  EXPECT_EQ(samples["plimsoll_run_duration_seconds_count"], 2);
  EXPECT_GT(samples["plimsoll_run_duration_seconds_sum"], 0.04);  // the loop ran 50 ms
  EXPECT_EQ(samples["plimsoll_evidence_confirmed"], 1);
  EXPECT_EQ(samples["plimsoll_evidence_tier{tier=\"process\"}"], 1);
  EXPECT_GT(samples["plimsoll_evidence_last_confirmed_timestamp_seconds"], 1.6e9);
  EXPECT_EQ(samples["plimsoll_run_ceiling_hits_total"], 0);
  EXPECT_EQ(samples["plimsoll_audit_write_failures_total"], 0);
  EXPECT_EQ(types["plimsoll_run_duration_seconds"], "histogram");
}

// ---- Audit log -----------------------------------------------------------------

class DaemonAudit : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "plimsoll-daemon-audit-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    directory_ = pattern;
    auth::StoreOptions options;
    options.create_if_missing = true;
    auto store = auth::CallerStore::Open(directory_ / "callers.db", options);
    ASSERT_TRUE(store.ok()) << store.error().ToString();
    auto issued = (*store)->Create({.name = "auditor", .scopes = {"runs", "describe", "sessions"}});
    ASSERT_TRUE(issued.ok()) << issued.error().ToString();
    token_ = issued->token;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }
  DaemonOptions Options() {
    DaemonOptions options;
    options.dev = false;
    options.callers = (directory_ / "callers.db").string();
    return options;
  }
  HttpCall Authorized(HttpCall call) {
    call.headers.emplace_back("Authorization", "Bearer " + token_);
    return call;
  }

  fs::path directory_;
  std::string token_;
};

TEST_F(DaemonAudit, ARunsLineHasItsFactsAndNeverItsCodeOutputsOrToken) {
  DaemonUnderTest daemon(Options());
  const std::string secret = "SECRET-MARKER-" + RandomHex();
  const std::string output = "OUTPUT-" + RandomHex();
  // The output is built at run time, so it appears in stdout but not in the code.
  std::string code = "const secret = \"" + secret + "\"; console.log([\"" + output.substr(0, 7) +
                     "\", \"" + output.substr(7) + "\"].join(\"\"));";
  HttpReply ran =
      SendOnce(daemon.port(), Authorized(PostRun(RunBody(code, R"("trace_id": "trace-audit-1")"))));
  ASSERT_EQ(ran.status, 200u) << ran.body;
  ASSERT_EQ(json::parse(ran.body)["stdout"], output + "\n");

  json line = AuditLineFor(daemon, ran.sent_request_id);
  EXPECT_TRUE(line["time"].get<std::string>().ends_with("Z"));
  EXPECT_EQ(line["method"], "POST");
  EXPECT_EQ(line["route"], "/v1/runs");
  EXPECT_EQ(line["status"], 200);
  EXPECT_EQ(line["caller"], "auditor");
  EXPECT_TRUE(line["not_dispatched"].is_null());
  EXPECT_GE(line["duration_ms"].get<double>(), 0);
  json run = line["run"];
  EXPECT_EQ(run["kind"], "javascript");
  EXPECT_EQ(run["payload_bytes"], code.size());
  EXPECT_EQ(run["provider"], "embedded");
  EXPECT_EQ(run["tier"], "process");
  EXPECT_EQ(run["exit_code"], 0);
  EXPECT_EQ(run["timed_out"], false);
  EXPECT_TRUE(run["duration_ms"].is_number_integer());
  EXPECT_EQ(run["broker_calls"], 0);
  EXPECT_EQ(run["trace_id"], "trace-audit-1");

  std::string log = daemon.log_text();
  EXPECT_EQ(log.find(secret), std::string::npos) << log;
  EXPECT_EQ(log.find(output), std::string::npos) << log;
  EXPECT_EQ(log.find(token_), std::string::npos) << log;
  EXPECT_EQ(log.find("Bearer"), std::string::npos) << log;
}

TEST_F(DaemonAudit, EveryAnswerGetsALineRefusalsBeforeTheHandlerIncluded) {
  DaemonUnderTest daemon(Options());
  const std::string session_id = "SESSION-" + RandomHex();
  const std::string odd_path = "PATH-" + RandomHex();

  HttpReply bad_json = SendOnce(daemon.port(), Authorized(PostRun("{")));
  HttpReply unknown = SendOnce(daemon.port(), {.method = "GET", .target = "/v1/" + odd_path});
  HttpReply no_token = SendOnce(daemon.port(), PostRun(RunBody("1")));
  HttpReply wrong_token = SendOnce(
      daemon.port(), {.method = "GET",
                      .target = "/v1/describe",
                      .headers = {{"Authorization", "Bearer plm_" + std::string(43, 'Z')}}});
  HttpReply session = SendOnce(
      daemon.port(),
      Authorized(
          {.method = "POST", .target = "/v1/sessions/" + session_id + "/runs", .body = "{}"}));
  HttpReply healthz = SendOnce(daemon.port(), {.method = "GET", .target = "/healthz"});

  json line = AuditLineFor(daemon, bad_json.sent_request_id);
  EXPECT_EQ(line["status"], 400);
  EXPECT_EQ(line["not_dispatched"], "request");
  EXPECT_EQ(line["route"], "/v1/runs");
  EXPECT_EQ(line["caller"], "auditor");
  EXPECT_FALSE(line.contains("run"));  // nothing parsed, nothing to say

  line = AuditLineFor(daemon, unknown.sent_request_id);
  EXPECT_EQ(line["status"], 404);
  EXPECT_EQ(line["method"], "GET");
  EXPECT_TRUE(line["route"].is_null());
  EXPECT_EQ(line["not_dispatched"], "request");

  line = AuditLineFor(daemon, no_token.sent_request_id);
  EXPECT_EQ(line["status"], 401);
  EXPECT_EQ(line["not_dispatched"], "permission");
  EXPECT_TRUE(line["caller"].is_null());

  line = AuditLineFor(daemon, wrong_token.sent_request_id);
  EXPECT_EQ(line["status"], 401);

  line = AuditLineFor(daemon, session.sent_request_id);
  EXPECT_EQ(line["status"], 404);  // no such session
  EXPECT_EQ(line["route"], "/v1/sessions/{id}/runs");
  EXPECT_EQ(line["not_dispatched"], "request");

  line = AuditLineFor(daemon, healthz.sent_request_id);
  EXPECT_EQ(line["status"], 200);
  EXPECT_EQ(line["route"], "/healthz");

  // Malformed HTTP: no request ID, no method, still a line.
  size_t before = AuditLines(daemon).size();
  TestClient raw(daemon.port());
  auto garbage = raw.SendRaw("NOT HTTP AT ALL\r\n\r\n");
  ASSERT_TRUE(garbage.has_value());
  EXPECT_EQ(garbage->status, 400u);
  ASSERT_TRUE(WaitUntil([&] { return AuditLines(daemon).size() > before; }));
  json transport = AuditLines(daemon).back();
  EXPECT_EQ(transport["status"], 400);
  EXPECT_TRUE(transport["request_id"].is_null());
  EXPECT_EQ(transport["not_dispatched"], "request");

  std::string audit_text;
  for (const json& each : AuditLines(daemon)) audit_text += each.dump() + "\n";
  EXPECT_EQ(audit_text.find(session_id), std::string::npos) << audit_text;
  EXPECT_EQ(audit_text.find(odd_path), std::string::npos) << audit_text;
  EXPECT_EQ(audit_text.find(token_), std::string::npos) << audit_text;
  EXPECT_EQ(audit_text.find(std::string(43, 'Z')), std::string::npos) << audit_text;
  EXPECT_EQ(daemon.provider().runs(), 0);
}

TEST_F(DaemonAudit, AShedRunsLineSaysCapacityAndCarriesItsRunFacts) {
  DaemonUnderTest daemon({.provider = "embedded",
                          .dev = false,
                          .callers = (directory_ / "callers.db").string(),
                          .tune = [](Settings& settings) { settings.max_concurrent_runs = 1; }});
  daemon.provider().Hold();
  auto first = std::async(std::launch::async, [&] {
    return SendOnce(daemon.port(), Authorized(PostRun(RunBody("console.log(1)"))));
  });
  ASSERT_TRUE(WaitUntil([&] { return daemon.provider().runs() == 1; }));
  HttpReply shed = SendOnce(daemon.port(), Authorized(PostRun(RunBody("console.log(22)"))));
  EXPECT_EQ(shed.status, 429u);
  daemon.provider().Release();
  EXPECT_EQ(first.get().status, 200u);
  json line = AuditLineFor(daemon, shed.sent_request_id);
  EXPECT_EQ(line["not_dispatched"], "capacity");
  EXPECT_EQ(line["run"]["kind"], "javascript");
  EXPECT_EQ(line["run"]["payload_bytes"], std::string("console.log(22)").size());
  EXPECT_TRUE(line["run"]["exit_code"].is_null());
}

// ---- Settings through DaemonMain -------------------------------------------------

TEST(ObservabilitySettings, BadValuesStopTheStartWithExitTwoNamingTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string named;
  };
  for (const Case& bad : std::vector<Case>{
           {{"plimsolld", "--run-ceiling-ms", "5"}, "--run-ceiling-ms"},
           {{"plimsolld", "--evidence-interval-ms", "10"}, "--evidence-interval-ms"},
           {{"plimsolld"}, "PLIMSOLL_RUN_CEILING_MS"},
       }) {
    std::ostringstream out, err;
    Environment environment;
    if (bad.named.starts_with("PLIMSOLL_")) environment[bad.named] = "300001x";
    EXPECT_EQ(DaemonMain(bad.args, environment, out, err), kExitBadSettings) << bad.named;
    EXPECT_NE(err.str().find(bad.named), std::string::npos) << err.str();
  }
}

}  // namespace
}  // namespace plimsoll::daemon::testing
