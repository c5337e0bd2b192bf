// Awaiting a function on the WorkerPool for at most a bound, from a coroutine
// on the event loop (every run is bounded: SPEC §4's run ceiling).
//
// The bound starts when a worker starts the function, not when it is queued.
// The coroutine resumes on its own executor (its strand) with one of:
//   kFull     - the pool was full or shut down; `function` was not called;
//   kReturned - `function` returned within the bound; `value` holds it;
//   kOverran  - the bound passed first. The function cannot be cancelled: it
//               keeps its worker until it returns, and its value is dropped.
// The function object is destroyed on the worker as soon as it returns and
// before the coroutine hears of it, so whatever it owns (an admission permit)
// is released exactly when the work ends, whether or not anyone still waits.
//
// `function` must not throw and must own what it uses or refer to things that
// outlive the pool's tasks (the Server's pool is shut down before the rest).
//
// Usage:
//   auto outcome = co_await RunOnPoolBounded(pool, std::move(work), 10s);
//   if (outcome.kind == BoundedOutcomeKind::kOverran) ... // answer deadline_exceeded
#ifndef PLIMSOLL_DAEMON_SERVER_RUN_ON_POOL_BOUNDED_H_
#define PLIMSOLL_DAEMON_SERVER_RUN_ON_POOL_BOUNDED_H_

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/this_coro.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <type_traits>
#include <utility>

#include "daemon/server/worker_pool.h"

namespace plimsoll::daemon {

enum class BoundedOutcomeKind { kFull, kReturned, kOverran };

template <class Value>
struct BoundedOutcome {
  BoundedOutcomeKind kind = BoundedOutcomeKind::kFull;
  std::optional<Value> value;  // set when kReturned
};

namespace run_on_pool_bounded_detail {

// Shared by the awaiting coroutine and the task; outlives whichever ends first.
template <class Value>
struct Rendezvous {
  explicit Rendezvous(const boost::asio::any_io_executor& coroutine_executor)
      : executor(coroutine_executor), timer(coroutine_executor) {}
  boost::asio::any_io_executor executor;  // the coroutine's (a strand)
  std::mutex mutex;                       // guards value
  std::optional<Value> value;
  boost::asio::steady_timer timer;  // touched on `executor` only
};

template <class Function>
class BoundedTask final : public WorkerPool::Task {
 public:
  using Value = std::invoke_result_t<Function&>;

  BoundedTask(Function function, std::shared_ptr<Rendezvous<Value>> rendezvous,
              std::chrono::steady_clock::duration bound)
      : function_(std::move(function)), rendezvous_(std::move(rendezvous)), bound_(bound) {}

  void Run() noexcept override {
    // Re-arming the timer wakes the waiting coroutine, which waits again.
    auto deadline = std::chrono::steady_clock::now() + bound_;
    boost::asio::post(rendezvous_->executor, [rendezvous = rendezvous_, deadline] {
      rendezvous->timer.expires_at(deadline);
    });
    std::optional<Value> value(std::in_place, (*function_)());
    function_.reset();
    ReleaseWorker();  // before the answer can reach the client
    {
      std::lock_guard lock(rendezvous_->mutex);
      rendezvous_->value = std::move(value);
    }
    boost::asio::post(rendezvous_->executor,
                      [rendezvous = rendezvous_] { rendezvous->timer.cancel(); });
  }

 private:
  std::optional<Function> function_;
  std::shared_ptr<Rendezvous<Value>> rendezvous_;
  std::chrono::steady_clock::duration bound_;
};

}  // namespace run_on_pool_bounded_detail

template <class Function>
auto RunOnPoolBounded(WorkerPool& pool, Function function,
                      std::chrono::steady_clock::duration bound)
    -> boost::asio::awaitable<BoundedOutcome<std::invoke_result_t<Function&>>> {
  using Value = std::invoke_result_t<Function&>;
  using Rendezvous = run_on_pool_bounded_detail::Rendezvous<Value>;
  // Named locals, not temporaries, around every co_await (g++ 12 destroys
  // non-trivial temporaries of a co_await expression twice).
  boost::asio::any_io_executor executor = co_await boost::asio::this_coro::executor;
  auto rendezvous = std::make_shared<Rendezvous>(executor);
  rendezvous->timer.expires_at(std::chrono::steady_clock::time_point::max());
  std::unique_ptr<WorkerPool::Task> task =
      std::make_unique<run_on_pool_bounded_detail::BoundedTask<Function>>(std::move(function),
                                                                          rendezvous, bound);
  BoundedOutcome<Value> outcome;
  if (!pool.TrySubmit(task)) co_return outcome;
  while (true) {
    auto [error] =
        co_await rendezvous->timer.async_wait(boost::asio::as_tuple(boost::asio::use_awaitable));
    {
      std::lock_guard lock(rendezvous->mutex);
      if (rendezvous->value) {
        outcome.kind = BoundedOutcomeKind::kReturned;
        outcome.value = std::move(rendezvous->value);
        co_return outcome;
      }
    }
    // Expired on its own: the bound passed. Aborted: the worker started and
    // set the deadline; wait again.
    if (!error) {
      outcome.kind = BoundedOutcomeKind::kOverran;
      co_return outcome;
    }
  }
}

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_RUN_ON_POOL_BOUNDED_H_
