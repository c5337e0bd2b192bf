// A real plimsolld on the linux provider with tests/clients/adversary.py in
// front of it: what the C++ client's and the CLI's proxy tests talk to
// (tests/clients/README.md). The proxy rewrites answers as the first path
// segment says (`/pass/...`, `/lower_tier/...`), recomputing every digest.
//
// Usage, after PLIMSOLL_REQUIRE_HOST("linux") in a test body or SetUp:
//
//   LinuxDaemonBehindAdversary served;
//   ASSERT_TRUE(served.problem().empty()) << served.problem();
//   auto client = Client::Open(served.proxy_url() + "/lower_tier/key");
//
// Needs PLIMSOLL_IMAGE (CTest's plimsoll_test_uses_image sets it). Not
// thread-safe; one per test.
#ifndef PLIMSOLL_TESTS_CLIENTS_LINUX_BEHIND_ADVERSARY_H_
#define PLIMSOLL_TESTS_CLIENTS_LINUX_BEHIND_ADVERSARY_H_

#include <optional>
#include <string>

#include "child_daemon.h"

namespace plimsoll::daemon::testing {

class LinuxDaemonBehindAdversary {
 public:
  // Starts the daemon (dev mode, loopback, port 0), waits for its port, then
  // the proxy in front of it. On failure problem() says what went wrong,
  // with the child's stderr.
  LinuxDaemonBehindAdversary();
  // StopDaemon(), when the test has not.
  ~LinuxDaemonBehindAdversary();
  LinuxDaemonBehindAdversary(const LinuxDaemonBehindAdversary&) = delete;
  LinuxDaemonBehindAdversary& operator=(const LinuxDaemonBehindAdversary&) = delete;

  // "http://127.0.0.1:PORT" of the proxy; empty when problem() is not.
  const std::string& proxy_url() const { return proxy_url_; }
  const std::string& problem() const { return problem_; }
  // Stops the proxy, then the daemon with SIGTERM (so it ends its sessions
  // and their sandboxes) and waits for it: the daemon's exit status (0 for a
  // clean stop), or -1 when it was stopped already or never started.
  int StopDaemon();

 private:
  std::optional<ChildDaemon> daemon_;
  std::optional<ChildDaemon> proxy_;
  std::string proxy_url_;
  std::string problem_;
};

}  // namespace plimsoll::daemon::testing

#endif  // PLIMSOLL_TESTS_CLIENTS_LINUX_BEHIND_ADVERSARY_H_
