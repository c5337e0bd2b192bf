#include "providers/linux/netns_pool.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "providers/linux/net.h"

namespace plimsoll::linux_sandbox {

NamespaceFd& NamespaceFd::operator=(NamespaceFd&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

NamespaceFd::~NamespaceFd() {
  if (fd_ >= 0) close(fd_);
}

Expected<NamespaceFd> MakeLoopbackNamespaceOnThisThread() {
  if (unshare(CLONE_NEWNET) != 0) return SystemError("unshare(CLONE_NEWNET)", errno);
  const char* what = "";
  if (int error = BringUpLoopback(&what); error != 0) return SystemError(what, error);
  int fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return SystemError("open /proc/thread-self/ns/net", errno);
  return NamespaceFd(fd);
}

namespace netns_detail {

int EnterForClone(int net_fd, int* home_fd) {
  *home_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
  if (*home_fd < 0) return errno;
  if (setns(net_fd, CLONE_NEWNET) != 0) {
    int error = errno;
    close(*home_fd);
    *home_fd = -1;
    return error;
  }
  return 0;
}

void ReturnHome(int home_fd) {
  if (setns(home_fd, CLONE_NEWNET) != 0) {
    std::fprintf(stderr, "plimsoll: fatal: a thread cannot return to its network namespace: %s\n",
                 std::strerror(errno));
    std::abort();
  }
  close(home_fd);
}

}  // namespace netns_detail

NetnsPool::NetnsPool(size_t spares) : spares_(spares) {
  if (spares_ > 0) worker_ = std::thread([this] { Work(); });
}

NetnsPool::~NetnsPool() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wanted_.notify_all();
  if (worker_.joinable()) worker_.join();
}

NamespaceFd NetnsPool::Take() {
  std::lock_guard lock(mutex_);
  if (ready_.empty()) return NamespaceFd();
  NamespaceFd net = std::move(ready_.front());
  ready_.pop_front();
  wanted_.notify_one();
  return net;
}

size_t NetnsPool::Ready() const {
  std::lock_guard lock(mutex_);
  return ready_.size();
}

std::string NetnsPool::LastError() const {
  std::lock_guard lock(mutex_);
  return last_error_;
}

void NetnsPool::Work() {
  std::unique_lock lock(mutex_);
  for (;;) {
    wanted_.wait(lock, [this] { return stopping_ || ready_.size() < spares_; });
    if (stopping_) return;
    lock.unlock();
    auto made = MakeLoopbackNamespaceOnThisThread();
    lock.lock();
    if (!made.ok()) {
      // Runs still work (each sandbox makes its own); say why, stop trying.
      last_error_ = made.error().message();
      return;
    }
    ready_.push_back(std::move(*made));
  }
}

}  // namespace plimsoll::linux_sandbox
