// Sandboxes started ahead of the runs that use them (the warm pool of the
// `oci` and `microvm` providers), and destroying used ones off the answer's
// path. Templates over the sandbox type: any type with `bool Healthy() const`
// and `Status Destroy(Deadline)` fits (OciSandbox, MicrovmVm).
//
// WarmPool:
//  - a background thread keeps up to `size` sandboxes started; Take() hands
//    one out for exactly one run (the caller destroys it afterwards) after
//    checking Healthy(); idle ones are checked every second; an unfit one is
//    destroyed and counted, never handed out;
//  - the pool serves only while enabled, for one configuration generation
//    (generations.h): the provider enables it for the generation its smoke
//    test confirmed, and disables it (destroying every idle sandbox) when a
//    later one does not, so a sandbox is never handed out on evidence that
//    could not be re-confirmed. Every sandbox is tagged with the generation
//    it was started for; Take(generation) hands out only those, and serving
//    a new generation destroys the idle ones of the old;
//  - an empty pool (exhausted, refilling, disabled or failing) makes Take()
//    return nullptr at once: the caller starts a sandbox itself within its
//    own deadline. The pool never sheds a run; the daemon's admission does;
//  - start failures back off from 0.5 s to 30 s; the last error is kept;
//  - a run may hold the refill its take calls for (Take(generation,
//    /*hold_refill=*/true) ... ReleaseRefill(after) once it answered), so
//    that building the next sandbox does not compete with the run for the
//    CPU (the linux provider, whose runs are a few milliseconds); `after`
//    also keeps it off the answer's way out of the process. While any hold
//    is open (or `after` has not passed) the pool refills only when it is
//    empty, so a busy pool never leaves the next run without a sandbox just
//    to keep the CPU quiet.
// Destroyer: one background thread; with `max_pending` waiting, Add()
// destroys the sandbox itself (callers slow down instead of sandboxes piling
// up); the destructor destroys everything still queued.
//
// Usage:
//   pool::Destroyer<OciSandbox> destroyer(32);
//   pool::WarmPool<OciSandbox> warm(2, [&](uint64_t generation) { return Start(generation); },
//                                   [&](auto s) { destroyer.Add(std::move(s)); });
//   warm.Enable(generation);
//   if (auto sandbox = warm.Take(generation)) { ... } else { /* cold start */ }
//
// Thread-safety: every method may be called from any thread.
#ifndef PLIMSOLL_PROVIDERS_POOL_WARM_POOL_H_
#define PLIMSOLL_PROVIDERS_POOL_WARM_POOL_H_

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "plimsoll/error.h"
#include "plimsoll/provider.h"

namespace plimsoll::pool {

template <typename T>
class Destroyer {
 public:
  explicit Destroyer(size_t max_pending) : max_pending_(max_pending) {}
  Destroyer(const Destroyer&) = delete;
  Destroyer& operator=(const Destroyer&) = delete;
  ~Destroyer() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    if (worker_.joinable()) worker_.join();
    for (auto& item : queue_) DestroyOne(*item);
  }

  void Add(std::unique_ptr<T> item) {
    if (!item) return;
    {
      std::lock_guard lock(mutex_);
      if (!stopping_ && queue_.size() + in_progress_ < max_pending_) {
        queue_.push_back(std::move(item));
        if (!worker_.joinable()) worker_ = std::thread([this] { Work(); });
      }
    }
    if (item) {
      DestroyOne(*item);
      return;
    }
    ready_.notify_one();
  }
  // Returns once everything handed over so far is destroyed.
  void Drain() {
    std::unique_lock lock(mutex_);
    drained_.wait(lock, [this] { return queue_.empty() && in_progress_ == 0; });
  }
  std::string LastError() const {
    std::lock_guard lock(mutex_);
    return last_error_;
  }

 private:
  void DestroyOne(T& item) {
    Status destroyed = item.Destroy(std::chrono::steady_clock::now() + std::chrono::seconds(15));
    if (!destroyed.ok()) {
      std::lock_guard lock(mutex_);
      last_error_ = destroyed.error().message();
    }
  }
  void Work() {
    std::unique_lock lock(mutex_);
    for (;;) {
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;
      std::unique_ptr<T> item = std::move(queue_.front());
      queue_.pop_front();
      ++in_progress_;
      lock.unlock();
      DestroyOne(*item);
      item.reset();
      lock.lock();
      --in_progress_;
      if (queue_.empty() && in_progress_ == 0) drained_.notify_all();
    }
  }

