#include "daemon/http/connection_registry.h"

#include <vector>

namespace plimsoll::daemon::http {

uint64_t ConnectionRegistry::Add(CloseIfIdle close_if_idle) {
  std::lock_guard lock(mutex_);
  uint64_t id = next_id_++;
  open_.emplace(id, std::move(close_if_idle));
  return id;
}

void ConnectionRegistry::Remove(uint64_t id) {
  std::lock_guard lock(mutex_);
  open_.erase(id);
  if (open_.empty()) emptied_.notify_all();
}

void ConnectionRegistry::CloseIdle() {
  draining_.store(true);
  std::vector<CloseIfIdle> callbacks;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, callback] : open_) callbacks.push_back(callback);
  }
  for (const CloseIfIdle& callback : callbacks) callback();
}

bool ConnectionRegistry::WaitEmpty(std::chrono::steady_clock::time_point deadline) {
  std::unique_lock lock(mutex_);
  return emptied_.wait_until(lock, deadline, [this] { return open_.empty(); });
}

size_t ConnectionRegistry::size() const {
  std::lock_guard lock(mutex_);
  return open_.size();
}

}  // namespace plimsoll::daemon::http
