// SessionRegistry: the daemon's open sessions. See session_registry.h.
#include "daemon/server/session_registry.h"

#include <algorithm>
#include <utility>

#include "plimsoll/record.h"

namespace plimsoll::daemon {

SessionRegistry::SessionRegistry(SessionCaps caps, EndedSink ended)
    : caps_(caps), ended_(std::move(ended)) {}

SessionRegistry::~SessionRegistry() {
  Shutdown();
}

void SessionRegistry::Start() {
  std::lock_guard lock(mutex_);
  if (sweeper_.joinable() || shut_down_) return;
  sweeper_ = std::thread([this] {
    std::unique_lock sleeping(mutex_);
    while (!shut_down_) {
      wake_.wait_for(sleeping, caps_.sweep_interval);
      if (shut_down_) break;
      sleeping.unlock();
      Sweep();
      sleeping.lock();
    }
  });
}

void SessionRegistry::Report(const Entry& entry, const SessionClose& close) {
  if (ended_) ended_({entry.caller, SessionIdDigest(entry.session->id()), close});
}

std::optional<SessionRegistry::Entry> SessionRegistry::TakeLocked(const std::string& id) {
  auto it = sessions_.find(id);
  if (it == sessions_.end()) return std::nullopt;
  Entry entry = std::move(it->second);
  sessions_.erase(it);
  return entry;
}

Expected<std::shared_ptr<Session>> SessionRegistry::Open(const std::string& caller,
                                                         const std::string& owner,
                                                         const SessionOptions& options,
                                                         Sandbox& sandbox) {
  // A malformed open is refused as such, whatever the caps say.
  PLIMSOLL_RETURN_IF_ERROR(Sandbox::CheckSessionOptions(options));
  std::optional<Entry> replaced;
  {
    std::lock_guard lock(mutex_);
    if (shut_down_) {
      return Refusal(NotDispatched::kUnsupported, "The daemon is shutting down.");
    }
    auto count = [this](auto matches) {
      return static_cast<size_t>(
          std::count_if(sessions_.begin(), sessions_.end(),
                        [&](const auto& item) { return matches(item.second); }));
    };
    if (sessions_.size() + opening_ >= caps_.total) {
      return Refusal(NotDispatched::kCapacity,
                     "The daemon has " + std::to_string(caps_.total) +
                         " sessions open, its limit; close one or try again later.");
    }
    const size_t callers =
        count([&](const Entry& e) { return e.caller == caller; }) + opening_by_caller_[caller];
    if (callers >= caps_.per_caller) {
      return Refusal(NotDispatched::kCapacity, "This caller has " +
                                                   std::to_string(caps_.per_caller) +
                                                   " sessions open, its limit; close one first.");
    }
    if (!owner.empty()) {
      const size_t owners =
          count([&](const Entry& e) { return e.caller == caller && e.owner == owner; }) +
          opening_by_owner_[caller + "/" + owner];
      if (owners >= caps_.per_owner) {
        // The owner's least-recently-used idle session makes room.
        const std::string* oldest = nullptr;
        int64_t oldest_use = 0;
        for (const auto& [id, entry] : sessions_) {
          if (entry.caller != caller || entry.owner != owner) continue;
          SessionInfo info = entry.session->Info();
          if (info.busy || info.queued) continue;
          if (oldest == nullptr || info.last_used_unix_ms < oldest_use) {
            oldest = &id;
            oldest_use = info.last_used_unix_ms;
          }
        }
        if (oldest == nullptr) {
          return Refusal(NotDispatched::kCapacity,
                         "This owner has " + std::to_string(caps_.per_owner) +
                             " sessions open and every one is busy; try again when one is idle.");
        }
        replaced = TakeLocked(*oldest);
      }
    }
    ++opening_;
    ++opening_by_caller_[caller];
    if (!owner.empty()) ++opening_by_owner_[caller + "/" + owner];
  }
  if (replaced) Report(*replaced, replaced->session->End(SessionEndReason::kReplaced));

  Expected<std::unique_ptr<Session>> opened = sandbox.OpenSession(options);

  std::lock_guard lock(mutex_);
  --opening_;
  if (--opening_by_caller_[caller] == 0) opening_by_caller_.erase(caller);
  if (!owner.empty() && --opening_by_owner_[caller + "/" + owner] == 0) {
    opening_by_owner_.erase(caller + "/" + owner);
  }
  if (!opened.ok()) return opened.error();
  std::shared_ptr<Session> session = std::move(*opened);
  if (shut_down_) {
    session->End(SessionEndReason::kShutdown);
    return Refusal(NotDispatched::kUnsupported, "The daemon is shutting down.");
  }
  sessions_.emplace(session->id(), Entry{caller, owner, session});
  return session;
}

std::shared_ptr<Session> SessionRegistry::Find(std::string_view caller, std::string_view id) {
  std::optional<Entry> gone;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.caller != caller) return nullptr;
    if (!it->second.session->ended()) return it->second.session;
    gone = TakeLocked(it->first);
  }
  Report(*gone, gone->session->End(SessionEndReason::kClosed));  // keeps its first reason
  return nullptr;
}

std::optional<SessionClose> SessionRegistry::Close(std::string_view caller, std::string_view id) {
  std::optional<Entry> entry;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(id);
    if (it == sessions_.end() || it->second.caller != caller) return std::nullopt;
    entry = TakeLocked(it->first);
  }
  const bool ended_before = entry->session->ended().has_value();
  SessionClose close = entry->session->Close();
  Report(*entry, close);
  // A session that had ended by itself (expired, disk) is no longer there
  // to close: the same not_found as any unknown ID.
  if (ended_before) return std::nullopt;
  return close;
}

void SessionRegistry::Sweep() {
  std::vector<std::pair<std::string, std::shared_ptr<Session>>> open;
  {
    std::lock_guard lock(mutex_);
    for (const auto& [id, entry] : sessions_) open.emplace_back(id, entry.session);
  }
  // Ending a session destroys its sandbox: never under the registry's lock.
  std::vector<std::string> due;
  for (const auto& [id, session] : open) {
    if (session->ExpireIfDue()) due.push_back(id);
  }
  std::vector<Entry> gone;
  {
    std::lock_guard lock(mutex_);
    for (const std::string& id : due) {
      if (auto entry = TakeLocked(id)) gone.push_back(std::move(*entry));
    }
  }
  for (const Entry& entry : gone) Report(entry, entry.session->End(SessionEndReason::kExpired));
}

void SessionRegistry::Shutdown() {
  std::vector<Entry> all;
  {
    std::lock_guard lock(mutex_);
    shut_down_ = true;
    for (auto& [id, entry] : sessions_) all.push_back(std::move(entry));
    sessions_.clear();
  }
  wake_.notify_all();
  if (sweeper_.joinable()) sweeper_.join();
  for (const Entry& entry : all) Report(entry, entry.session->End(SessionEndReason::kShutdown));
}

size_t SessionRegistry::open() const {
  std::lock_guard lock(mutex_);
  return sessions_.size();
}

}  // namespace plimsoll::daemon
