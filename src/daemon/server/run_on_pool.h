// Awaiting a function that runs on the WorkerPool, from a coroutine on the
// event loop: the coroutine suspends, the function runs on a worker thread,
// and the coroutine resumes on its own executor (its strand) with the value.
//
// Returns nullopt, without calling `function`, when the pool is full or shut
// down (the caller answers `capacity`: nothing ran).
//
// `function` must not throw (wrap it; an exception on a worker would end the
// process). It is moved to the worker thread, so it must own what it uses or
// refer to things that outlive the await.
//
// Usage:
//   std::optional<Expected<Result>> outcome =
//       co_await RunOnPool(pool, [&sandbox, request] { return sandbox.Run(request); });
//   if (!outcome) ... // full
#ifndef PLIMSOLL_DAEMON_SERVER_RUN_ON_POOL_H_
#define PLIMSOLL_DAEMON_SERVER_RUN_ON_POOL_H_

#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "daemon/server/worker_pool.h"

namespace plimsoll::daemon {

namespace run_on_pool_detail {

template <class Function, class Handler>
class PoolTask final : public WorkerPool::Task {
 public:
  using Value = std::invoke_result_t<Function&>;

  PoolTask(Function function, Handler handler)
      : function_(std::move(function)),
        handler_(std::move(handler)),
        work_(boost::asio::make_work_guard(boost::asio::get_associated_executor(handler_))) {}

  void Run() noexcept override {
    std::optional<Value> value(function_());
    Deliver(std::move(handler_), std::move(value), std::move(work_));
  }

  static void Deliver(
      Handler handler, std::optional<Value> value,
      boost::asio::executor_work_guard<boost::asio::associated_executor_t<Handler>> work) {
    auto executor = boost::asio::get_associated_executor(handler);
    boost::asio::post(executor,
                      [handler = std::move(handler), value = std::move(value),
                       work = std::move(work)]() mutable { std::move(handler)(std::move(value)); });
  }

  Handler& handler() { return handler_; }
  auto& work() { return work_; }

 private:
  Function function_;
  Handler handler_;
  boost::asio::executor_work_guard<boost::asio::associated_executor_t<Handler>> work_;
};

}  // namespace run_on_pool_detail

template <class Function>
auto RunOnPool(WorkerPool& pool, Function function)
    -> boost::asio::awaitable<std::optional<std::invoke_result_t<Function&>>> {
  using Value = std::invoke_result_t<Function&>;
  // Only trivially destructible values cross the co_await below (g++ 12
  // destroys non-trivial temporaries of a co_await expression twice); the
  // initiation runs while this frame, and so `function`, is alive.
  Function* owned = &function;
  co_return co_await boost::asio::async_initiate<decltype(boost::asio::use_awaitable),
                                                 void(std::optional<Value>)>(
      [&pool, owned](auto handler) {
        using Task = run_on_pool_detail::PoolTask<Function, decltype(handler)>;
        auto task = std::make_unique<Task>(std::move(*owned), std::move(handler));
        std::unique_ptr<WorkerPool::Task> erased = std::move(task);
        if (pool.TrySubmit(erased)) return;
        auto* full = static_cast<Task*>(erased.get());
        Task::Deliver(std::move(full->handler()), std::nullopt, std::move(full->work()));
      },
      boost::asio::use_awaitable);
}

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_RUN_ON_POOL_H_
