#include "providers/oci/destroyer.h"

#include <chrono>

namespace plimsoll::oci {
namespace {

constexpr auto kDestroyBudget = std::chrono::seconds(15);

}  // namespace

Destroyer::Destroyer(size_t max_pending) : max_pending_(max_pending) {}

Destroyer::~Destroyer() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  if (worker_.joinable()) worker_.join();
  for (auto& sandbox : queue_) DestroyOne(*sandbox);
}

void Destroyer::DestroyOne(OciSandbox& sandbox) {
  Status destroyed = sandbox.Destroy(std::chrono::steady_clock::now() + kDestroyBudget);
  if (!destroyed.ok()) {
    std::lock_guard lock(mutex_);
    last_error_ = destroyed.error().message();
  }
}

void Destroyer::Add(std::unique_ptr<OciSandbox> sandbox) {
  if (!sandbox) return;
  {
    std::lock_guard lock(mutex_);
    if (!stopping_ && queue_.size() + in_progress_ < max_pending_) {
      queue_.push_back(std::move(sandbox));
      if (!worker_.joinable()) worker_ = std::thread([this] { Work(); });
    }
  }
  if (sandbox) {
    DestroyOne(*sandbox);
    return;
  }
  work_ready_.notify_one();
}

void Destroyer::Drain() {
  std::unique_lock lock(mutex_);
  drained_.wait(lock, [this] { return queue_.empty() && in_progress_ == 0; });
}

size_t Destroyer::Pending() const {
  std::lock_guard lock(mutex_);
  return queue_.size() + in_progress_;
}

std::string Destroyer::LastError() const {
  std::lock_guard lock(mutex_);
  return last_error_;
}

void Destroyer::Work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping, nothing left
    std::unique_ptr<OciSandbox> sandbox = std::move(queue_.front());
    queue_.pop_front();
    ++in_progress_;
    lock.unlock();
    DestroyOne(*sandbox);
    sandbox.reset();
    lock.lock();
    --in_progress_;
    if (queue_.empty() && in_progress_ == 0) drained_.notify_all();
  }
}

}  // namespace plimsoll::oci
