// The daemon under hostile clients (docs/daemon.md "Connection caps",
// "Development mode", "What callers are told"): caps on open connections
// that stop one peer without starving the others, /healthz unaffected by a
// /readyz flood over a slow preflight, --dev refusing non-loopback Host
// headers, the Unix socket's mode, and refusals that keep host paths, errno
// texts and console output in the log.
//
// Several peers are played from 127.0.0.2, .3, ... (any 127/8 address is
// loopback on Linux), each a raw connection that sends nothing.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <boost/asio/read.hpp>
#include <chrono>
#include <filesystem>
#include <future>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <vector>

#include "auth/caller_store.h"
#include "daemon_fixture.h"

namespace plimsoll::daemon::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using std::chrono::milliseconds;

bool WaitUntil(const std::function<bool()>& condition, milliseconds bound = milliseconds(5000)) {
  auto deadline = std::chrono::steady_clock::now() + bound;
  while (std::chrono::steady_clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(milliseconds(10));
  }
  return condition();
}

double Sample(DaemonUnderTest& daemon, const std::string& series) {
  HttpReply reply = SendOnce(daemon.metrics_port(), {.method = "GET", .target = "/metrics"});
  std::istringstream lines(reply.body);
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(series + " ")) return std::stod(line.substr(series.size() + 1));
  }
  return -1;
}

// Everything the daemon sends on `client`'s connection until it closes it,
// without sending anything first; "" when it stays open for 3 s.
std::string ReadUntilClosed(TestClient& client) {
  client.socket().non_blocking(false);
  std::string received;
  auto done = std::async(std::launch::async, [&] {
    boost::system::error_code error;
    boost::asio::read(client.socket(), boost::asio::dynamic_buffer(received), error);
  });
  if (done.wait_for(std::chrono::seconds(3)) != std::future_status::ready) {
    boost::system::error_code ignored;
    client.socket().shutdown(boost::asio::socket_base::shutdown_both, ignored);
    done.wait();
    return "";
  }
  return received;
}

void ExpectCapRefusal(const std::string& received) {
  EXPECT_TRUE(received.starts_with("HTTP/1.1 503")) << received;
  EXPECT_NE(received.find("Plimsoll-Not-Dispatched: capacity"), std::string::npos) << received;
  EXPECT_NE(received.find("Retry-After: 1"), std::string::npos) << received;
  EXPECT_NE(received.find(R"("not_dispatched":"capacity")"), std::string::npos) << received;
  EXPECT_NE(received.find(R"("code":"resource_exhausted")"), std::string::npos) << received;
}

class HostileClients : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "plimsoll-hostile-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    directory_ = pattern;
    auth::StoreOptions options;
    options.create_if_missing = true;
    auto store = auth::CallerStore::Open(directory_ / "callers.db", options);
    ASSERT_TRUE(store.ok()) << store.error().ToString();
    auto issued = (*store)->Create({.name = "ci", .scopes = {"runs", "describe"}});
    ASSERT_TRUE(issued.ok()) << issued.error().ToString();
    token_ = issued->token;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }

  DaemonOptions Authenticated(size_t max_connections, size_t per_peer) {
    DaemonOptions options;
    options.dev = false;
    options.callers = (directory_ / "callers.db").string();
    options.tune = [=](Settings& settings) {
      settings.max_connections = max_connections;
      settings.max_connections_per_peer = per_peer;
    };
    return options;
  }

  HttpReply AuthenticatedRun(uint16_t port) {
    HttpCall call{.method = "POST", .target = "/v1/runs", .body = RunBody("console.log(6*7)")};
    call.headers.emplace_back("Authorization", "Bearer " + token_);
    return SendOnce(port, call);
  }

  // `count` idle connections from `source`, each accepted by the daemon.
  std::vector<std::unique_ptr<TestClient>> Hold(DaemonUnderTest& daemon, const std::string& source,
                                                size_t count) {
    std::vector<std::unique_ptr<TestClient>> held;
    for (size_t i = 0; i < count; ++i) {
      held.push_back(std::make_unique<TestClient>(daemon.port(), source));
    }
    EXPECT_TRUE(WaitUntil([&] {
      return daemon.server().api_limiter().open_for("ip:" + source) == count;
    })) << daemon.server().api_limiter().open_for("ip:" + source);
    return held;
  }

  fs::path directory_;
  std::string token_;
};