  const size_t max_pending_;
  mutable std::mutex mutex_;
  std::condition_variable ready_, drained_;
  std::deque<std::unique_ptr<T>> queue_;
  size_t in_progress_ = 0;
  bool stopping_ = false;
  std::string last_error_;
  std::thread worker_;
};

template <typename T>
class WarmPool {
 public:
  // Starts a sandbox with the configuration of the given generation.
  using Factory = std::function<Expected<std::unique_ptr<T>>(uint64_t generation)>;
  using Disposer = std::function<void(std::unique_ptr<T>)>;

  struct Stats {
    size_t size = 0;
    size_t ready = 0;
    size_t starting = 0;
    bool enabled = false;
    uint64_t generation = 0;  // the configuration it serves
    uint64_t handed_out = 0;
    uint64_t empty = 0;
    uint64_t unhealthy = 0;
    uint64_t start_failures = 0;
    std::string last_error;
  };

  WarmPool(size_t size, Factory factory, Disposer disposer)
      : size_(size), factory_(std::move(factory)), disposer_(std::move(disposer)) {
    stats_.size = size;
  }
  WarmPool(const WarmPool&) = delete;
  WarmPool& operator=(const WarmPool&) = delete;
  ~WarmPool() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    if (worker_.joinable()) worker_.join();
    for (auto& item : ready_) disposer_(std::move(item));
  }

  // Serves sandboxes of `generation`; idle ones of another are destroyed.
  void Enable(uint64_t generation) {
    if (size_ == 0) return;
    std::deque<std::unique_ptr<T>> stale;
    {
      std::lock_guard lock(mutex_);
      if (stats_.generation != generation) {
        stale.swap(ready_);
        stats_.ready = 0;
      }
      stats_.generation = generation;
      stats_.enabled = true;
      if (!worker_.joinable()) worker_ = std::thread([this] { Work(); });
    }
    changed_.notify_all();
    for (auto& item : stale) disposer_(std::move(item));
  }
  void Disable() {
    std::deque<std::unique_ptr<T>> idle;
    {
      std::lock_guard lock(mutex_);
      stats_.enabled = false;
      idle.swap(ready_);
      stats_.ready = 0;
    }
    changed_.notify_all();
    for (auto& item : idle) disposer_(std::move(item));
  }

  // A healthy sandbox started for `generation`, or nullptr at once.
  std::unique_ptr<T> Take(uint64_t generation) { return Take(generation, false); }

  // The same; with `hold_refill` and a sandbox handed out, the refill waits
  // (while any sandbox is still ready) until ReleaseRefill(), which the
  // caller must then call exactly once, when its run has answered.
  std::unique_ptr<T> Take(uint64_t generation, bool hold_refill) {
    std::vector<std::unique_ptr<T>> unfit;
    std::unique_ptr<T> taken;
    {
      std::lock_guard lock(mutex_);
      while (stats_.enabled && stats_.generation == generation && !ready_.empty()) {
        std::unique_ptr<T> candidate = std::move(ready_.front());
        ready_.pop_front();
        if (candidate->Healthy()) {
          taken = std::move(candidate);
          break;
        }
        ++stats_.unhealthy;
        unfit.push_back(std::move(candidate));
      }
      stats_.ready = ready_.size();
      ++(taken ? stats_.handed_out : stats_.empty);
      if (taken && hold_refill) ++holds_;
    }
    changed_.notify_all();  // time to refill
    for (auto& item : unfit) disposer_(std::move(item));
    return taken;
  }

  // Ends one hold of Take(generation, true): the refill may start, `after`
  // from now (time for the answer to leave the caller's process; a refill
  // of an empty pool does not wait).
  void ReleaseRefill(std::chrono::microseconds after = std::chrono::microseconds(0)) {
    {
      std::lock_guard lock(mutex_);
      if (holds_ > 0) --holds_;
      refill_not_before_ = std::max(refill_not_before_, std::chrono::steady_clock::now() + after);
    }
    changed_.notify_all();
  }

  Stats stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
  }
  // The public form (Description::pool, the daemon's metrics).
  PoolState State() const {
    Stats now = stats();
    return PoolState{.size = now.size,
                     .ready = now.ready,
                     .enabled = now.enabled,
                     .handed_out = now.handed_out,
                     .found_empty = now.empty,
                     .unhealthy = now.unhealthy,
                     .start_failures = now.start_failures};
  }

  // Serves the generation of evidence whose every check passed (a smoke
  // test's answer goes here, after the generation was promoted); anything
  // else disables the pool.
  void FollowEvidence(const Expected<Evidence>& evidence) {
    if (evidence.ok() && evidence->AllChecksPassed()) {
      Enable(evidence->generation);
    } else {
      Disable();
    }
  }

  // "1 of 1 ready (enabled); 3 handed out, ...".
  std::string Describe() const {
    Stats now = stats();
    if (now.size == 0) return "off (size 0): every run starts its own sandbox";
    std::string text =
        std::to_string(now.ready) + " of " + std::to_string(now.size) + " ready (" +
        (now.enabled ? "enabled" : "disabled until the smoke test confirms the wall") + "); " +
        std::to_string(now.handed_out) + " handed out, " + std::to_string(now.empty) +
        " found empty, " + std::to_string(now.unhealthy) + " discarded as unhealthy, " +
        std::to_string(now.start_failures) + " start failures";
    if (now.starting) text += ", 1 starting now";
    if (!now.last_error.empty()) text += " (last: " + now.last_error.substr(0, 300) + ")";
    return text;
  }

 private:
  void Work() {
    auto backoff = std::chrono::milliseconds(500);
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      std::vector<std::unique_ptr<T>> unfit;
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
        for (auto& item : unfit) disposer_(std::move(item));
        lock.lock();
        continue;
      }
      if (!stats_.enabled || ready_.size() >= size_ || (holds_ > 0 && !ready_.empty())) {
        changed_.wait_for(lock, std::chrono::seconds(1));
        continue;
      }
      if (!ready_.empty() && std::chrono::steady_clock::now() < refill_not_before_) {
        changed_.wait_until(lock, refill_not_before_);
        continue;
      }
      stats_.starting = 1;
      uint64_t generation = stats_.generation;
      lock.unlock();
      auto started = factory_(generation);
      lock.lock();
      stats_.starting = 0;
      if (!started.ok()) {
        ++stats_.start_failures;
        stats_.last_error = started.error().message();
        changed_.wait_for(lock, backoff, [this] { return stopping_; });
        backoff = std::min<std::chrono::milliseconds>(backoff * 2, std::chrono::seconds(30));
        continue;
      }
      backoff = std::chrono::milliseconds(500);
      stats_.last_error.clear();
      // Started for a configuration that no longer serves: never handed out.
      if (!stats_.enabled || stopping_ || stats_.generation != generation) {
        lock.unlock();
        disposer_(std::move(*started));
        lock.lock();
        continue;
      }
      ready_.push_back(std::move(*started));
      stats_.ready = ready_.size();
    }
  }

  const size_t size_;
  const Factory factory_;
  const Disposer disposer_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::unique_ptr<T>> ready_;
  Stats stats_;
  size_t holds_ = 0;  // runs that took a sandbox and hold the refill
  std::chrono::steady_clock::time_point refill_not_before_;  // ReleaseRefill(after)
  bool stopping_ = false;
  std::thread worker_;
};

