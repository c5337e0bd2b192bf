// Hardened mode (PLIMSOLL_HARDENED=1) and the cleartext warning, through the
// real plimsolld binary: exit statuses and every sentence on stderr.
//
// No provider of this build can prove tier kernel, so hardened mode never
// starts here; that is the correct outcome, and the last test shows that a
// daemon with every other safeguard in place is refused for that one reason.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "daemon/auth/caller_store.h"
#include "daemon/http/test_certificate.h"
#include "providers/embedded/embedded_provider.h"

namespace plimsoll::daemon::testing {
namespace {

using std::chrono::milliseconds;

// A child plimsolld; stdout and stderr are read through pipes with deadlines,
// so a daemon that neither exits nor serves fails the test instead of hanging it.
class Plimsolld {
 public:
  Plimsolld(std::vector<std::string> args, std::vector<std::string> environment) {
    int out[2], err[2];
    if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork");
    if (pid_ == 0) {
      dup2(out[1], 1);
      dup2(err[1], 2);
      std::vector<char*> argv{const_cast<char*>(PLIMSOLLD_BINARY)};
      for (std::string& arg : args) argv.push_back(arg.data());
      argv.push_back(nullptr);
      std::vector<char*> envp;
      for (std::string& entry : environment) envp.push_back(entry.data());
      envp.push_back(nullptr);
      execve(PLIMSOLLD_BINARY, argv.data(), envp.data());
      _exit(127);
    }
    close(out[1]);
    close(err[1]);
    out_ = out[0];
    err_ = err[0];
  }
  ~Plimsolld() {
    if (!reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    close(out_);
    close(err_);
  }

  // The exit status, or -1 if the daemon is still running at `timeout`.
  int WaitForExit(milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      pid_t done = waitpid(pid_, &status, WNOHANG);
      if (done == pid_) {
        reaped_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      usleep(10'000);
    }
    return -1;
  }

  // The first stdout line, "" when none came within `timeout`.
  std::string ReadLine(milliseconds timeout) {
    std::string line;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd waiting{out_, POLLIN, 0};
      if (poll(&waiting, 1, 50) <= 0) continue;
      char byte;
      if (read(out_, &byte, 1) != 1) break;
      if (byte == '\n') return line;
      line += byte;
    }
    return "";
  }

  // Everything written to stderr (call after the daemon exited).
  std::string Stderr() {
    std::string text;
    char chunk[4096];
    ssize_t size;
    while ((size = read(err_, chunk, sizeof chunk)) > 0) text.append(chunk, size);
    return text;
  }

  void Signal(int number) { kill(pid_, number); }

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int out_ = -1;
  int err_ = -1;
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

void ExpectHas(const std::string& log, const std::string& part) {
  EXPECT_NE(log.find(part), std::string::npos) << "missing: " << part << "\nin:\n" << log;
}

// A caller store in a fresh temporary directory.
class TempStore {
 public:
  TempStore() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "plimsoll-hardened-XXXXXX").string();
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

TEST(DaemonHardened, EveryViolationIsListedAtOnceWithExit2) {
  Plimsolld daemon({"--provider", "embedded", "--dev", "--listen", "127.0.0.1:0",
                    "--metrics-listen", "0.0.0.0:0", "--pids", "128"},
                   {"PLIMSOLL_HARDENED=1"});
  ASSERT_EQ(daemon.WaitForExit(kExitBound), 2);
  std::string log = daemon.Stderr();
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
  ASSERT_EQ(daemon.WaitForExit(kExitBound), 2);
  std::string log = daemon.Stderr();
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
  ASSERT_EQ(daemon.WaitForExit(kExitBound), 2);
  std::string log = daemon.Stderr();
  ExpectHas(log,
            "1 safeguard(s) missing:\n  - The embedded provider can prove at most tier "
            "process, but hardened mode needs tier kernel or vm proven at startup; choose a "
            "provider that reaches it with --provider / SANDBOX_PROVIDER");
}

TEST(DaemonHardened, AnUnreadableHardenedValueIsABadSetting) {
  Plimsolld daemon({"--listen", "127.0.0.1:0", "--metrics-listen", "off"},
                   {"PLIMSOLL_HARDENED=maybe"});
  ASSERT_EQ(daemon.WaitForExit(kExitBound), 2);
  ExpectHas(daemon.Stderr(), "PLIMSOLL_HARDENED must be 1 or 0");
}

TEST(DaemonHardened, OutsideHardenedModeACleartextListenerStartsWithAWarning) {
  // The disabled provider needs neither callers nor --dev, so 0.0.0.0 is allowed.
  Plimsolld daemon({"--listen", "0.0.0.0:0", "--metrics-listen", "off"}, {});
  std::string line = daemon.ReadLine(kExitBound);
  ASSERT_NE(line.find("plimsolld: serving api=0.0.0.0:"), std::string::npos) << line;
  daemon.Signal(SIGTERM);
  ASSERT_EQ(daemon.WaitForExit(kExitBound), 0);
  ExpectHas(daemon.Stderr(),
            "--listen 0.0.0.0:0 is not a loopback address and TLS is off: "
            "bearer tokens, code and outputs cross the network in cleartext.");
}

}  // namespace
}  // namespace plimsoll::daemon::testing
