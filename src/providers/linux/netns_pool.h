// Network namespaces made ahead of the runs that use them.
//
// Creating a network namespace is most of the cost of building a linux
// sandbox here (~0.45 ms of a ~0.5 ms clone3 with every namespace; the
// kernel initialises each protocol's per-namespace state). The pool makes
// them on a background thread instead: each is a fresh namespace, owned by
// the host's user namespace, with only the loopback interface, up. A run
// takes one (never handed out twice) and its sandbox's clone joins it
// (JoinForClone); the sandbox's own user namespace holds no capability over
// it, so guest root cannot reconfigure it at all. When the pool is empty the
// caller gets nothing and the sandbox creates its own namespace as before:
// same wall, only slower.
//
// Thread-safety: Take() may be called from any thread. The worker thread
// lives in the last namespace it made; it does no networking.
//
// Usage:
//   NetnsPool pool(/*spares=*/2);
//   if (UniqueFd net = pool.Take(); net.valid()) { ... JoinForClone(net) ... }
#ifndef PLIMSOLL_PROVIDERS_LINUX_NETNS_POOL_H_
#define PLIMSOLL_PROVIDERS_LINUX_NETNS_POOL_H_

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include "plimsoll/error.h"

namespace plimsoll::linux_sandbox {

// An owned descriptor of a namespace (/proc/thread-self/ns/net).
class NamespaceFd {
 public:
  NamespaceFd() = default;
  explicit NamespaceFd(int fd) : fd_(fd) {}
  NamespaceFd(NamespaceFd&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  NamespaceFd& operator=(NamespaceFd&& other) noexcept;
  NamespaceFd(const NamespaceFd&) = delete;
  NamespaceFd& operator=(const NamespaceFd&) = delete;
  ~NamespaceFd();
  bool valid() const { return fd_ >= 0; }
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

class NetnsPool {
 public:
  // `spares` = 0 disables the pool (Take() always returns nothing).
  explicit NetnsPool(size_t spares);
  NetnsPool(const NetnsPool&) = delete;
  NetnsPool& operator=(const NetnsPool&) = delete;
  ~NetnsPool();  // stops the worker; unused namespaces are released

  // A namespace made ahead, or an invalid NamespaceFd when none is ready
  // (or making them failed: see LastError).
  NamespaceFd Take();
  // How many are ready now.
  size_t Ready() const;
  // Why the worker stopped making namespaces ("" while it works).
  std::string LastError() const;

 private:
  void Work();

  const size_t spares_;
  mutable std::mutex mutex_;
  std::condition_variable wanted_;
  std::deque<NamespaceFd> ready_;
  std::string last_error_;
  bool stopping_ = false;
  std::thread worker_;
};

// Makes one namespace as the pool does, on the calling thread, which then
// lives in it. Only for a thread that does no networking (the pool's worker
// and tests).
Expected<NamespaceFd> MakeLoopbackNamespaceOnThisThread();

// Runs `clone` with the calling thread inside `net`, so a child created
// without CLONE_NEWNET starts in it, then returns the thread to the network
// namespace it was in. Returns what `clone` returned, or -1 with errno set
// when the thread could not enter `net` (nothing was cloned then). If the
// thread cannot get back, the process aborts: a host thread left in a
// sandbox's namespace is a state no caller could reason about.
template <typename CloneFn>
long JoinForClone(const NamespaceFd& net, CloneFn clone);

// Implementation details of JoinForClone.
namespace netns_detail {
int EnterForClone(int net_fd, int* home_fd);  // 0 or errno
void ReturnHome(int home_fd);                 // aborts on failure
}  // namespace netns_detail

template <typename CloneFn>
long JoinForClone(const NamespaceFd& net, CloneFn clone) {
  int home = -1;
  if (int error = netns_detail::EnterForClone(net.get(), &home); error != 0) {
    errno = error;
    return -1;
  }
  long result = clone();
  int saved = errno;
  netns_detail::ReturnHome(home);
  errno = saved;
  return result;
}

}  // namespace plimsoll::linux_sandbox

#endif  // PLIMSOLL_PROVIDERS_LINUX_NETNS_POOL_H_
