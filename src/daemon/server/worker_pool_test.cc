#include "daemon/server/worker_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>

namespace plimsoll::daemon {
namespace {

class FunctionTask final : public WorkerPool::Task {
 public:
  explicit FunctionTask(std::function<void()> function) : function_(std::move(function)) {}
  void Run() noexcept override { function_(); }

 private:
  std::function<void()> function_;
};

std::unique_ptr<WorkerPool::Task> MakeTask(std::function<void()> function) {
  return std::make_unique<FunctionTask>(std::move(function));
}

TEST(WorkerPool, RefusesBeyondWorkersPlusQueue) {
  WorkerPool pool({.workers = 1, .queue_capacity = 1});
  ASSERT_TRUE(pool.Start().ok());
  std::mutex mutex;
  std::condition_variable changed;
  bool release = false;
  std::atomic<int> started{0};
  auto blocker = [&] {
    ++started;
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return release; });
  };
  auto first = MakeTask(blocker);
  ASSERT_TRUE(pool.TrySubmit(first));
  while (started.load() == 0) std::this_thread::yield();
  auto second = MakeTask(blocker);
  ASSERT_TRUE(pool.TrySubmit(second));
  auto third = MakeTask(blocker);
  EXPECT_FALSE(pool.TrySubmit(third));
  EXPECT_NE(third, nullptr);  // still ours
  {
    std::lock_guard lock(mutex);
    release = true;
  }
  changed.notify_all();
  pool.Shutdown();
  EXPECT_EQ(started.load(), 2);
}

// A task that hands its worker back before it finishes, then waits.
class ReleasingTask final : public WorkerPool::Task {
 public:
  explicit ReleasingTask(std::function<void()> after_release)
      : after_release_(std::move(after_release)) {}
  void Run() noexcept override {
    ReleaseWorker();
    ReleaseWorker();  // a second call does nothing
    after_release_();
  }

 private:
  std::function<void()> after_release_;
};

// The daemon's runs hand their worker back just before the answer is
// published (run_on_pool_bounded.h): a client that sends its next request on
// seeing the answer must not be refused for a worker that is only finishing.
TEST(WorkerPool, AReleasedWorkerTakesTheNextTaskOnceItReturns) {
  WorkerPool pool({.workers = 1, .queue_capacity = 0});
  ASSERT_TRUE(pool.Start().ok());
  std::mutex mutex;
  std::condition_variable changed;
  bool released = false, finish = false, second_ran = false;
  std::unique_ptr<WorkerPool::Task> first = std::make_unique<ReleasingTask>([&] {
    std::unique_lock lock(mutex);
    released = true;
    changed.notify_all();
    changed.wait(lock, [&] { return finish; });
  });
  ASSERT_TRUE(pool.TrySubmit(first));
  {
    std::unique_lock lock(mutex);
    changed.wait(lock, [&] { return released; });
  }
  EXPECT_EQ(pool.running(), 0u);
  auto second = MakeTask([&] {
    std::lock_guard lock(mutex);
    second_ran = true;
  });
  ASSERT_TRUE(pool.TrySubmit(second)) << "refused while the only worker was only finishing";
  auto third = MakeTask([] {});
  EXPECT_FALSE(pool.TrySubmit(third)) << "one worker, no queue: one task may wait for it";
  {
    std::lock_guard lock(mutex);
    finish = true;
  }
  changed.notify_all();
  ASSERT_TRUE(pool.WaitIdle(std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  std::lock_guard lock(mutex);
  EXPECT_TRUE(second_ran);
}

TEST(WorkerPool, ThreadsHaveTheRequestedStack) {
  WorkerPool pool({.workers = 1, .queue_capacity = 1, .stack_bytes = size_t{8} << 20});
  ASSERT_TRUE(pool.Start().ok());
  std::atomic<size_t> stack{0};
  auto task = MakeTask([&] {
    pthread_attr_t attributes;
    pthread_getattr_np(pthread_self(), &attributes);
    size_t size = 0;
    pthread_attr_getstacksize(&attributes, &size);
    pthread_attr_destroy(&attributes);
    stack = size;
  });
  ASSERT_TRUE(pool.TrySubmit(task));
  pool.Shutdown();
  EXPECT_GE(stack.load(), size_t{8} << 20);
}

}  // namespace
}  // namespace plimsoll::daemon
