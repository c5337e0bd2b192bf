// The daemon's open sessions (SPEC §9): who owns each, the caps per caller
// and per owner, the sweep of expired ones, and their end at shutdown.
//
// A session belongs to the caller that opened it, optionally narrowed to an
// end-user `owner` (an HMAC the client computed; the daemon never sees a raw
// name). Find answers only the owning caller; an unknown, ended or foreign
// ID gets nullptr, so the handlers answer all of them with the same
// not_found. At the owner cap, opening another session ends the owner's
// least-recently-used idle one `replaced`; at the caller (or daemon) cap the
// open is refused `capacity`.
//
// Every end is written to the audit log as one `session_ended` line with
// the reason, calls and last record (the answer to a later call on that ID
// is not_found, which says nothing of why).
//
// Thread-safety: all methods may be called from several threads at once.
#ifndef PLIMSOLL_DAEMON_SERVER_SESSION_REGISTRY_H_
#define PLIMSOLL_DAEMON_SERVER_SESSION_REGISTRY_H_

#include <condition_variable>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "plimsoll/sandbox.h"
#include "plimsoll/session.h"

namespace plimsoll::daemon {

struct SessionCaps {
  size_t per_caller = 16;
  size_t per_owner = 4;
  size_t total = 256;
  // How often the sweeper looks for expired sessions.
  std::chrono::milliseconds sweep_interval{1000};
};

// One line for the audit log when a session ends.
struct SessionEnded {
  std::string caller;
  std::string session_sha256;  // never the ID itself
  SessionClose close;
};

class SessionRegistry {
 public:
  using EndedSink = std::function<void(const SessionEnded&)>;
  SessionRegistry(SessionCaps caps, EndedSink ended);
  ~SessionRegistry();  // Shutdown()
  SessionRegistry(const SessionRegistry&) = delete;
  SessionRegistry& operator=(const SessionRegistry&) = delete;

  // Starts the sweeper thread.
  void Start();

  // Opens a session for `caller` (and `owner`, "" for none) through
  // `sandbox`.OpenSession (the sandbox of the image it names; the caps count
  // the sessions of every image together). Refusals: the caps (capacity),
  // and whatever the sandbox refuses. Slow (it makes a sandbox): call on a
  // worker thread.
  Expected<std::shared_ptr<Session>> Open(const std::string& caller, const std::string& owner,
                                          const SessionOptions& options, Sandbox& sandbox);

  // The caller's open session with this ID, or nullptr (unknown, ended,
  // another caller's). A session found ended is dropped here.
  std::shared_ptr<Session> Find(std::string_view caller, std::string_view id);

  // Ends the caller's session `closed` and forgets it; nullopt when Find
  // would give nullptr.
  std::optional<SessionClose> Close(std::string_view caller, std::string_view id);

  // Ends and forgets every session past its lifetime or idle timeout, and
  // forgets those that ended otherwise (disk, boundary). The sweeper calls it.
  void Sweep();

  // Ends every session `shutdown`; later opens are refused `unsupported`.
  void Shutdown();

  size_t open() const;

 private:
  struct Entry {
    std::string caller;
    std::string owner;
    std::shared_ptr<Session> session;
  };
  // With mutex_ held: removes `id` and returns its entry for ending outside.
  std::optional<Entry> TakeLocked(const std::string& id);
  void Report(const Entry& entry, const SessionClose& close);

  const SessionCaps caps_;
  const EndedSink ended_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::map<std::string, Entry, std::less<>> sessions_;
  // Opens under way, counted against the caps.
  std::map<std::string, size_t, std::less<>> opening_by_caller_;
  std::map<std::string, size_t, std::less<>> opening_by_owner_;
  size_t opening_ = 0;
  bool shut_down_ = false;
  std::thread sweeper_;
};

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_SESSION_REGISTRY_H_
