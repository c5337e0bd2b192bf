#include "linux_behind_adversary.h"

#include <signal.h>

#include <chrono>
#include <cstdlib>
#include <vector>

namespace plimsoll::daemon::testing {

using std::chrono::milliseconds;

namespace {
constexpr char kPath[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
constexpr std::string_view kServing = "adversary: serving ";
}  // namespace

LinuxDaemonBehindAdversary::LinuxDaemonBehindAdversary() {
  const char* image = std::getenv("PLIMSOLL_IMAGE");
  if (image == nullptr) {
    problem_ = "PLIMSOLL_IMAGE is not set (CTest sets it: plimsoll_test_uses_image)";
    return;
  }
  daemon_.emplace(PLIMSOLLD_BINARY,
                  std::vector<std::string>{"--provider", "linux", "--dev", "--listen",
                                           "127.0.0.1:0", "--metrics-listen", "off"},
                  std::vector<std::string>{"PLIMSOLL_IMAGE=" + std::string(image), kPath});
  const uint16_t port = ApiPortFrom(daemon_->ReadLine(milliseconds(120'000)));
  if (port == 0) {
    problem_ = "plimsolld did not print its port: " + daemon_->ReadStderr();
    return;
  }
  proxy_.emplace(
      PYTHON3_BINARY,
      std::vector<std::string>{std::string(PLIMSOLL_SOURCE_DIR) + "/tests/clients/adversary.py",
                               "--upstream", "127.0.0.1:" + std::to_string(port)},
      std::vector<std::string>{kPath});
  const std::string serving = proxy_->ReadLine();
  if (serving.rfind(kServing, 0) != 0) {
    problem_ = "adversary.py did not start: " + serving + proxy_->ReadStderr();
    return;
  }
  proxy_url_ = "http://" + serving.substr(kServing.size());
}

int LinuxDaemonBehindAdversary::StopDaemon() {
  if (proxy_) {
    proxy_->Signal(SIGTERM);
    proxy_.reset();  // reaped (SIGKILLed first if still running)
  }
  if (!daemon_) return -1;
  daemon_->Signal(SIGTERM);
  const int status = daemon_->Wait(milliseconds(60'000));
  daemon_.reset();
  return status;
}

LinuxDaemonBehindAdversary::~LinuxDaemonBehindAdversary() {
  StopDaemon();
}

}  // namespace plimsoll::daemon::testing