// How long after a pooled run returns its refill may start (while the pool
// still has a sandbox ready): the answer's way out of the process (the
// Sandbox's record, the daemon's reply) should not share the CPU, or the
// process's memory map, with the next sandbox's start. Measured on a pooled
// runsc run: a refill released as the report arrived put 0.3-1.9 ms between
// the report and the run's return.
inline constexpr std::chrono::milliseconds kRefillGrace{2};

// Ends one Take(generation, /*hold_refill=*/true) hold when it goes out of
// scope (the run has returned): the refill may start kRefillGrace later.
// Null `pool`: nothing was taken, nothing is held.
//
//   std::unique_ptr<T> taken = pool.Take(generation, /*hold_refill=*/true);
//   RefillHold<T> hold(taken ? &pool : nullptr);
template <typename T>
class RefillHold {
 public:
  explicit RefillHold(WarmPool<T>* pool) : pool_(pool) {}
  RefillHold(const RefillHold&) = delete;
  RefillHold& operator=(const RefillHold&) = delete;
  ~RefillHold() {
    if (pool_ != nullptr) pool_->ReleaseRefill(kRefillGrace);
  }

 private:
  WarmPool<T>* const pool_;
};

}  // namespace plimsoll::pool

#endif  // PLIMSOLL_PROVIDERS_POOL_WARM_POOL_H_