TEST_F(HostileClients, PerPeerCapStopsOnePeerWithoutStarvingOthers) {
  DaemonUnderTest daemon(Authenticated(/*max_connections=*/16, /*per_peer=*/4));
  auto held = Hold(daemon, "127.0.0.2", 4);

  TestClient over(daemon.port(), "127.0.0.2");
  ExpectCapRefusal(ReadUntilClosed(over));
  EXPECT_EQ(daemon.server().api_limiter().open_for("ip:127.0.0.2"), 4u);

  // Another peer is served while the hostile one sits at its cap.
  HttpReply ran = AuthenticatedRun(daemon.port());
  ASSERT_EQ(ran.status, 200u) << ran.body;
  EXPECT_EQ(json::parse(ran.body)["stdout"], "42\n");
  EXPECT_EQ(Sample(daemon, R"(plimsoll_connections_rejected_total{reason="peer"})"), 1);
  EXPECT_EQ(Sample(daemon, R"(plimsoll_connections_rejected_total{reason="global"})"), 0);
}

TEST_F(HostileClients, GlobalCapRefusesUntilAConnectionCloses) {
  DaemonUnderTest daemon(Authenticated(/*max_connections=*/4, /*per_peer=*/2));
  auto first = Hold(daemon, "127.0.0.2", 2);
  auto second = Hold(daemon, "127.0.0.3", 2);

  TestClient over(daemon.port(), "127.0.0.4");
  ExpectCapRefusal(ReadUntilClosed(over));
  EXPECT_EQ(Sample(daemon, R"(plimsoll_connections_rejected_total{reason="global"})"), 1);
  // The gauge reads the API listener's four held connections (the scrape's
  // own is on the metrics listener).
  EXPECT_EQ(Sample(daemon, R"(plimsoll_connections_open{listener="api"})"), 4);

  first.pop_back();  // one place frees up
  ASSERT_TRUE(WaitUntil([&] { return daemon.server().api_limiter().open() == 3; }));
  HttpReply ran = AuthenticatedRun(daemon.port());
  ASSERT_EQ(ran.status, 200u) << ran.body;
}

TEST(ReadinessFlood, DoesNotDelayHealthz) {
  // One event-loop thread, so a preflight on it would stall /healthz for the
  // whole flood. The bound: /healthz answers within 500 ms (on an idle
  // machine it takes about a millisecond) while 24 /readyz wait on a 1.5 s
  // preflight.
  constexpr auto kHealthzBound = milliseconds(500);
  DaemonUnderTest daemon(
      {.unix_socket = {}, .tune = [](Settings& settings) { settings.io_threads = 1; }});
  daemon.provider().SlowPreflight(milliseconds(1500));
  int preflights_before = daemon.provider().preflights();

  std::vector<std::future<unsigned>> flood;
  for (int i = 0; i < 24; ++i) {
    flood.push_back(std::async(std::launch::async, [&] {
      return SendOnce(daemon.port(), {.method = "GET", .target = "/readyz"}).status;
    }));
  }
  std::this_thread::sleep_for(milliseconds(200));  // the flood is in
  for (int i = 0; i < 5; ++i) {
    auto started = std::chrono::steady_clock::now();
    HttpReply health = SendOnce(daemon.port(), {.method = "GET", .target = "/healthz"});
    auto took = std::chrono::steady_clock::now() - started;
    EXPECT_EQ(health.status, 200u);
    EXPECT_LT(took, kHealthzBound)
        << std::chrono::duration_cast<milliseconds>(took).count() << " ms";
  }
  for (auto& answer : flood) EXPECT_EQ(answer.get(), 200u);
  // Coalesced: the 24 requests shared at most two preflights.
  EXPECT_LE(daemon.provider().preflights() - preflights_before, 2);
}

