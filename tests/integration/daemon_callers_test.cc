// Callers and admission over real HTTP: a daemon authenticating against a
// caller store in a temporary directory (revocation and rotation take effect
// on the next request), and admission shedding `capacity` before dispatch.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "auth/caller_store.h"
#include "daemon_fixture.h"

namespace plimsoll::daemon::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class DaemonCallers : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "plimsoll-daemon-callers-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    directory_ = pattern;
    path_ = directory_ / "callers.db";
    auth::StoreOptions options;
    options.create_if_missing = true;
    auto store = auth::CallerStore::Open(path_, options);
    ASSERT_TRUE(store.ok()) << store.error().ToString();
    store_ = std::move(*store);
  }
  void TearDown() override {
    store_.reset();
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }

  std::string Create(const std::string& name, std::optional<int64_t> max_concurrent = {},
                     std::optional<int64_t> rate_per_min = {}) {
    auto issued = store_->Create({.name = name,
                                  .scopes = {"runs", "describe"},
                                  .max_concurrent = max_concurrent,
                                  .rate_per_min = rate_per_min});
    EXPECT_TRUE(issued.ok()) << issued.error().ToString();
    return issued.ok() ? issued->token : std::string();
  }

  DaemonOptions Options() {
    DaemonOptions options;
    options.dev = false;
    options.callers = path_.string();
    return options;
  }

  fs::path directory_;
  fs::path path_;
  std::unique_ptr<auth::CallerStore> store_;
};

HttpCall PostRun(const std::string& token, const std::string& code = "console.log(6*7)") {
  HttpCall call{.method = "POST", .target = "/v1/runs", .body = RunBody(code)};
  if (!token.empty()) call.headers.emplace_back("Authorization", "Bearer " + token);
  return call;
}

void ExpectRefused(const HttpReply& reply, unsigned status, const std::string& code,
                   const std::string& reason) {
  EXPECT_EQ(reply.status, status) << reply.body;
  EXPECT_EQ(reply.Header("plimsoll-not-dispatched"), reason) << reply.body;
  json error = json::parse(reply.body)["error"];
  EXPECT_EQ(error["code"], code) << reply.body;
  EXPECT_EQ(error["not_dispatched"], reason) << reply.body;
}

void ExpectRan(const HttpReply& reply) {
  ASSERT_EQ(reply.status, 200u) << reply.body;
  EXPECT_EQ(json::parse(reply.body)["stdout"], "42\n") << reply.body;
}

TEST_F(DaemonCallers, ACallerCanRunAndAWrongTokenRunsNothing) {
  std::string token = Create("ci");
  DaemonUnderTest daemon(Options());
  ExpectRan(SendOnce(daemon.port(), PostRun(token)));
  EXPECT_EQ(daemon.provider().runs(), 1);

  std::string wrong = token;
  wrong.back() = wrong.back() == 'A' ? 'B' : 'A';
  HttpReply refused = SendOnce(daemon.port(), PostRun(wrong));
  ExpectRefused(refused, 401, "unauthenticated", "permission");
  EXPECT_EQ(refused.body.find(wrong), std::string::npos);
  ExpectRefused(SendOnce(daemon.port(), PostRun("")), 401, "unauthenticated", "permission");
  EXPECT_EQ(daemon.provider().runs(), 1);
}

TEST_F(DaemonCallers, AScopeIsCheckedPerRoute) {
  auto issued = store_->Create({.name = "reader", .scopes = {"describe"}});
  ASSERT_TRUE(issued.ok());
  DaemonUnderTest daemon(Options());
  HttpCall describe{.method = "GET", .target = "/v1/describe"};
  describe.headers.emplace_back("Authorization", "Bearer " + issued->token);
  EXPECT_EQ(SendOnce(daemon.port(), describe).status, 200u);
  ExpectRefused(SendOnce(daemon.port(), PostRun(issued->token)), 403, "permission_denied",
                "permission");
  EXPECT_EQ(daemon.provider().runs(), 0);
}

