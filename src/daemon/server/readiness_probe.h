// The provider's preflight for GET /readyz, run off the event loop.
//
// Preflight may start a subprocess, read the image or take the provider's
// locks; on an I/O thread a slow one would stall every connection that
// thread serves (/healthz included). So /readyz never calls it: it awaits
// this probe, which runs the preflight on a thread of its own.
//
//   - Coalescing: while a preflight runs, every /readyz that arrives waits
//     for that one; at most one preflight runs at a time, however many
//     clients ask.
//   - Freshness: a result younger than `freshness` (default 1 s) is served
//     without running another, so a flood runs at most one preflight per
//     freshness period plus the preflight's own time.
//   - Bounded wait: a caller waits at most `wait_bound` (default 5 s); then
//     it is answered "the preflight has not finished" (503) while the
//     preflight keeps running for the next caller.
//   - Bounded queue: at most `max_waiters` callers wait; more are answered
//     at once with the same 503.
// The lock is held only to read or update the state, never while the
// preflight runs, so awaiting Check() never blocks an I/O thread.
//
// Thread-safety: Check() from any coroutine; Stop() (also the destructor)
// from the owner's thread, after which Check() answers "stopped".
//
// Usage:
//   ReadinessProbe probe([&sandbox] { return sandbox.provider().Preflight(); }, {});
//   Status preflight = co_await probe.Check();
#ifndef PLIMSOLL_DAEMON_SERVER_READINESS_PROBE_H_
#define PLIMSOLL_DAEMON_SERVER_READINESS_PROBE_H_

#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::daemon {

class ReadinessProbe {
 public:
  struct Options {
    std::chrono::milliseconds freshness{1'000};
    std::chrono::milliseconds wait_bound{5'000};
    size_t max_waiters = 256;
  };
  using Preflight = std::function<Status()>;
  // Called on the probe's thread after each preflight with its result.
  using Observer = std::function<void(const Status&)>;

  ReadinessProbe(Preflight preflight, const Options& options, Observer observer = {});
  ~ReadinessProbe();
  ReadinessProbe(const ReadinessProbe&) = delete;
  ReadinessProbe& operator=(const ReadinessProbe&) = delete;

  // The result of a preflight no older than `freshness`, or of the one in
  // progress or started for this call; a kFailedPrecondition error when the
  // wait bound passes, too many wait, or the probe stopped.
  boost::asio::awaitable<Status> Check();

  void Stop();
  // Preflights run so far (tests).
  size_t preflights() const;

  struct Waiter;  // one awaiting Check() (readiness_probe.cc)

 private:
  void Loop();

  const Preflight preflight_;
  const Options options_;
  const Observer observer_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool requested_ = false;
  bool running_ = false;
  bool stopping_ = false;
  std::optional<Status> last_;
  std::chrono::steady_clock::time_point last_finished_{};
  std::vector<std::shared_ptr<Waiter>> waiters_;
  size_t preflights_ = 0;
  std::thread thread_;
};

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_READINESS_PROBE_H_
