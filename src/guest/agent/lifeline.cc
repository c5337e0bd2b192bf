#include "guest/agent/lifeline.h"

#include <poll.h>
#include <unistd.h>

#include <chrono>

namespace plimsoll::guest::agent {
namespace {

// How often the watcher looks at the stop flag: it bounds Stop()'s wait.
constexpr int kPollMs = 50;
// The sweep before exiting: short, nobody waits for the report any more.
constexpr auto kSweepBound = std::chrono::seconds(1);

}  // namespace

Lifeline::Lifeline(int channel, SweepScope scope, int exit_code)
    : channel_(channel), scope_(scope), exit_code_(exit_code), watcher_([this] { Watch(); }) {}

Lifeline::~Lifeline() {
  Stop();
}

void Lifeline::Stop() {
  stopping_.store(true);
  if (watcher_.joinable()) watcher_.join();
}

void Lifeline::Watch() {
  while (!stopping_.load()) {
    pollfd entry{channel_, POLLRDHUP, 0};
    int ready = poll(&entry, 1, kPollMs);
    if (ready <= 0 || (entry.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) == 0) {
      // Data (POLLIN) is left for nobody: the provider sends nothing after
      // the job. Wait instead of spinning on it.
      if (ready > 0) usleep(kPollMs * 1000);
      continue;
    }
    if (stopping_.load()) return;
    // The provider is gone: end the job now. _exit: the main thread is
    // inside the job and must not run on.
    (void)KillAndReapAll(0, scope_, std::chrono::steady_clock::now() + kSweepBound);
    _exit(exit_code_);
  }
}

}  // namespace plimsoll::guest::agent
