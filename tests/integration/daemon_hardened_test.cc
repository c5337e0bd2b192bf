// Hardened mode (PLIMSOLL_HARDENED=1) and the cleartext warning, through the
// real plimsolld binary: exit statuses and every sentence on stderr.
//
// Only the oci provider with runsc (gVisor) proves tier kernel here: with it
// and every other safeguard, a hardened daemon starts and runs code (skipped
// where runsc or the guest image is missing); with a weaker provider, a
// daemon with every other safeguard in place is refused for that one reason.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "child_daemon.h"
#include "common/host_preconditions.h"
#include "auth/caller_store.h"
#include "daemon/http/test_certificate.h"
#include "daemon_test_client.h"
#include "plimsoll/embedded_provider.h"

namespace plimsoll::daemon::testing {
namespace {

using std::chrono::milliseconds;

// A child plimsolld (child_daemon.h).
class Plimsolld : public ChildDaemon {
 public:
  Plimsolld(std::vector<std::string> args, std::vector<std::string> environment)
      : ChildDaemon(PLIMSOLLD_BINARY, std::move(args), std::move(environment)) {}
};

constexpr milliseconds kExitBound{30'000};

const std::vector<std::string> kAllLimits = {"--memory-mb",
                                             "256",
                                             "--cpus-millis",
                                             "1000",
                                             "--pids",
                                             "256",
                                             "--tmp-mb",
                                             "16",
                                             "--work-mb",
                                             "128",
                                             "--output-cap-kb",
                                             "64",
                                             "--max-snippet-timeout-ms",
                                             "30000",
                                             "--max-project-timeout-ms",
                                             "120000"};

std::vector<std::string> Concat(std::vector<std::string> first,
                                const std::vector<std::string>& second) {
  first.insert(first.end(), second.begin(), second.end());
  return first;
}

// The daemon's log is one line per event: a newline in a message is
// written as the two characters \n (daemon/log.h).
void ExpectHas(const std::string& log, const std::string& part) {
  std::string escaped;
  for (char c : part) escaped += c == '\n' ? std::string("\\n") : std::string(1, c);
  EXPECT_NE(log.find(escaped), std::string::npos) << "missing: " << escaped << "\nin:\n" << log;
}

using TempStore = TempCallerStore;

TEST(DaemonHardened, EveryViolationIsListedAtOnceWithExit2) {
  Plimsolld daemon({"--provider", "embedded", "--dev", "--listen", "127.0.0.1:0",
                    "--metrics-listen", "0.0.0.0:0", "--pids", "128"},
                   {"PLIMSOLL_HARDENED=1"});
  ASSERT_EQ(daemon.Wait(kExitBound), 2);
  std::string log = daemon.ReadStderr();
  ExpectHas(log,
            "plimsolld cannot start in hardened mode (PLIMSOLL_HARDENED=1): 6 safeguard(s) "
            "missing:");
  ExpectHas(log,
            "  - The embedded provider can prove at most tier process, but hardened mode "
            "needs tier kernel or vm proven at startup");
  ExpectHas(log, "  - --dev (PLIMSOLL_DEV) turns authentication off");
  ExpectHas(log, "  - No caller store with an active caller is loaded");
  ExpectHas(log, "  - --metrics-listen 0.0.0.0:0 is not a loopback address and TLS is off");
  ExpectHas(log, "  - No environment identity is pinned");
  ExpectHas(log,
            "  - Per-run resource limits are not all explicit; hardened mode does not run on "
            "this build's defaults: set --memory-mb, --cpus-millis, --tmp-mb, --work-mb, "
            "--output-cap-kb, --max-snippet-timeout-ms and --max-project-timeout-ms.");
  EXPECT_EQ(log.find("DEVELOPMENT MODE"), std::string::npos) << "got as far as the dev banner";
  EXPECT_EQ(log.find("--listen 127.0.0.1:0 is not"), std::string::npos);
}

TEST(DaemonHardened, CallersWithoutLimitsOrAboveTheGlobalOneAreNamed) {
  TempStore store;
  ASSERT_TRUE(store.store().Create({.name = "unlimited", .scopes = {"runs"}}).ok());
  ASSERT_TRUE(
      store.store()
          .Create({.name = "greedy", .scopes = {"runs"}, .max_concurrent = 10, .rate_per_min = 60})
          .ok());
  ASSERT_TRUE(
      store.store()
          .Create({.name = "fine", .scopes = {"runs"}, .max_concurrent = 2, .rate_per_min = 60})
          .ok());
  ASSERT_TRUE(store.store().Create({.name = "gone", .scopes = {"runs"}}).ok());
  ASSERT_TRUE(store.store().Revoke("gone").ok());  // revoked: cannot run, not judged
  Plimsolld daemon(Concat({"--provider", "embedded", "--callers", store.path(), "--listen",
                           "127.0.0.1:0", "--metrics-listen", "off", "--pin-environment",
                           EmbeddedEnvironment(), "--max-concurrent-runs", "4"},
                          kAllLimits),
                   {"PLIMSOLL_HARDENED=1"});
  ASSERT_EQ(daemon.Wait(kExitBound), 2);
  std::string log = daemon.ReadStderr();
  ExpectHas(log, "3 safeguard(s) missing:");
  ExpectHas(log, "can prove at most tier process");
  ExpectHas(log,
            "  - The caller \"unlimited\" has no concurrency or rate limit; hardened mode "
            "needs both on every caller: revoke it and create it again with "
            "--max-concurrent and --rate-per-min (plimsoll callers).");
  ExpectHas(log,
            "  - The caller \"greedy\" may run 10 at once, more than the global "
            "--max-concurrent-runs (4)");
  EXPECT_EQ(log.find("\"fine\""), std::string::npos) << log;
  EXPECT_EQ(log.find("\"gone\""), std::string::npos) << log;
}

TEST(DaemonHardened, WithEveryOtherSafeguardOnlyTheTierKeepsItFromStarting) {
  TempStore store;
  ASSERT_TRUE(
      store.store()
          .Create({.name = "ci", .scopes = {"runs"}, .max_concurrent = 2, .rate_per_min = 60})
          .ok());
  http::testing::TestCertificate certificate;
  Plimsolld daemon(
      Concat({"--provider", "embedded", "--callers", store.path(), "--listen", "0.0.0.0:0",
              "--metrics-listen", "0.0.0.0:0", "--tls-cert", certificate.certificate_path(),
              "--tls-key", certificate.key_path(), "--pin-environment", EmbeddedEnvironment(),
              "--max-concurrent-runs", "4"},
             kAllLimits),
      {"PLIMSOLL_HARDENED=1"});
  ASSERT_EQ(daemon.Wait(kExitBound), 2);
  std::string log = daemon.ReadStderr();
  ExpectHas(log,
            "1 safeguard(s) missing:\n  - The embedded provider can prove at most tier "
            "process, but hardened mode needs tier kernel or vm proven at startup; choose a "
            "provider that reaches it with --provider / SANDBOX_PROVIDER");
}

TEST(DaemonHardened, WithGvisorsKernelTierAndEverySafeguardItStartsAndRunsCode) {
  PLIMSOLL_REQUIRE_HOST("oci:runsc");
  const char* image = std::getenv("PLIMSOLL_IMAGE");
  std::string identity;
  if (image != nullptr) std::ifstream(std::string(image) + "/identity") >> identity;
  ASSERT_FALSE(identity.empty()) << "the guest image has no identity (PLIMSOLL_IMAGE)";
  TempStore store;
  auto issued = store.store().Create(
      {.name = "ci", .scopes = {"runs"}, .max_concurrent = 2, .rate_per_min = 600});
  ASSERT_TRUE(issued.ok());
  std::string state = "/run/plimsoll-hardened-test-" + std::to_string(getpid());
  Plimsolld daemon(Concat({"--provider", "oci:runsc", "--callers", store.path(), "--listen",
                           "127.0.0.1:0", "--metrics-listen", "127.0.0.1:0", "--pin-environment",
                           identity, "--max-concurrent-runs", "4"},
                          kAllLimits),
                   {"PLIMSOLL_HARDENED=1", "PLIMSOLL_IMAGE=" + std::string(image),
                    "SANDBOX_OCI_STATE_DIR=" + state, "SANDBOX_OCI_POOL_SIZE=1",
                    "PATH=/usr/sbin:/usr/bin:/sbin:/bin"});
  uint16_t port = ApiPortFrom(daemon.ReadLine(std::chrono::milliseconds(120'000)));
  ASSERT_NE(port, 0) << daemon.ReadStderr();
  HttpReply ran = SendOnce(port, {.method = "POST",
                                  .target = "/v1/runs",
                                  .body = R"j({"protocol":1,"minimum_isolation":"kernel",)j"
                                          R"j("javascript":{"code":"console.log(6*7)"}})j",
                                  .headers = {{"Authorization", "Bearer " + issued->token}}});
  ASSERT_EQ(ran.status, 200u) << ran.body;
  auto result = nlohmann::json::parse(ran.body);
  EXPECT_EQ(result["isolation"], "kernel") << ran.body;
  EXPECT_EQ(result["stdout"], "42\n") << ran.body;
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(std::chrono::milliseconds(60'000)), 0) << daemon.ReadStderr();
  std::error_code error;
  std::filesystem::remove_all(state, error);
}

TEST(DaemonHardened, AnUnreadableHardenedValueIsABadSetting) {
  Plimsolld daemon({"--listen", "127.0.0.1:0", "--metrics-listen", "off"},
                   {"PLIMSOLL_HARDENED=maybe"});
  ASSERT_EQ(daemon.Wait(kExitBound), 2);
  ExpectHas(daemon.ReadStderr(), "PLIMSOLL_HARDENED must be 1 or 0");
}

TEST(DaemonHardened, OutsideHardenedModeACleartextListenerStartsWithAWarning) {
  // The disabled provider needs neither callers nor --dev, so 0.0.0.0 is allowed.
  Plimsolld daemon({"--listen", "0.0.0.0:0", "--metrics-listen", "off"}, {});
  std::string line = daemon.ReadLine(kExitBound);
  ASSERT_NE(line.find("plimsolld: serving api=0.0.0.0:"), std::string::npos) << line;
  daemon.Signal(SIGTERM);
  ASSERT_EQ(daemon.Wait(kExitBound), 0);
  ExpectHas(daemon.ReadStderr(),
            "--listen 0.0.0.0:0 is not a loopback address and TLS is off: "
            "bearer tokens, code and outputs cross the network in cleartext.");
}

}  // namespace
}  // namespace plimsoll::daemon::testing
