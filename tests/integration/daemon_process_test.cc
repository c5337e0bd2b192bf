// The plimsolld binary: startup rules, the serving line, SIGTERM drain.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "child_daemon.h"
#include "auth/caller_store.h"
#include "daemon_test_client.h"
#include "plimsoll/embedded_provider.h"

namespace plimsoll::daemon::testing {
namespace {

// A child plimsolld (child_daemon.h).
class Daemon : public ChildDaemon {
 public:
  Daemon(std::vector<std::string> args, std::vector<std::string> environment)
      : ChildDaemon(PLIMSOLLD_BINARY, std::move(args), std::move(environment)) {}
};

const std::vector<std::string> kLoopback = {"--listen", "127.0.0.1:0", "--metrics-listen",
                                            "127.0.0.1:0"};

std::vector<std::string> With(std::vector<std::string> extra) {
  std::vector<std::string> args = kLoopback;
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(DaemonProcess, ServesThenDrainsOnSigtermAndExitsZero) {
  Daemon daemon(With({"--provider", "embedded", "--dev"}), {"PLIMSOLL_TYPO=1"});
  std::string line = daemon.ReadLine();
  uint16_t port = ApiPortFrom(line);
  ASSERT_NE(port, 0) << line << daemon.ReadStderr();
  HttpReply reply =
      SendOnce(port, {.method = "POST",
                      .target = "/v1/runs",
                      .body = R"j({"protocol":1,"javascript":{"code":"console.log(6*7)"}})j"});
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(nlohmann::json::parse(reply.body)["stdout"], "42\n");
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
  std::string log = daemon.ReadStderr();
  EXPECT_NE(log.find("DEVELOPMENT MODE"), std::string::npos) << log;
  EXPECT_NE(log.find("PLIMSOLL_TYPO is set"), std::string::npos) << log;
  EXPECT_NE(log.find("draining"), std::string::npos) << log;
}

TEST(DaemonProcess, ARealProviderWithoutCallersOrDevRefusesToStart) {
  Daemon daemon(With({"--provider", "embedded"}), {});
  EXPECT_EQ(daemon.Wait(), 2);
  EXPECT_NE(daemon.ReadStderr().find("--dev"), std::string::npos);
}

TEST(DaemonProcess, TheDisabledProviderStartsWithoutDev) {
  Daemon daemon(kLoopback, {});
  uint16_t port = ApiPortFrom(daemon.ReadLine());
  ASSERT_NE(port, 0);
  HttpReply reply = SendOnce(port, {.method = "GET", .target = "/v1/describe"});
  EXPECT_EQ(reply.status, 401u);
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

TEST(DaemonProcess, DevRefusesANonLoopbackListener) {
  Daemon daemon(
      {"--provider", "embedded", "--dev", "--listen", "0.0.0.0:0", "--metrics-listen", "off"}, {});
  EXPECT_EQ(daemon.Wait(), 2);
  EXPECT_NE(daemon.ReadStderr().find("loopback"), std::string::npos);
}

TEST(DaemonProcess, MinimumIsolationAboveTheEvidenceStopsTheStart) {
  Daemon daemon(With({"--provider", "embedded", "--dev"}), {"SANDBOX_MIN_ISOLATION=container"});
  EXPECT_EQ(daemon.Wait(), 1);
  EXPECT_NE(daemon.ReadStderr().find("SANDBOX_MIN_ISOLATION"), std::string::npos);
}

TEST(DaemonProcess, APinnedEnvironmentThatDiffersStopsTheStart) {
  const std::string other = "sha256:" + std::string(64, '0');
  Daemon daemon(With({"--provider", "embedded", "--dev", "--pin-environment", other}), {});
  EXPECT_EQ(daemon.Wait(), 1);
  EXPECT_NE(daemon.ReadStderr().find("pinned to " + other), std::string::npos)
      << daemon.ReadStderr();
}

TEST(DaemonProcess, ThePinnedEnvironmentStarts) {
  Daemon daemon(
      With({"--provider", "embedded", "--dev", "--pin-environment", EmbeddedEnvironment()}), {});
  uint16_t port = ApiPortFrom(daemon.ReadLine());
  ASSERT_NE(port, 0) << daemon.ReadStderr();
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

TEST(DaemonProcess, RunLimitFlagsBecomeTheProvidersLimits) {
  Daemon daemon(With({"--provider", "embedded", "--dev", "--memory-mb", "128", "--pids", "64",
                      "--max-snippet-timeout-ms", "9000"}),
                {});
  uint16_t port = ApiPortFrom(daemon.ReadLine());
  ASSERT_NE(port, 0) << daemon.ReadStderr();
  HttpReply described = SendOnce(port, {.method = "GET", .target = "/v1/describe"});
  ASSERT_EQ(described.status, 200u) << described.body;
  auto limits = nlohmann::json::parse(described.body)["limits"];
  EXPECT_EQ(limits["memory_bytes"], int64_t{128} << 20);
  EXPECT_EQ(limits["pids"], 64);
  EXPECT_EQ(limits["snippet_timeout_max_ms"], 9000);
  HttpReply refused =
      SendOnce(port, {.method = "POST",
                      .target = "/v1/runs",
                      .body = R"j({"protocol":1,"timeout_ms":10000,"javascript":{"code":"1"}})j"});
  EXPECT_EQ(refused.status, 400u) << refused.body;
  EXPECT_EQ(refused.Header("plimsoll-not-dispatched"), "request");
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

// Every rule has its own test in daemon_hardened_test.cc; here, that the
// binary lists violations and exits 2 instead of serving.
TEST(DaemonProcess, HardenedModeListsWhatIsMissingAndExits2) {
  Daemon daemon(With({"--provider", "embedded", "--dev"}), {"PLIMSOLL_HARDENED=1"});
  EXPECT_EQ(daemon.Wait(), 2);
  std::string log = daemon.ReadStderr();
  EXPECT_NE(log.find("cannot start in hardened mode (PLIMSOLL_HARDENED=1)"), std::string::npos)
      << log;
  EXPECT_NE(log.find("--dev (PLIMSOLL_DEV) turns authentication off"), std::string::npos) << log;
}

using TempStore = TempCallerStore;

HttpReply RunAs(uint16_t port, const std::string& token) {
  HttpCall call{.method = "POST",
                .target = "/v1/runs",
                .body = R"j({"protocol":1,"javascript":{"code":"console.log(6*7)"}})j"};
  call.headers.emplace_back("Authorization", "Bearer " + token);
  return SendOnce(port, call);
}

TEST(DaemonProcess, ARealProviderStartsWithACallerStoreAndAuthenticates) {
  TempStore store;
  auto issued = store.store().Create({.name = "ci", .scopes = {"runs"}});
  ASSERT_TRUE(issued.ok()) << issued.error().ToString();
  Daemon daemon(With({"--provider", "embedded", "--callers", store.path()}), {});
  uint16_t port = ApiPortFrom(daemon.ReadLine());
  ASSERT_NE(port, 0) << daemon.ReadStderr();
  HttpReply ran = RunAs(port, issued->token);
  EXPECT_EQ(ran.status, 200u) << ran.body;
  HttpReply refused = RunAs(port, "plm_" + std::string(43, 'A'));
  EXPECT_EQ(refused.status, 401u) << refused.body;
  EXPECT_EQ(refused.Header("plimsoll-not-dispatched"), "permission");
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
  std::string log = daemon.ReadStderr();
  EXPECT_EQ(log.find(issued->token), std::string::npos);
  EXPECT_EQ(log.find("DEVELOPMENT MODE"), std::string::npos) << log;
}

TEST(DaemonProcess, TheCallerStoreMayComeFromTheEnvironment) {
  TempStore store;
  auto issued = store.store().Create({.name = "ci", .scopes = {"runs"}});
  ASSERT_TRUE(issued.ok()) << issued.error().ToString();
  Daemon daemon(With({"--provider", "embedded"}), {"PLIMSOLL_CALLERS=" + store.path()});
  uint16_t port = ApiPortFrom(daemon.ReadLine());
  ASSERT_NE(port, 0) << daemon.ReadStderr();
  EXPECT_EQ(RunAs(port, issued->token).status, 200u);
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

TEST(DaemonProcess, AStoreWithoutActiveCallersRefusesARealProvider) {
  TempStore store;
  ASSERT_TRUE(store.store().Create({.name = "gone", .scopes = {"runs"}}).ok());
  ASSERT_TRUE(store.store().Revoke("gone").ok());
  Daemon daemon(With({"--provider", "embedded", "--callers", store.path()}), {});
  EXPECT_EQ(daemon.Wait(), 2);
  EXPECT_NE(daemon.ReadStderr().find("no callers"), std::string::npos);
}

TEST(DaemonProcess, AMissingExplicitStoreStopsTheStart) {
  Daemon daemon(With({"--provider", "embedded", "--callers", "/nonexistent/plimsoll/callers.db"}),
                {});
  EXPECT_EQ(daemon.Wait(), 2);
  EXPECT_NE(daemon.ReadStderr().find("/nonexistent/plimsoll/callers.db"), std::string::npos);
}

TEST(DaemonProcess, AnAuditLogFileGets0600AndOneLinePerAnswer) {
  TempStore store;
  auto issued = store.store().Create({.name = "ci", .scopes = {"runs"}});
  ASSERT_TRUE(issued.ok()) << issued.error().ToString();
  std::filesystem::path audit = std::filesystem::path(store.path()).parent_path() / "audit.jsonl";
  Daemon daemon(
      With({"--provider", "embedded", "--callers", store.path(), "--audit-log", audit.string()}),
      {});
  uint16_t port = ApiPortFrom(daemon.ReadLine());
  ASSERT_NE(port, 0) << daemon.ReadStderr();
  HttpReply ran = RunAs(port, issued->token);
  EXPECT_EQ(ran.status, 200u) << ran.body;
  EXPECT_EQ(SendOnce(port, {.method = "GET", .target = "/nowhere"}).status, 404u);
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
  EXPECT_EQ(daemon.ReadStderr().find("audit:"), std::string::npos) << "lines go to the file";

  EXPECT_EQ(std::filesystem::status(audit).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::ifstream in(audit);
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["request_id"], ran.sent_request_id);
  EXPECT_EQ(lines[0]["caller"], "ci");
  EXPECT_EQ(lines[0]["run"]["exit_code"], 0);
  EXPECT_EQ(lines[1]["status"], 404);
  std::ifstream again(audit);
  std::string text((std::istreambuf_iterator<char>(again)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text.find(issued->token), std::string::npos);
  EXPECT_EQ(text.find("console.log"), std::string::npos);
}

TEST(DaemonProcess, AnAuditLogThatCannotBeOpenedStopsTheStart) {
  Daemon daemon(
      With({"--provider", "embedded", "--dev", "--audit-log", "/nonexistent/plimsoll/audit.jsonl"}),
      {});
  EXPECT_EQ(daemon.Wait(), 2);
  std::string log = daemon.ReadStderr();
  EXPECT_NE(log.find("--audit-log"), std::string::npos) << log;
  EXPECT_NE(log.find("/nonexistent/plimsoll/audit.jsonl"), std::string::npos) << log;
}

}  // namespace
}  // namespace plimsoll::daemon::testing
