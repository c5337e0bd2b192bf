#include "providers/linux/teardown.h"

#include <utility>

namespace plimsoll::linux_sandbox {

Teardown::Teardown(size_t max_pending) : max_pending_(max_pending) {}

Teardown::~Teardown() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  if (worker_.joinable()) worker_.join();
}

void Teardown::Finish(Container container) {
  container.Signal();
  {
    std::lock_guard lock(mutex_);
    if (!stopping_ && queue_.size() + in_progress_ < max_pending_) {
      queue_.push_back(std::move(container));
      if (!worker_.joinable()) worker_ = std::thread([this] { Work(); });
      work_ready_.notify_one();
      return;
    }
  }
  (void)container.Kill();  // back-pressure: this caller pays for its own teardown
}

void Teardown::Drain() {
  std::unique_lock lock(mutex_);
  drained_.wait(lock, [this] { return queue_.empty() && in_progress_ == 0; });
}

size_t Teardown::Pending() const {
  std::lock_guard lock(mutex_);
  return queue_.size() + in_progress_;
}

void Teardown::Work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, and everything is done
    Container container = std::move(queue_.front());
    queue_.pop_front();
    ++in_progress_;
    lock.unlock();
    (void)container.Kill();  // errors: Reconcile removes what is left
    lock.lock();
    --in_progress_;
    if (queue_.empty() && in_progress_ == 0) drained_.notify_all();
  }
}

}  // namespace plimsoll::linux_sandbox