TEST(DevHost, RefusesNonLoopbackHostNames) {
  DaemonUnderTest daemon;  // --dev
  for (const char* host : {"attacker.example", "attacker.example:8470", "10.0.0.1"}) {
    HttpReply reply = SendOnce(daemon.port(), {.method = "POST",
                                               .target = "/v1/runs",
                                               .body = RunBody("console.log(1)"),
                                               .host = std::string(host)});
    EXPECT_EQ(reply.status, 421u) << host;
    EXPECT_EQ(reply.Header("plimsoll-not-dispatched"), "request") << host;
    EXPECT_EQ(reply.Header("plimsoll-request-id"), reply.sent_request_id);
    json error = json::parse(reply.body)["error"];
    EXPECT_EQ(error["code"], "invalid_argument");
    EXPECT_EQ(error["not_dispatched"], "request");
  }
  HttpReply none = SendOnce(daemon.port(), {.method = "GET", .target = "/healthz", .host = {}});
  EXPECT_EQ(none.status, 421u);
  EXPECT_EQ(daemon.provider().runs(), 0);

  const std::string port = std::to_string(daemon.port());
  for (const std::string& host : std::vector<std::string>{"localhost:" + port, "127.0.0.1:" + port,
                                                          "127.0.0.1", "localhost"}) {
    HttpReply reply = SendOnce(daemon.port(), {.method = "POST",
                                               .target = "/v1/runs",
                                               .body = RunBody("console.log(6*7)"),
                                               .host = host});
    EXPECT_EQ(reply.status, 200u) << host << ": " << reply.body;
  }
}

TEST_F(HostileClients, WithoutDevAnyHostIsServed) {
  // Outside --dev the bearer token is the defence; a proxy may name any host.
  DaemonUnderTest daemon(Authenticated(16, 4));
  HttpCall call{.method = "POST",
                .target = "/v1/runs",
                .body = RunBody("console.log(6*7)"),
                .host = std::string("plimsoll.internal.example")};
  call.headers.emplace_back("Authorization", "Bearer " + token_);
  EXPECT_EQ(SendOnce(daemon.port(), call).status, 200u);
}

class UnixSocketMode : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "plimsoll-unix-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    directory_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }
  mode_t ModeOf(const fs::path& path) {
    struct stat info {};
    EXPECT_EQ(::lstat(path.c_str(), &info), 0) << path;
    EXPECT_TRUE(S_ISSOCK(info.st_mode));
    return info.st_mode & 07777;
  }
  fs::path directory_;
};

TEST_F(UnixSocketMode, IsOwnerOnlyByDefault) {
  mode_t old_mask = ::umask(0022);  // what most shells have: bind would make 0755
  fs::path socket = directory_ / "api.sock";
  {
    DaemonUnderTest daemon({.unix_socket = socket.string(), .tune = {}});
    EXPECT_EQ(ModeOf(socket), 0600u);
  }
  ::umask(old_mask);
}

TEST_F(UnixSocketMode, TakesTheModeGiven) {
  fs::path socket = directory_ / "api.sock";
  DaemonUnderTest daemon({.unix_socket = socket.string(),
                          .tune = [](Settings& settings) { settings.unix_socket_mode = 0660; }});
  EXPECT_EQ(ModeOf(socket), 0660u);
}

// A provider's refusal whose text holds a host path, an errno text and
// console output (with a newline and an escape sequence).
const std::string kProviderDetail =
    "mount /var/lib/plimsoll/images/5f1e/rootfs on /run/plimsoll/sb-7/root: No such file or "
    "directory; the console said: [    0.41] \x1b[31mKernel panic\x1b[0m\nnot syncing";

void ExpectNoHostDetail(const HttpReply& reply) {
  std::string message = json::parse(reply.body)["error"]["message"];
  EXPECT_EQ(message.find('/'), std::string::npos) << message;
  EXPECT_EQ(message.find("No such file"), std::string::npos) << message;
  EXPECT_EQ(message.find("panic"), std::string::npos) << message;
  EXPECT_EQ(reply.body.find("rootfs"), std::string::npos) << reply.body;
  std::string error_id = reply.Header("plimsoll-error-id");
  EXPECT_EQ(error_id.size(), 32u);
  EXPECT_NE(message.find(error_id), std::string::npos) << message;
}

// The operator log's line that names `error_id`; "" when none does.
std::string LogLineOf(DaemonUnderTest& daemon, const std::string& error_id) {
  std::istringstream lines(daemon.log_text());
  for (std::string line; std::getline(lines, line);) {
    if (line.find(error_id) != std::string::npos && line.find("audit") == std::string::npos) {
      return line;
    }
  }
  return "";
}

