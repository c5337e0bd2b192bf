// plimsoll::Client and `plimsoll run|describe --daemon` against a real
// in-process plimsolld (daemon_fixture.h: the embedded provider behind a
// counting wrapper, 127.0.0.1 port 0), over TCP and a Unix socket.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "cli/cli_test_support.h"
#include "cli/cli.h"
#include "cli/exit_status.h"
#include "auth/caller_store.h"
#include "daemon_fixture.h"
#include "net/testing/test_certificate.h"
#include "plimsoll/client.h"
#include "plimsoll/record.h"

namespace plimsoll::daemon::testing {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::string Url(const DaemonUnderTest& daemon) {
  return "http://127.0.0.1:" + std::to_string(daemon.port());
}

Client OpenOrDie(const std::string& url, ClientOptions options = {}) {
  auto client = Client::Open(url, std::move(options));
  if (!client.ok()) throw std::runtime_error(client.error().ToString());
  return std::move(*client);
}

Request Snippet(std::string code = "console.log(6*7)") {
  Request request;
  request.javascript = JavascriptPayload{std::move(code)};
  return request;
}

using cli::Outcome;
constexpr auto& Cli = cli::Invoke;

// A temporary directory removed at the end of the test.
class TemporaryDirectory {
 public:
  TemporaryDirectory() {
    std::string pattern = (fs::temp_directory_path() / "plimsoll-client-it-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TemporaryDirectory() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

TEST(DaemonClient, ARunComesBackWithItsRecordVerified) {
  DaemonUnderTest daemon;
  Client client = OpenOrDie(Url(daemon));
  Request request = Snippet();
  request.minimum_isolation = "process";
  request.timeout_ms = 5000;
  request.trace_id = "client-it-1";
  Expected<Result> result = client.Run(request);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(result->stdout_bytes, "42\n");
  EXPECT_EQ(result->exit_code, 0);
  EXPECT_EQ(result->provider, "embedded");
  EXPECT_EQ(result->isolation, Tier::kProcess);
  // The client has already checked the exchange; check it again here, so the
  // test does not rest on the code under test alone.
  EXPECT_TRUE(CheckExchange(request, *result).ok());
  EXPECT_EQ(result->record.request_sha256, RequestDigest(request));
  EXPECT_EQ(result->record.record_sha256, RecordDigest(result->record));
  EXPECT_EQ(daemon.provider().runs(), 1);
}

Request JavascriptCell(std::string code) {
  Request request;
  request.cell = CellPayload{"javascript", std::move(code)};
  return request;
}

TEST(DaemonClient, ASessionsCallsComeBackChainedAndTheCloseNamesTheLast) {
  DaemonUnderTest daemon;
  Client client = OpenOrDie(Url(daemon));
  Expected<SessionInfo> session = client.OpenSession(SessionOpenRequest{});
  ASSERT_TRUE(session.ok()) << session.error().ToString();
  EXPECT_EQ(session->isolation, Tier::kProcess);
  ChainState chain;
  ASSERT_TRUE(client.RunInSession(session->id, JavascriptCell("let x = 41"), chain).ok());
  Expected<Result> second = client.RunInSession(session->id, JavascriptCell("x + 1"), chain);
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_EQ(second->cell->value, "42");
  EXPECT_EQ(chain.last_sequence, 2);
  EXPECT_EQ(chain.session_sha256, SessionIdDigest(session->id));
  Expected<SessionClose> closed = client.CloseSession(session->id, chain);
  ASSERT_TRUE(closed.ok()) << closed.error().ToString();
  EXPECT_EQ(closed->ended, SessionEndReason::kClosed);
  EXPECT_EQ(closed->calls, 2);
}

TEST(DaemonClient, AnAnswerFromAnotherSessionOrOutOfOrderIsDataLoss) {
  DaemonUnderTest daemon;
  Client client = OpenOrDie(Url(daemon));
  Expected<SessionInfo> first = client.OpenSession(SessionOpenRequest{});
  Expected<SessionInfo> second = client.OpenSession(SessionOpenRequest{});
  ASSERT_TRUE(first.ok() && second.ok());
  ChainState chain;
  ASSERT_TRUE(client.RunInSession(first->id, JavascriptCell("1"), chain).ok());
  // The same chain state used for another session: the record names a
  // foreign session.
  ChainState kept = chain;
  Expected<Result> foreign = client.RunInSession(second->id, JavascriptCell("2"), chain);
  ASSERT_FALSE(foreign.ok());
  EXPECT_EQ(foreign.error().code(), ErrorCode::kDataLoss);
  EXPECT_FALSE(NotDispatchedReason(foreign.error()).has_value()) << "code ran: never retry";
  EXPECT_EQ(chain.last_sequence, kept.last_sequence) << "a refused answer does not advance it";
  // A fresh chain for a session that has had a call: its record is call 2,
  // not the 1 a new chain expects.
  ChainState stranger;
  Expected<Result> reordered = client.RunInSession(first->id, JavascriptCell("3"), stranger);
  ASSERT_FALSE(reordered.ok());
  EXPECT_EQ(reordered.error().code(), ErrorCode::kDataLoss);
  // That call ran all the same, so the kept chain now finds a gap (call 3
  // after call 1).
  Expected<Result> after_gap = client.RunInSession(first->id, JavascriptCell("4"), chain);
  ASSERT_FALSE(after_gap.ok());
  EXPECT_EQ(after_gap.error().code(), ErrorCode::kDataLoss);
  // And a close that names more calls than the client saw.
  Expected<SessionClose> closed = client.CloseSession(first->id, kept);
  ASSERT_FALSE(closed.ok());
  EXPECT_EQ(closed.error().code(), ErrorCode::kDataLoss);
}

TEST(DaemonClient, ANonZeroExitIsAResult) {
  DaemonUnderTest daemon;
  Client client = OpenOrDie(Url(daemon));
  Expected<Result> result = client.Run(Snippet("throw new Error('boom')"));
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_NE(result->exit_code, 0);
  EXPECT_NE(result->stderr_bytes.find("boom"), std::string::npos) << result->stderr_bytes;
}

TEST(DaemonClient, AFloorRefusalComesBackMarkedAndNothingRan) {
  DaemonUnderTest daemon;
  Client client = OpenOrDie(Url(daemon));
  Request request = Snippet();
  request.minimum_isolation = "container";
  Expected<Result> result = client.Run(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kIsolation)
      << result.error().ToString();
  EXPECT_EQ(result.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(daemon.provider().runs(), 0);
}

TEST(DaemonClient, OtherRefusalsKeepTheirMarks) {
  DaemonUnderTest daemon;
  Client client = OpenOrDie(Url(daemon));
  Request wrong_protocol = Snippet();
  wrong_protocol.protocol = 2;
  EXPECT_EQ(NotDispatchedReason(client.Run(wrong_protocol).error()), NotDispatched::kProtocol);
  Request too_long = Snippet();
  too_long.timeout_ms = 10'000'000;
  EXPECT_EQ(NotDispatchedReason(client.Run(too_long).error()), NotDispatched::kRequest);
  EXPECT_EQ(daemon.provider().runs(), 0) << "refused before the provider";
  // The embedded provider refuses Python itself (inside Run): still marked.
  Request python = Request{};
  python.python = PythonPayload{"print(1)"};
  EXPECT_EQ(NotDispatchedReason(client.Run(python).error()), NotDispatched::kUnsupported);
  EXPECT_EQ(client.connections_opened(), 1) << "refusals keep the connection alive";
}

TEST(DaemonClient, DescribeShowsTheProviderItsTierAndEvidence) {
  DaemonUnderTest daemon;
  Client client = OpenOrDie(Url(daemon));
  Expected<DaemonDescription> described = client.Describe();
  ASSERT_TRUE(described.ok()) << described.error().ToString();
  EXPECT_EQ(described->protocol, kProtocol);
  EXPECT_EQ(described->description.provider, "embedded");
  EXPECT_EQ(described->tier, Tier::kProcess);
  EXPECT_EQ(described->description.tier, Tier::kProcess);
  ASSERT_TRUE(described->evidence.has_value());
  EXPECT_TRUE(described->evidence->AllChecksPassed());
  EXPECT_GT(described->description.limits.snippet_timeout_max_ms, 0);
  EXPECT_TRUE(client.Healthz().ok());
}

TEST(DaemonClient, KeepAliveCarriesManyCallsOnOneConnection) {
  DaemonUnderTest daemon;
  Client client = OpenOrDie(Url(daemon));
  ASSERT_TRUE(client.Run(Snippet()).ok());
  ASSERT_TRUE(client.Describe().ok());
  ASSERT_TRUE(client.Healthz().ok());
  Request refused = Snippet();
  refused.minimum_isolation = "vm";
  ASSERT_FALSE(client.Run(refused).ok());
  ASSERT_TRUE(client.Run(Snippet()).ok());
  EXPECT_EQ(client.connections_opened(), 1);
  EXPECT_EQ(daemon.server().open_connections(), 1u);
  EXPECT_EQ(daemon.provider().runs(), 2);
}

TEST(DaemonClient, AnIdleConnectionTheDaemonClosedIsReplaced) {
  DaemonUnderTest daemon(
      {.tune = [](Settings& settings) { settings.http.idle_timeout = milliseconds(100); }});
  Client client = OpenOrDie(Url(daemon));
  ASSERT_TRUE(client.Run(Snippet()).ok());
  // Wait (bounded) until the daemon has closed the idle connection.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (daemon.server().open_connections() != 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  ASSERT_EQ(daemon.server().open_connections(), 0u);
  Expected<Result> again = client.Run(Snippet());
  ASSERT_TRUE(again.ok()) << again.error().ToString();
  EXPECT_EQ(client.connections_opened(), 2);
}

TEST(DaemonClient, ARunThatOutlivesTheClientsBoundMayHaveRun) {
  DaemonUnderTest daemon;
  daemon.provider().Hold();
  Client client = OpenOrDie(Url(daemon), {.run_timeout_margin = milliseconds(200)});
  Request request = Snippet();
  request.timeout_ms = 100;
  Expected<Result> result = client.Run(request);
  daemon.provider().Release();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kDeadlineExceeded);
  EXPECT_FALSE(NotDispatchedReason(result.error()).has_value());
  EXPECT_EQ(daemon.provider().runs(), 1) << "it was dispatched: no mark is right";
}

TEST(DaemonClient, AnInternalErrorAfterDispatchIsUnmarked) {
  DaemonUnderTest daemon;
  daemon.provider().FailRunsWith("the sandbox fell over");
  Client client = OpenOrDie(Url(daemon));
  Expected<Result> result = client.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kInternal);
  EXPECT_FALSE(NotDispatchedReason(result.error()).has_value());
  EXPECT_EQ(result.error().message().find("fell over"), std::string::npos)
      << "internal details stay in the daemon's log";
}

TEST(DaemonClient, TheUnixSocketCarriesTheSameCalls) {
  TemporaryDirectory directory;
  std::string socket = (directory.path() / "plimsolld.sock").string();
  DaemonUnderTest daemon({.tune = [&](Settings& settings) { settings.unix_socket = socket; }});
  Client client = OpenOrDie("unix:" + socket);
  Expected<Result> result = client.Run(Snippet());
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(result->stdout_bytes, "42\n");
  EXPECT_TRUE(client.Describe().ok());
  Request refused = Snippet();
  refused.minimum_isolation = "kernel";
  EXPECT_EQ(NotDispatchedReason(client.Run(refused).error()), NotDispatched::kIsolation);
  EXPECT_EQ(client.connections_opened(), 1);
}

TEST(DaemonClient, HttpsWithTheDaemonsCertificateVerified) {
  TemporaryDirectory directory;
  net::testing::TestCertificate certificate =
      net::testing::MakeTestCertificate("DNS:localhost,IP:127.0.0.1");
  fs::path cert = directory.path() / "tls.crt";
  fs::path key = directory.path() / "tls.key";
  std::ofstream(cert) << certificate.certificate_pem;
  std::ofstream(key) << certificate.private_key_pem;
  fs::permissions(key, fs::perms::owner_read | fs::perms::owner_write);
  DaemonUnderTest daemon({.tune = [&](Settings& settings) {
    settings.tls_cert = cert.string();
    settings.tls_key = key.string();
  }});
  std::string port = std::to_string(daemon.port());
  for (const std::string& url : {"https://127.0.0.1:" + port, "https://localhost:" + port}) {
    Client client = OpenOrDie(url, {.ca_file = cert.string()});
    Expected<Result> result = client.Run(Snippet());
    ASSERT_TRUE(result.ok()) << url << ": " << result.error().ToString();
    EXPECT_EQ(result->stdout_bytes, "42\n");
    Request refused = Snippet();
    refused.minimum_isolation = "vm";
    EXPECT_EQ(NotDispatchedReason(client.Run(refused).error()), NotDispatched::kIsolation);
    EXPECT_EQ(client.connections_opened(), 1);
  }
  // Without the CA the certificate does not verify, and nothing was sent.
  Client untrusting = OpenOrDie("https://127.0.0.1:" + port);
  Expected<Result> refused = untrusting.Run(Snippet());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(NotDispatchedReason(refused.error()), NotDispatched::kCapacity);
  EXPECT_EQ(daemon.provider().runs(), 2);
}

class DaemonClientCallers : public ::testing::Test {
 protected:
  void SetUp() override {
    store_path_ = directory_.path() / "callers.db";
    auth::StoreOptions options;
    options.create_if_missing = true;
    auto store = auth::CallerStore::Open(store_path_, options);
    ASSERT_TRUE(store.ok()) << store.error().ToString();
    auto issued = (*store)->Create({.name = "alice", .scopes = {"runs", "describe"}});
    ASSERT_TRUE(issued.ok()) << issued.error().ToString();
    token_ = issued->token;
  }
  DaemonOptions Options() {
    DaemonOptions options;
    options.dev = false;
    options.callers = store_path_.string();
    return options;
  }

  TemporaryDirectory directory_;
  fs::path store_path_;
  std::string token_;
};

TEST_F(DaemonClientCallers, TheBearerTokenAuthenticatesAndItsAbsenceIsAPermissionRefusal) {
  DaemonUnderTest daemon(Options());
  Client anonymous = OpenOrDie(Url(daemon));
  Expected<Result> refused = anonymous.Run(Snippet());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(NotDispatchedReason(refused.error()), NotDispatched::kPermission);
  EXPECT_EQ(refused.error().code(), ErrorCode::kUnauthenticated);

  Client wrong = OpenOrDie(Url(daemon), {.bearer_token = "plm_not_a_real_token"});
  EXPECT_EQ(NotDispatchedReason(wrong.Run(Snippet()).error()), NotDispatched::kPermission);

  Client alice = OpenOrDie(Url(daemon), {.bearer_token = token_});
  Expected<Result> result = alice.Run(Snippet());
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(daemon.provider().runs(), 1);
}

TEST_F(DaemonClientCallers, TheCliReadsTheTokenFromAFileOrTheEnvironment) {
  DaemonUnderTest daemon(Options());
  fs::path token_file = directory_.path() / "token";
  std::ofstream(token_file) << token_ << "\n";
  Outcome from_file = Cli({"run", "--daemon", Url(daemon), "--token-file", token_file.string(),
                           "-e", "console.log(6*7)"});
  EXPECT_EQ(from_file.status, cli::kExitRanOk) << from_file.err;

  unsetenv("PLIMSOLL_TOKEN");
  Outcome without = Cli({"run", "--daemon", Url(daemon), "-e", "console.log(6*7)"});
  EXPECT_EQ(without.status, cli::kExitNothingRan);
  EXPECT_EQ(without.err.rfind("nothing ran: permission: ", 0), 0u) << without.err;

  setenv("PLIMSOLL_TOKEN", token_.c_str(), 1);
  Outcome from_environment = Cli({"run", "--daemon", Url(daemon), "-e", "console.log(6*7)"});
  unsetenv("PLIMSOLL_TOKEN");
  EXPECT_EQ(from_environment.status, cli::kExitRanOk) << from_environment.err;
  EXPECT_EQ(daemon.provider().runs(), 2);
}

// The CLI over the daemon prints and exits as the in-process run does.
TEST(DaemonClientCli, RunPrintsAndExitsLikeTheInProcessPath) {
  DaemonUnderTest daemon;
  Outcome remote = Cli({"run", "--daemon", Url(daemon), "-e", "console.log(6*7)"});
  Outcome local = Cli({"run", "--provider", "embedded", "-e", "console.log(6*7)"});
  EXPECT_EQ(remote.status, cli::kExitRanOk) << remote.err;
  EXPECT_EQ(remote.status, local.status);
  for (const char* line : {"provider:   embedded\n", "isolation:  process\n", "exit code:  0\n",
                           "timed out:  no\n", "stdout:\n42\n"}) {
    EXPECT_NE(remote.out.find(line), std::string::npos) << line << " in\n" << remote.out;
    EXPECT_NE(local.out.find(line), std::string::npos) << line << " in\n" << local.out;
  }
  EXPECT_EQ(remote.err, local.err) << "the same process-tier warning";

  Outcome failed = Cli({"run", "--daemon", Url(daemon), "-e", "throw new Error('x')"});
  EXPECT_EQ(failed.status, cli::kExitRanFailed) << failed.err;
}

TEST(DaemonClientCli, RefusalsPrintNothingRanExactlyAsInProcess) {
  DaemonUnderTest daemon;
  Outcome remote = Cli({"run", "--daemon", Url(daemon), "--floor", "vm", "-e", "1"});
  Outcome local = Cli({"run", "--provider", "embedded", "--floor", "vm", "-e", "1"});
  EXPECT_EQ(remote.status, cli::kExitNothingRan);
  EXPECT_EQ(local.status, cli::kExitNothingRan);
  EXPECT_EQ(remote.err.rfind("nothing ran: isolation: ", 0), 0u) << remote.err;
  EXPECT_EQ(remote.err, local.err) << "the same sentence from the same Sandbox";
  EXPECT_EQ(daemon.provider().runs(), 0);
}

TEST(DaemonClientCli, JsonOutputIsTheApiObject) {
  DaemonUnderTest daemon;
  Outcome remote = Cli({"run", "--json", "--daemon", Url(daemon), "-e", "console.log(6*7)"});
  ASSERT_EQ(remote.status, cli::kExitRanOk) << remote.err;
  nlohmann::json answer = nlohmann::json::parse(remote.out);
  EXPECT_EQ(answer["stdout"], "42\n");
  EXPECT_EQ(answer["isolation"], "process");
  EXPECT_EQ(answer["record"]["record_sha256"].get<std::string>().size(), 64u);

  Outcome refused = Cli({"run", "--json", "--daemon", Url(daemon), "--floor", "vm", "-e", "1"});
  EXPECT_EQ(refused.status, cli::kExitNothingRan);
  EXPECT_EQ(nlohmann::json::parse(refused.out)["error"]["not_dispatched"], "isolation");
}

TEST(DaemonClientCli, DescribeOverTheDaemon) {
  DaemonUnderTest daemon;
  Outcome described = Cli({"describe", "--daemon", Url(daemon)});
  EXPECT_EQ(described.status, cli::kExitRanOk) << described.err;
  EXPECT_NE(described.out.find("daemon:       " + Url(daemon)), std::string::npos);
  EXPECT_NE(described.out.find("provider:     embedded"), std::string::npos) << described.out;
  EXPECT_NE(described.out.find("isolation:    process (from evidence)"), std::string::npos)
      << described.out;
}

TEST(DaemonClientCli, ProjectsTravelToo) {
  DaemonUnderTest daemon;
  TemporaryDirectory project;
  std::ofstream(project.path() / "main.js") << "console.log('hi')\n";
  Outcome outcome = Cli({"run", "--daemon", Url(daemon), "--project", project.path().string(),
                         "--step", "node main.js"});
  // The embedded provider runs no projects: a marked refusal, from the daemon.
  EXPECT_EQ(outcome.status, cli::kExitNothingRan) << outcome.err;
  EXPECT_EQ(outcome.err.rfind("nothing ran: unsupported: ", 0), 0u) << outcome.err;
}

TEST(DaemonClientCli, AJsonStepIsOneStepEvenWithCommasInside) {
  DaemonUnderTest daemon;
  TemporaryDirectory project;
  std::ofstream(project.path() / "main.js") << "console.log('hi')\n";
  Outcome outcome = Cli({"run", "--daemon", Url(daemon), "--project", project.path().string(),
                         "--step", R"json(["node","-e","console.log(1,2)"])json", "--step", "node main.js"});
  EXPECT_EQ(outcome.status, cli::kExitNothingRan) << outcome.err;
  auto seen = daemon.provider().last_request();
  ASSERT_TRUE(seen.has_value());
  ASSERT_TRUE(seen->project.has_value());
  ASSERT_EQ(seen->project->steps.size(), 2u);
  EXPECT_EQ(seen->project->steps[0],
            (std::vector<std::string>{"node", "-e", "console.log(1,2)"}));
  EXPECT_EQ(seen->project->steps[1], (std::vector<std::string>{"node", "main.js"}));
}

}  // namespace
}  // namespace plimsoll::daemon::testing
