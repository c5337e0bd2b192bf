#include "daemon/server/readiness_probe.h"

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <exception>

namespace plimsoll::daemon {

namespace asio = boost::asio;

// Shared by the awaiting coroutine and the probe's thread. It owns no asio
// object: the timer lives in the coroutine's frame, so whichever thread drops
// the last reference (the probe's, possibly after the io_context is gone),
// nothing of the io_context is touched. `timer` is set while the coroutine
// waits and cleared by the frame itself (even when an io_context shutdown
// destroys it); both fields under `mutex`.
struct ReadinessProbe::Waiter {
  explicit Waiter(const asio::any_io_executor& coroutine_executor)
      : executor(coroutine_executor) {}
  asio::any_io_executor executor;
  std::mutex mutex;
  std::optional<Status> result;
  asio::steady_timer* timer = nullptr;
};

namespace {

// Wakes `waiter` on its own executor, only while its coroutine still waits
// (so the executor's io_context is alive: it owns that coroutine's frame).
void Wake(const std::shared_ptr<ReadinessProbe::Waiter>& waiter) {
  std::lock_guard lock(waiter->mutex);
  if (waiter->timer == nullptr) return;
  asio::post(waiter->executor, [weak = std::weak_ptr<ReadinessProbe::Waiter>(waiter)] {
    std::shared_ptr<ReadinessProbe::Waiter> alive = weak.lock();
    if (!alive) return;
    std::lock_guard inner(alive->mutex);
    if (alive->timer != nullptr) alive->timer->cancel();
  });
}

Status NotFinished(std::string why) {
  return Failure(ErrorCode::kFailedPrecondition, std::move(why));
}

}  // namespace

ReadinessProbe::ReadinessProbe(Preflight preflight, const Options& options, Observer observer)
    : preflight_(std::move(preflight)), options_(options), observer_(std::move(observer)) {
  thread_ = std::thread([this] { Loop(); });
}

ReadinessProbe::~ReadinessProbe() {
  Stop();
}

void ReadinessProbe::Stop() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

size_t ReadinessProbe::preflights() const {
  std::lock_guard lock(mutex_);
  return preflights_;
}

void ReadinessProbe::Loop() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return requested_ || stopping_; });
    if (stopping_) break;
    requested_ = false;
    running_ = true;
    lock.unlock();
    Status result = Status::Ok();
    try {
      result = preflight_();
    } catch (const std::exception& exception) {
      result =
          Failure(ErrorCode::kInternal, std::string("The preflight threw: ") + exception.what());
    }
    if (observer_) observer_(result);
    lock.lock();
    running_ = false;
    ++preflights_;
    last_ = result;
    last_finished_ = std::chrono::steady_clock::now();
    std::vector<std::shared_ptr<Waiter>> waiters;
    waiters.swap(waiters_);
    lock.unlock();
    for (const std::shared_ptr<Waiter>& waiter : waiters) {
      {
        std::lock_guard waiter_lock(waiter->mutex);
        waiter->result = result;
      }
      Wake(waiter);
    }
    lock.lock();
  }
  // Whoever still waits hears "stopped" at its own bound at the latest; wake
  // them now so a drain is not held up.
  std::vector<std::shared_ptr<Waiter>> waiters;
  waiters.swap(waiters_);
  lock.unlock();
  for (const std::shared_ptr<Waiter>& waiter : waiters) Wake(waiter);
}

asio::awaitable<Status> ReadinessProbe::Check() {
  // Named locals around every co_await (g++ 12 destroys non-trivial
  // temporaries of a co_await expression twice).
  asio::any_io_executor executor = co_await asio::this_coro::executor;
  auto waiter = std::make_shared<Waiter>(executor);
  asio::steady_timer timer(executor);
  {
    std::lock_guard lock(waiter->mutex);
    waiter->timer = &timer;
  }
  // Declared after the timer, so destroyed before it: the probe's thread
  // never sees a timer that is gone.
  struct Detach {
    Waiter& waiter;
    ~Detach() {
      std::lock_guard lock(waiter.mutex);
      waiter.timer = nullptr;
    }
  } detach{*waiter};
  {
    std::lock_guard lock(mutex_);
    if (stopping_) co_return NotFinished("The daemon is stopping.");
    auto now = std::chrono::steady_clock::now();
    if (!running_ && last_ && now - last_finished_ < options_.freshness) co_return *last_;
    if (waiters_.size() >= options_.max_waiters) {
      co_return NotFinished("Too many readiness checks are waiting for the provider's preflight.");
    }
    waiters_.push_back(waiter);
    if (!running_) requested_ = true;
  }
  wake_.notify_one();
  timer.expires_after(options_.wait_bound);
  auto [error] = co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  (void)error;
  {
    std::lock_guard lock(waiter->mutex);
    if (waiter->result) co_return *waiter->result;
  }
  {
    std::lock_guard lock(mutex_);
    std::erase(waiters_, waiter);
    if (stopping_) co_return NotFinished("The daemon is stopping.");
  }
  co_return NotFinished("The provider's preflight did not finish within " +
                        std::to_string(options_.wait_bound.count()) + " ms.");
}

}  // namespace plimsoll::daemon
