#include "guest/agent/lifeline.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>

namespace plimsoll::guest::agent {
namespace {

// Without an eventfd, how often the watcher looks at the stop flag (it
// then bounds Stop()'s wait); and the pause after data that is not a
// hang-up. Every job's report waits for Stop(), so it must not wait out a
// poll: with the eventfd it returns at once (measured: a fixed 50 ms wait
// here was on every run's and every session call's answer).
constexpr int kPollMs = 50;
// The sweep before exiting: short, nobody waits for the report any more.
constexpr auto kSweepBound = std::chrono::seconds(1);

}  // namespace

Lifeline::Lifeline(int channel, SweepScope scope, int exit_code)
    : channel_(channel),
      scope_(scope),
      exit_code_(exit_code),
      wake_(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) {
  // Without a thread the job runs unwatched (as it would to its deadline).
  watching_ = pthread_create(&watcher_, nullptr, &Lifeline::RunWatcher, this) == 0;
}

void* Lifeline::RunWatcher(void* self) {
  static_cast<Lifeline*>(self)->Watch();
  return nullptr;
}

Lifeline::~Lifeline() {
  Stop();
  if (wake_.valid()) {
    uint64_t one = 1;
    (void)!write(wake_.get(), &one, sizeof one);
  }
  if (watching_) {
    pthread_join(watcher_, nullptr);
    watching_ = false;
  }
}

void Lifeline::Stop() {
  // Only the flag: a watcher still in its poll may stay there until the
  // destructor wakes it, since whatever wakes it now (the provider's
  // hang-up after the report) finds the flag set.
  stopping_.store(true);
}

void Lifeline::Watch() {
  const int timeout = wake_.valid() ? -1 : kPollMs;
  while (!stopping_.load()) {
    pollfd entries[2] = {{channel_, POLLRDHUP, 0}, {wake_.get(), POLLIN, 0}};
    int ready = poll(entries, wake_.valid() ? 2 : 1, timeout);
    if (stopping_.load()) return;
    const pollfd& entry = entries[0];
    if (ready <= 0 || (entry.revents & (POLLHUP | POLLRDHUP | POLLERR | POLLNVAL)) == 0) {
      // Data (POLLIN) is left for nobody: the provider sends nothing after
      // the job. Wait instead of spinning on it (Stop() still wakes us).
      if (ready > 0 && entry.revents != 0) {
        pollfd wake{wake_.get(), POLLIN, 0};
        if (wake_.valid()) {
          (void)poll(&wake, 1, kPollMs);
        } else {
          usleep(kPollMs * 1000);
        }
      }
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
