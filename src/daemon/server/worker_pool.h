// A bounded pool of threads for runs, so a long run never blocks the event
// loop, and a full pool refuses instead of queueing without bound.
//
// Threads are created with an explicit stack size (default 8 MiB): the
// embedded engine needs at least 4 MiB, and the default pthread stack follows
// RLIMIT_STACK, which an operator's `ulimit -s` may have lowered.
//
// At most `workers` tasks run at once and at most `queue_capacity` more wait;
// TrySubmit refuses beyond that (the caller answers `capacity`).
//
// Thread-safety: every method may be called from any thread. Shutdown() runs
// the queued tasks, then joins; it must not be called from a worker.
//
// Usage:
//   WorkerPool pool({.workers = 2, .queue_capacity = 64});
//   PLIMSOLL_RETURN_IF_ERROR(pool.Start());
//   std::unique_ptr<WorkerPool::Task> task = ...;
//   if (!pool.TrySubmit(task)) { /* full: task is still ours */ }
#ifndef PLIMSOLL_DAEMON_SERVER_WORKER_POOL_H_
#define PLIMSOLL_DAEMON_SERVER_WORKER_POOL_H_

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::daemon {

class WorkerPool {
 public:
  struct Options {
    size_t workers = 2;
    size_t queue_capacity = 64;
    size_t stack_bytes = size_t{8} << 20;
  };

  class Task {
   public:
    virtual ~Task() = default;
    // Runs on a worker thread. Must not throw.
    virtual void Run() noexcept = 0;

   protected:
    // Counts this task's worker as free from now on, before Run() returns.
    // A task calls it just before it hands its result to whoever waits for
    // it: a client that submits again as soon as it sees the answer then
    // finds the slot free (the worker takes the new task once Run()
    // returns), instead of being refused for a worker that is only
    // finishing. Later calls, and calls outside Run(), do nothing.
    void ReleaseWorker();

   private:
    friend class WorkerPool;
    WorkerPool* pool_ = nullptr;  // set while a worker runs this task
    bool released_ = false;
  };

  explicit WorkerPool(const Options& options) : options_(options) {}
  ~WorkerPool();

  // Starts the threads; an error when a thread cannot be created (the ones
  // that did start are stopped). Tasks submitted before Start() wait.
  Status Start();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Queues `task` and returns true (taking it), or returns false and leaves
  // `task` alone when the pool is full or shut down.
  bool TrySubmit(std::unique_ptr<Task>& task);

  void Shutdown();

  // Waits until no task runs or waits, or `deadline`; true when idle.
  bool WaitIdle(std::chrono::steady_clock::time_point deadline);

  size_t running() const;
  size_t queued() const;
  const Options& options() const { return options_; }

 private:
  static void* ThreadMain(void* pool);
  void Work();
  void Release(Task& task);

  Options options_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable idle_;  // notified when a task finishes
  std::deque<std::unique_ptr<Task>> queue_;
  size_t running_ = 0;
  bool stopping_ = false;
  std::vector<pthread_t> threads_;
};

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_WORKER_POOL_H_