TEST(ProviderErrors, EnvironmentRefusalsAreSummarisedAndTheDetailIsLogged) {
  DaemonUnderTest daemon;
  daemon.provider().FailRunsWithError(Refusal(NotDispatched::kEnvironment, kProviderDetail));
  HttpReply reply = SendOnce(
      daemon.port(), {.method = "POST", .target = "/v1/runs", .body = RunBody("console.log(1)")});
  EXPECT_EQ(reply.status, 409u) << reply.body;
  EXPECT_EQ(reply.Header("plimsoll-not-dispatched"), "environment");
  EXPECT_EQ(json::parse(reply.body)["error"]["not_dispatched"], "environment");
  EXPECT_EQ(json::parse(reply.body)["error"]["code"], "failed_precondition");
  ExpectNoHostDetail(reply);

  std::string line = LogLineOf(daemon, reply.Header("plimsoll-error-id"));
  EXPECT_NE(line.find("/var/lib/plimsoll/images/5f1e/rootfs"), std::string::npos) << line;
  EXPECT_NE(line.find("No such file or directory"), std::string::npos) << line;
  // One line: the console's newline and escape sequence are escaped.
  EXPECT_NE(line.find("\\x1b[31mKernel panic\\x1b[0m\\nnot syncing"), std::string::npos) << line;
}

TEST(ProviderErrors, FailuresAfterDispatchAndLateStartsAreSummarisedToo) {
  DaemonUnderTest daemon;
  daemon.provider().FailRunsWithError(Failure(ErrorCode::kDataLoss, kProviderDetail));
  HttpReply failed = SendOnce(
      daemon.port(), {.method = "POST", .target = "/v1/runs", .body = RunBody("console.log(1)")});
  EXPECT_EQ(failed.status, 502u) << failed.body;
  EXPECT_EQ(failed.Count("plimsoll-not-dispatched"), 0u);
  EXPECT_EQ(json::parse(failed.body)["error"]["code"], "data_loss");
  ExpectNoHostDetail(failed);
  EXPECT_NE(LogLineOf(daemon, failed.Header("plimsoll-error-id")).find("rootfs"),
            std::string::npos);

  daemon.provider().FailRunsWithError(Refusal(NotDispatched::kCapacity, kProviderDetail));
  HttpReply late = SendOnce(
      daemon.port(), {.method = "POST", .target = "/v1/runs", .body = RunBody("console.log(1)")});
  EXPECT_EQ(late.Header("plimsoll-not-dispatched"), "capacity");
  ExpectNoHostDetail(late);
}

// Opening a session makes a sandbox too: what the provider says when it
// cannot is summarised the same way (the detail goes to the log).
TEST(ProviderErrors, SessionOpenFailuresAreSummarisedLikeRuns) {
  DaemonUnderTest daemon;
  daemon.provider().FailSessionOpensWithError(
      Refusal(NotDispatched::kEnvironment, kProviderDetail));
  HttpReply refused = SendOnce(
      daemon.port(), {.method = "POST", .target = "/v1/sessions", .body = R"({"protocol":1})"});
  EXPECT_EQ(refused.status, 409u) << refused.body;
  EXPECT_EQ(refused.Header("plimsoll-not-dispatched"), "environment");
  ExpectNoHostDetail(refused);
  EXPECT_NE(LogLineOf(daemon, refused.Header("plimsoll-error-id")).find("rootfs"),
            std::string::npos);

  daemon.provider().FailSessionOpensWithError(Failure(ErrorCode::kDataLoss, kProviderDetail));
  HttpReply failed = SendOnce(
      daemon.port(), {.method = "POST", .target = "/v1/sessions", .body = R"({"protocol":1})"});
  EXPECT_EQ(failed.Count("plimsoll-not-dispatched"), 0u) << failed.body;
  ExpectNoHostDetail(failed);
}

TEST(ProviderErrors, RequestRefusalsKeepTheirMessage) {
  DaemonUnderTest daemon;
  daemon.provider().FailRunsWithError(
      Refusal(NotDispatched::kUnsupported, "This provider does not run projects."));
  HttpReply reply = SendOnce(
      daemon.port(), {.method = "POST", .target = "/v1/runs", .body = RunBody("console.log(1)")});
  EXPECT_EQ(json::parse(reply.body)["error"]["message"], "This provider does not run projects.");
  EXPECT_EQ(reply.Count("plimsoll-error-id"), 0u);
}

}  // namespace
}  // namespace plimsoll::daemon::testing
