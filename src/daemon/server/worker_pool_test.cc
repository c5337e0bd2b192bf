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
