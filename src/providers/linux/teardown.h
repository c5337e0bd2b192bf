// Teardown off the answer's path: once a sandbox's sealed report is in, the
// run's answer does not wait for the sandbox to be dismantled.
//
// Finish() SIGKILLs the sandbox's init at once (the kernel then kills every
// process of its pid namespace; none of them runs guest code again in any
// meaningful way, SIGKILL cannot be caught), then hands the Container to one
// background thread that reaps it and removes its cgroup (Container::Kill).
// Bounded: when `max_pending` sandboxes already wait, Finish() tears this one
// down itself, so a host that cannot keep up slows its callers down instead
// of piling up sandboxes. The destructor finishes everything still queued,
// so nothing outlives the owner; after a crash, reconcile() finds the rest.
//
// Thread-safety: Finish() and Drain() may be called from any thread.
//
// Usage:
//   Teardown teardown(/*max_pending=*/64);
//   teardown.Finish(std::move(container));   // returns at once
//   teardown.Drain();                        // waits until all are gone
#ifndef PLIMSOLL_PROVIDERS_LINUX_TEARDOWN_H_
#define PLIMSOLL_PROVIDERS_LINUX_TEARDOWN_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <thread>

#include "providers/linux/contain.h"

namespace plimsoll::linux_sandbox {

class Teardown {
 public:
  explicit Teardown(size_t max_pending);
  Teardown(const Teardown&) = delete;
  Teardown& operator=(const Teardown&) = delete;
  ~Teardown();  // finishes every queued sandbox, then stops the thread

  // Kills the sandbox now; reaping and cgroup removal happen in the
  // background (or here, when `max_pending` are already waiting).
  void Finish(Container container);
  // Returns once every sandbox handed over so far is gone.
  void Drain();
  // How many sandboxes wait for their teardown now.
  size_t Pending() const;

 private:
  void Work();

  const size_t max_pending_;
  mutable std::mutex mutex_;
  std::condition_variable work_ready_;
  std::condition_variable drained_;
  std::deque<Container> queue_;
  size_t in_progress_ = 0;
  bool stopping_ = false;
  std::thread worker_;  // started on the first Finish()
};

}  // namespace plimsoll::linux_sandbox

#endif  // PLIMSOLL_PROVIDERS_LINUX_TEARDOWN_H_
