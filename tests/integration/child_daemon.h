// Test helpers for suites that start the real plimsolld binary: a child
// daemon whose stdout and stderr come back through pipes, read with
// deadlines so a daemon that neither exits nor serves fails the test instead
// of hanging it, and a caller store in a fresh temporary directory.
//
// Usage:
//   ChildDaemon daemon(PLIMSOLLD_BINARY, {"--provider", "embedded", "--dev"}, {});
//   std::string serving = daemon.ReadLine();      // "plimsolld: serving api=…"
//   daemon.Signal(SIGTERM);
//   EXPECT_EQ(daemon.Wait(), 0);
//   std::string log = daemon.ReadStderr();
#ifndef PLIMSOLL_TESTS_INTEGRATION_CHILD_DAEMON_H_
#define PLIMSOLL_TESTS_INTEGRATION_CHILD_DAEMON_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "auth/caller_store.h"

namespace plimsoll::daemon::testing {

inline constexpr std::chrono::milliseconds kChildDaemonBound{30'000};

// The API port in the serving line ("plimsolld: serving api=127.0.0.1:PORT
// ..."), 0 when the line has none.
uint16_t ApiPortFrom(const std::string& serving_line);

class ChildDaemon {
 public:
  // Starts `binary` with `args` and exactly `environment` (NAME=value).
  ChildDaemon(const std::string& binary, std::vector<std::string> args,
              std::vector<std::string> environment);
  ChildDaemon(const ChildDaemon&) = delete;
  ChildDaemon& operator=(const ChildDaemon&) = delete;
  ~ChildDaemon();  // SIGKILLs and reaps a daemon still running

  // The next stdout line without its newline; "" when none came in time.
  std::string ReadLine(std::chrono::milliseconds timeout = kChildDaemonBound);
  // The exit status (128 + signal when killed), or -1 if still running.
  int Wait(std::chrono::milliseconds timeout = kChildDaemonBound);
  // Everything written to stderr, up to EOF (so: after the daemon exited).
  std::string ReadStderr();
  void Signal(int number);

 private:
  pid_t pid_ = -1;
  bool reaped_ = false;
  int out_ = -1;
  int err_ = -1;
};

// A caller store created in a fresh temporary directory, removed at the end.
class TempCallerStore {
 public:
  TempCallerStore();
  ~TempCallerStore();
  TempCallerStore(const TempCallerStore&) = delete;
  TempCallerStore& operator=(const TempCallerStore&) = delete;

  std::string path() const { return (directory_ / "callers.db").string(); }
  auth::CallerStore& store() { return *store_; }

 private:
  std::filesystem::path directory_;
  std::unique_ptr<auth::CallerStore> store_;
};

}  // namespace plimsoll::daemon::testing

#endif  // PLIMSOLL_TESTS_INTEGRATION_CHILD_DAEMON_H_
