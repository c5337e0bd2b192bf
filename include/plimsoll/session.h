// Sessions (SPEC §9): one sandbox kept for several calls.
//
// Files in /work survive from call to call; a `cell` runs in the kept
// interpreter of its language (JavaScript on QuickJS, Python), so a variable
// one cell sets is there for the next; every other process is swept after
// each answer. A session is one trust domain: code from an earlier call can
// change what later calls see (docs/sessions.md).
//
// A Session validates each request as Sandbox::Run does (cells are only
// valid here), holds it to the session's tier and environment, re-reads the
// wall from the host side before every call, and chains the records: each
// carries `session` (SHA-256 of the ID), `sequence` (from 1) and
// `previous_sha256` (the record before it).
//
// One call at a time; one more may wait for it; a third concurrent call is
// refused `capacity`. A session ends with a reason: `closed` (Close),
// `expired` (lifetime or idle timeout), `disk_exceeded` (its files passed
// the disk bound after a call), `boundary_failed` (the host-side check of
// the wall found a difference; nothing ran), `shutdown`, `replaced` (the
// daemon's owner cap), ... Calls on an ended session are refused (nothing
// ran) with ErrorCode::kNotFound and a message naming the reason.
//
// Usage:
//
//   auto sandbox = plimsoll::Sandbox::Open("embedded");
//   auto session = sandbox->OpenSession(plimsoll::SessionOptions{});
//   if (!session.ok()) { ... }   // refusals carry NotDispatched
//   plimsoll::Request cell;
//   cell.cell = plimsoll::CellPayload{"javascript", "let x = 41"};
//   (*session)->Run(cell);
//   cell.cell->code = "x + 1";
//   auto result = (*session)->Run(cell);  // result->cell->value == "42"
//   (*session)->Close();
//
// Thread-safety: all methods may be called from several threads at once.
// The Session must not outlive the Sandbox that opened it.
#ifndef PLIMSOLL_SESSION_H_
#define PLIMSOLL_SESSION_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"
#include "plimsoll/granted_calls.h"
#include "plimsoll/limits.h"
#include "plimsoll/provider.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"
#include "plimsoll/tier.h"

namespace plimsoll {

enum class SessionEndReason {
  kClosed,
  kExpired,
  kDiskExceeded,
  kMainProcessEnded,
  kBoundaryFailed,
  kSandboxChanged,
  kShutdown,
  kReplaced,
  kNotFound,
  kUnclaimed,
};

// "closed", "expired", "disk_exceeded", ...
std::string_view SessionEndReasonName(SessionEndReason reason);
std::optional<SessionEndReason> ParseSessionEndReason(std::string_view name);

inline constexpr int64_t kDefaultSessionLifetimeMs = 30 * 60 * 1000;
inline constexpr int64_t kMaximumSessionLifetimeMs = 12 * 60 * 60 * 1000;
inline constexpr int64_t kDefaultSessionIdleTimeoutMs = 5 * 60 * 1000;
inline constexpr int64_t kDefaultSessionDiskBytes = int64_t{1} << 30;

struct SessionOptions {
  std::string minimum_isolation;  // "" or a tier name: the floor for the session
  std::string environment;        // "" or the exact image identity required
  std::string image;              // "" (the default) or the name of a served image
  int64_t lifetime_ms = 0;        // <= 0: 30 min; at most 12 h
  int64_t idle_timeout_ms = 0;    // <= 0: 5 min; at most the lifetime
  int64_t disk_bytes = 0;         // <= 0: 1 GiB
  friend bool operator==(const SessionOptions&, const SessionOptions&) = default;
};

// What GET /v1/sessions/{id} shows.
struct SessionInfo {
  std::string id;
  std::string provider;
  Tier isolation = Tier::kUnknown;
  std::string environment;
  std::string image;  // the name of the image it runs; "" when unnamed
  int64_t created_unix_ms = 0;
  int64_t expires_unix_ms = 0;  // the lifetime's end
  int64_t idle_timeout_ms = 0;
  int64_t last_used_unix_ms = 0;
  int64_t calls = 0;  // answered calls (each has a record)
  int64_t disk_used_bytes = 0;
  int64_t disk_bytes = 0;  // the bound
  std::vector<std::string> interpreters;
  bool busy = false;    // a call is running
  bool queued = false;  // another call waits for it
  std::optional<SessionEndReason> ended;
  std::string last_record_sha256;
};

// What closing a session answers.
struct SessionClose {
  SessionEndReason ended = SessionEndReason::kClosed;
  int64_t calls = 0;
  std::string last_record_sha256;  // "" when no call was answered
};

class Session {
 public:
  ~Session();  // ends the session `closed` if it is still open
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // 128 random bits, 32 lowercase hex digits.
  const std::string& id() const { return id_; }

  // Runs one call (see the file comment). Refusals carry NotDispatched.
  // A call naming a grant profile needs `grant`, opened by the caller from
  // the broker for a session (SPEC §8: the profile's allow_in_sessions);
  // without one it is refused `permission`, and a sandbox that cannot serve
  // it refuses `unsupported`. The grant serves this call only; its trace
  // and advice go on the result before the record is made.
  Expected<Result> Run(const Request& request, GrantedCalls* grant = nullptr);

  SessionInfo Info() const;

  // Ends the session with `reason` (the first end wins: a closed session
  // stays closed) once a running call has answered, and destroys its
  // sandbox. Idempotent.
  SessionClose End(SessionEndReason reason);
  SessionClose Close() { return End(SessionEndReason::kClosed); }

  // Ends the session `expired` when its lifetime or idle timeout has passed
  // (and no call is running). Returns whether it is ended now, whatever
  // ended it. The daemon's sweeper calls this.
  bool ExpireIfDue();

  std::optional<SessionEndReason> ended() const;

 private:
  friend class Sandbox;
  struct Facts {
    std::string provider;
    Limits limits;
    std::string policy;
    Tier tier = Tier::kUnknown;
    std::string environment;
    std::string image;  // the name of the image it runs ("" = unnamed)
  };
  Session(std::string id, Facts facts, const SessionOptions& options,
          std::unique_ptr<ProviderSession> sandbox);
  // 128 bits from getrandom, as hex; a refusal (capacity) when it fails.
  static Expected<std::string> NewId();
  // With mutex_ held: ends the session when it is due; whether it ended.
  bool ExpiredLocked(std::chrono::steady_clock::time_point now);
  void EndLocked(SessionEndReason reason);
  Error EndedRefusal() const;  // with mutex_ held

  const std::string id_;
  const std::string id_sha256_;
  const Facts facts_;
  const int64_t created_unix_ms_;
  const std::chrono::steady_clock::time_point created_;
  const std::chrono::milliseconds lifetime_;
  const std::chrono::milliseconds idle_timeout_;
  const int64_t disk_bytes_;

  mutable std::mutex mutex_;
  std::condition_variable turn_;
  std::unique_ptr<ProviderSession> sandbox_;  // reset when the session ends
  bool running_ = false;
  int waiting_ = 0;
  std::optional<SessionEndReason> ended_;
  std::chrono::steady_clock::time_point last_used_;
  int64_t last_used_unix_ms_;
  int64_t calls_ = 0;
  std::string last_record_sha256_;
  int64_t disk_used_bytes_ = 0;
  std::vector<std::string> interpreters_;  // as of the last call
};

}  // namespace plimsoll

#endif  // PLIMSOLL_SESSION_H_
