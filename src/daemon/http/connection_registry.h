// The open connections of a server, so a drain can close the idle ones and
// wait for the busy ones (SPEC §4 "Shutdown drains in-flight runs").
//
// Each connection registers a callback that closes it if it is idle (it is
// run on the connection's own strand by the callback itself) and removes
// itself when it ends.
//
// Thread-safety: every method may be called from any thread.
//
// Usage:
//   uint64_t id = registry.Add([state] { ...post a close-if-idle... });
//   ... serve ...
//   registry.Remove(id);
//   // drain:
//   registry.CloseIdle();
//   bool all_done = registry.WaitEmpty(deadline);
#ifndef PLIMSOLL_DAEMON_HTTP_CONNECTION_REGISTRY_H_
#define PLIMSOLL_DAEMON_HTTP_CONNECTION_REGISTRY_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>

namespace plimsoll::daemon::http {

class ConnectionRegistry {
 public:
  using CloseIfIdle = std::function<void()>;

  uint64_t Add(CloseIfIdle close_if_idle);
  void Remove(uint64_t id);

  // Marks the registry draining and asks every connection to close if idle.
  // Connections added later see draining() and close after one answer.
  void CloseIdle();
  bool draining() const { return draining_.load(); }

  // Waits until no connection is open or `deadline` passes; true when empty.
  bool WaitEmpty(std::chrono::steady_clock::time_point deadline);
  size_t size() const;

 private:
  mutable std::mutex mutex_;
  std::condition_variable emptied_;
  std::map<uint64_t, CloseIfIdle> open_;
  uint64_t next_id_ = 1;
  std::atomic<bool> draining_{false};
};

}  // namespace plimsoll::daemon::http

#endif  // PLIMSOLL_DAEMON_HTTP_CONNECTION_REGISTRY_H_