TEST_F(DaemonCallers, RevokingWhileServingRefusesTheNextRequest) {
  std::string token = Create("ci");
  DaemonUnderTest daemon(Options());
  ExpectRan(SendOnce(daemon.port(), PostRun(token)));
  ASSERT_TRUE(store_->Revoke("ci").ok());
  ExpectRefused(SendOnce(daemon.port(), PostRun(token)), 401, "unauthenticated", "permission");
  EXPECT_EQ(daemon.provider().runs(), 1);
}

TEST_F(DaemonCallers, RotatingRefusesTheOldTokenAndAcceptsTheNewOne) {
  std::string old_token = Create("ci");
  DaemonUnderTest daemon(Options());
  ExpectRan(SendOnce(daemon.port(), PostRun(old_token)));
  auto rotated = store_->Rotate("ci");
  ASSERT_TRUE(rotated.ok()) << rotated.error().ToString();
  ExpectRefused(SendOnce(daemon.port(), PostRun(old_token)), 401, "unauthenticated", "permission");
  EXPECT_EQ(daemon.provider().runs(), 1);
  ExpectRan(SendOnce(daemon.port(), PostRun(rotated->token)));
  EXPECT_EQ(daemon.provider().runs(), 2);
}

TEST_F(DaemonCallers, ACallersConcurrencyLimitShedsCapacity) {
  std::string token = Create("one-at-a-time", /*max_concurrent=*/1);
  std::string other = Create("other");
  DaemonUnderTest daemon(Options());
  daemon.provider().Hold();  // the first run stays in flight until released
  auto first =
      std::async(std::launch::async, [&] { return SendOnce(daemon.port(), PostRun(token)); });
  while (daemon.provider().runs() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  HttpReply shed = SendOnce(daemon.port(), PostRun(token));
  ExpectRefused(shed, 429, "resource_exhausted", "capacity");
  EXPECT_EQ(daemon.provider().runs(), 1);
  // Another caller is not held back by this caller's own limit.
  auto second =
      std::async(std::launch::async, [&] { return SendOnce(daemon.port(), PostRun(other)); });
  while (daemon.provider().runs() < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  daemon.provider().Release();
  ExpectRan(first.get());
  ExpectRan(second.get());
  // The slot is given back when the run ends.
  ExpectRan(SendOnce(daemon.port(), PostRun(token)));
}

TEST_F(DaemonCallers, ASlowRunHoldsTheCallersOnlySlot) {
  std::string token = Create("slow", /*max_concurrent=*/1);
  DaemonUnderTest daemon(Options());
  // A busy loop stopped by its deadline: in flight for about a second.
  auto first = std::async(std::launch::async, [&] {
    HttpCall call = PostRun(token);
    call.body = RunBody("for (;;) {}", R"("timeout_ms": 1500)");
    return SendOnce(daemon.port(), call);
  });
  while (daemon.provider().runs() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ExpectRefused(SendOnce(daemon.port(), PostRun(token)), 429, "resource_exhausted", "capacity");
  EXPECT_EQ(first.get().status, 200u);
  EXPECT_EQ(daemon.provider().runs(), 1);
}

TEST_F(DaemonCallers, ACallersRateLimitShedsCapacityWithRetryAfter) {
  std::string token = Create("slowpoke", {}, /*rate_per_min=*/1);
  DaemonUnderTest daemon(Options());
  ExpectRan(SendOnce(daemon.port(), PostRun(token)));
  HttpReply shed = SendOnce(daemon.port(), PostRun(token));
  ExpectRefused(shed, 429, "resource_exhausted", "capacity");
  ASSERT_FALSE(shed.Header("retry-after").empty());
  int seconds = std::stoi(shed.Header("retry-after"));
  EXPECT_GE(seconds, 1);
  EXPECT_LE(seconds, 60);
  EXPECT_EQ(daemon.provider().runs(), 1);
  std::string metrics =
      SendOnce(daemon.metrics_port(), {.method = "GET", .target = "/metrics"}).body;
  EXPECT_NE(metrics.find(R"(plimsoll_admission_shed_total{reason="caller_rate"} 1)"),
            std::string::npos)
      << metrics;
}

}  // namespace
}  // namespace plimsoll::daemon::testing
