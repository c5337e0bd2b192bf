#include "daemon/server/worker_pool.h"

#include <cstring>

namespace plimsoll::daemon {

Status WorkerPool::Start() {
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  int error = pthread_attr_setstacksize(&attributes, options_.stack_bytes);
  for (size_t i = 0; error == 0 && i < options_.workers; ++i) {
    pthread_t thread;
    error = pthread_create(&thread, &attributes, &WorkerPool::ThreadMain, this);
    if (error == 0) threads_.push_back(thread);
  }
  pthread_attr_destroy(&attributes);
  if (error != 0) {
    Shutdown();
    return SystemError("Cannot start the run worker threads", error);
  }
  return Status::Ok();
}

WorkerPool::~WorkerPool() {
  Shutdown();
}

void* WorkerPool::ThreadMain(void* pool) {
  static_cast<WorkerPool*>(pool)->Work();
  return nullptr;
}

bool WorkerPool::TrySubmit(std::unique_ptr<Task>& task) {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ || queue_.size() >= options_.queue_capacity + (options_.workers - running_)) {
      return false;
    }
    queue_.push_back(std::move(task));
  }
  wake_.notify_one();
  return true;
}

void WorkerPool::Work() {
  std::unique_lock lock(mutex_);
  while (true) {
    wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopping and nothing left
    std::unique_ptr<Task> task = std::move(queue_.front());
    queue_.pop_front();
    ++running_;
    task->pool_ = this;
    lock.unlock();
    task->Run();
    Release(*task);
    task.reset();
    lock.lock();
  }
}

void WorkerPool::Release(Task& task) {
  {
    std::lock_guard lock(mutex_);
    if (task.released_) return;
    task.released_ = true;
    --running_;
  }
  idle_.notify_all();
}

void WorkerPool::Task::ReleaseWorker() {
  if (pool_ != nullptr) pool_->Release(*this);
}

void WorkerPool::Shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_ && threads_.empty()) return;
    stopping_ = true;
  }
  wake_.notify_all();
  for (pthread_t thread : threads_) pthread_join(thread, nullptr);
  threads_.clear();
}

bool WorkerPool::WaitIdle(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return idle_.wait_until(lock, deadline, [this] { return running_ == 0 && queue_.empty(); });
}

size_t WorkerPool::running() const {
  std::lock_guard lock(mutex_);
  return running_;
}

size_t WorkerPool::queued() const {
  std::lock_guard lock(mutex_);
  return queue_.size();
}

}  // namespace plimsoll::daemon
