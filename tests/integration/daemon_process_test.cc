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

#include "daemon/auth/caller_store.h"
#include "daemon_test_client.h"
#include "providers/embedded/embedded_provider.h"

namespace plimsoll::daemon::testing {
namespace {

// A child plimsolld with stdout and stderr captured through pipes.
class Daemon {
 public:
  Daemon(std::vector<std::string> args, std::vector<std::string> environment) {
    int out[2], err[2];
    if (pipe(out) != 0 || pipe(err) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(err[1], 2);
      close(out[0]);
      close(err[0]);
      std::vector<char*> argv{const_cast<char*>(PLIMSOLLD_BINARY)};
      for (auto& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      std::vector<char*> envp;
      for (auto& entry : environment) envp.push_back(entry.data());
      envp.push_back(nullptr);
      execve(PLIMSOLLD_BINARY, argv.data(), envp.data());
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    out_ = fdopen(out[0], "r");
    err_fd_ = err[0];
  }
  ~Daemon() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      Wait();
    }
    if (out_) fclose(out_);
    close(err_fd_);
  }

  // The first stdout line ("" at EOF).
  std::string ReadLine() {
    char line[1024];
    if (fgets(line, sizeof line, out_) == nullptr) return "";
    return line;
  }
  int Wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::string ReadStderr() {
    std::string text;
    char chunk[4096];
    ssize_t size;
    while ((size = read(err_fd_, chunk, sizeof chunk)) > 0)
      text.append(chunk, static_cast<size_t>(size));
    return text;
  }
  void Signal(int signal_number) { kill(pid_, signal_number); }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  FILE* out_ = nullptr;
  int err_fd_ = -1;
};

uint16_t PortFrom(const std::string& line) {
  size_t at = line.find("api=127.0.0.1:");
  if (at == std::string::npos) return 0;
  return static_cast<uint16_t>(std::stoi(line.substr(at + 14)));
}

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
  uint16_t port = PortFrom(line);
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
  uint16_t port = PortFrom(daemon.ReadLine());
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
  uint16_t port = PortFrom(daemon.ReadLine());
  ASSERT_NE(port, 0) << daemon.ReadStderr();
  daemon.Signal(SIGTERM);
  EXPECT_EQ(daemon.Wait(), 0);
}

TEST(DaemonProcess, RunLimitFlagsBecomeTheProvidersLimits) {
  Daemon daemon(With({"--provider", "embedded", "--dev", "--memory-mb", "128", "--pids", "64",
                      "--max-snippet-timeout-ms", "9000"}),
                {});
  uint16_t port = PortFrom(daemon.ReadLine());
  ASSERT_NE(port, 0) << daemon.ReadStderr();
  HttpReply described = SendOnce(port, {.method = "GET", .target = "/v1/describe"});
  ASSERT_EQ(described.status, 200u) << described.body;
  auto limits = nlohmann::json::parse(described.body)["limits"];
  EXPECT_EQ(limits["memory_bytes"], int64_t{128} << 20);
  EXPECT_EQ(limits["pids"], 64);
  EXPECT_EQ(limits["snippet_timeout_max_ms"], 9000);
  HttpReply refused = SendOnce(
      port, {.method = "POST",
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

// A caller store in a fresh temporary directory, removed at the end.
class TempStore {
 public:
  TempStore() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "plimsoll-process-callers-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp");
    directory_ = pattern;
    auth::StoreOptions options;
    options.create_if_missing = true;
    auto store = auth::CallerStore::Open(path(), options);
    if (!store.ok()) throw std::runtime_error(store.error().ToString());
    store_ = std::move(*store);
  }
  ~TempStore() {
    store_.reset();
    std::error_code ignored;
    std::filesystem::remove_all(directory_, ignored);
  }
  std::string path() const { return (directory_ / "callers.db").string(); }
  auth::CallerStore& store() { return *store_; }

 private:
  std::filesystem::path directory_;
  std::unique_ptr<auth::CallerStore> store_;
};

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
  uint16_t port = PortFrom(daemon.ReadLine());
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
  uint16_t port = PortFrom(daemon.ReadLine());
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
  uint16_t port = PortFrom(daemon.ReadLine());
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
