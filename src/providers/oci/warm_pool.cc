#include "providers/oci/warm_pool.h"

#include <algorithm>
#include <chrono>

namespace plimsoll::oci {
namespace {

constexpr auto kHealthInterval = std::chrono::seconds(1);
constexpr auto kFirstBackoff = std::chrono::milliseconds(500);
constexpr auto kLongestBackoff = std::chrono::seconds(30);

}  // namespace

WarmPool::WarmPool(size_t size, Factory factory, Disposer disposer)
    : size_(size), factory_(std::move(factory)), disposer_(std::move(disposer)) {
  stats_.size = size;
}

WarmPool::~WarmPool() {
  std::deque<std::unique_ptr<OciSandbox>> idle;
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
    idle.swap(ready_);
  }
  changed_.notify_all();
  if (worker_.joinable()) worker_.join();
  // The worker may have finished one start after the swap.
  {
    std::lock_guard lock(mutex_);
    for (auto& sandbox : ready_) idle.push_back(std::move(sandbox));
    ready_.clear();
  }
  for (auto& sandbox : idle) disposer_(std::move(sandbox));
}

void WarmPool::Enable() {
  if (size_ == 0) return;
  std::lock_guard lock(mutex_);
  stats_.enabled = true;
  if (!worker_.joinable()) worker_ = std::thread([this] { Work(); });
  changed_.notify_all();
}

void WarmPool::Disable() {
  std::deque<std::unique_ptr<OciSandbox>> idle;
  {
    std::lock_guard lock(mutex_);
    stats_.enabled = false;
    idle.swap(ready_);
    stats_.ready = 0;
  }
  changed_.notify_all();
  for (auto& sandbox : idle) disposer_(std::move(sandbox));
}

std::unique_ptr<OciSandbox> WarmPool::Take() {
  std::vector<std::unique_ptr<OciSandbox>> unfit;
  std::unique_ptr<OciSandbox> taken;
  {
    std::lock_guard lock(mutex_);
    while (stats_.enabled && !ready_.empty()) {
      std::unique_ptr<OciSandbox> candidate = std::move(ready_.front());
      ready_.pop_front();
      if (candidate->Healthy()) {
        taken = std::move(candidate);
        break;
      }
      ++stats_.unhealthy;
      unfit.push_back(std::move(candidate));
    }
    stats_.ready = ready_.size();
    if (taken) {
      ++stats_.handed_out;
    } else {
      ++stats_.empty;
    }
  }
  changed_.notify_all();  // time to refill
  for (auto& sandbox : unfit) disposer_(std::move(sandbox));
  return taken;
}

WarmPool::Stats WarmPool::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

std::string WarmPool::Describe() const {
  Stats now = stats();
  if (now.size == 0) return "off (size 0): every run starts its own container";
  std::string text = std::to_string(now.ready) + " of " + std::to_string(now.size) + " ready (" +
                     (now.enabled ? "enabled" : "disabled until the smoke test confirms the wall") +
                     "); " + std::to_string(now.handed_out) + " handed out, " +
                     std::to_string(now.empty) + " found empty, " +
                     std::to_string(now.unhealthy) + " discarded as unhealthy, " +
                     std::to_string(now.start_failures) + " start failures";
  if (!now.last_error.empty()) text += " (last: " + now.last_error.substr(0, 300) + ")";
  return text;
}

void WarmPool::Work() {
  auto backoff = kFirstBackoff;
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    // Health: anything that failed while waiting is replaced.
    std::vector<std::unique_ptr<OciSandbox>> unfit;
    for (auto it = ready_.begin(); it != ready_.end();) {
      if ((*it)->Healthy()) {
        ++it;
      } else {
        ++stats_.unhealthy;
        unfit.push_back(std::move(*it));
        it = ready_.erase(it);
      }
    }
    stats_.ready = ready_.size();
    if (!unfit.empty()) {
      lock.unlock();
      for (auto& sandbox : unfit) disposer_(std::move(sandbox));
      lock.lock();
      continue;
    }
    if (!stats_.enabled || ready_.size() >= size_) {
      changed_.wait_for(lock, kHealthInterval);
      continue;
    }
    stats_.starting = 1;
    lock.unlock();
    auto started = factory_();
    lock.lock();
    stats_.starting = 0;
    if (!started.ok()) {
      ++stats_.start_failures;
      stats_.last_error = started.error().message();
      changed_.wait_for(lock, backoff, [this] { return stopping_; });
      backoff = std::min<std::chrono::milliseconds>(backoff * 2, kLongestBackoff);
      continue;
    }
    backoff = kFirstBackoff;
    stats_.last_error.clear();
    if (!stats_.enabled || stopping_) {
      lock.unlock();
      disposer_(std::move(*started));
      lock.lock();
      continue;
    }
    ready_.push_back(std::move(*started));
    stats_.ready = ready_.size();
  }
}

}  // namespace plimsoll::oci
