// Session: a kept sandbox, one call at a time, chained records. See
// plimsoll/session.h.
#include "plimsoll/session.h"

#include <sys/random.h>

#include <cerrno>
#include <utility>

#include "plimsoll/record.h"

namespace plimsoll {
namespace {

using Clock = std::chrono::steady_clock;

int64_t UnixMillisecondsNow() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

Expected<std::string> Session::NewId() {
  unsigned char bytes[16];
  size_t filled = 0;
  while (filled < sizeof bytes) {
    ssize_t got = getrandom(bytes + filled, sizeof bytes - filled, 0);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) {
      return Refusal(NotDispatched::kCapacity, ErrorCode::kInternal,
                     "The session ID could not be drawn: getrandom failed.");
    }
    filled += static_cast<size_t>(got);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  for (unsigned char byte : bytes) {
    id += kHex[byte >> 4];
    id += kHex[byte & 15];
  }
  return id;
}

Session::Session(std::string id, Facts facts, const SessionOptions& options,
                 std::unique_ptr<ProviderSession> sandbox)
    : id_(std::move(id)),
      id_sha256_(SessionIdDigest(id_)),
      facts_(std::move(facts)),
      created_unix_ms_(UnixMillisecondsNow()),
      created_(Clock::now()),
      lifetime_(options.lifetime_ms > 0 ? options.lifetime_ms : kDefaultSessionLifetimeMs),
      idle_timeout_(options.idle_timeout_ms > 0 ? options.idle_timeout_ms
                                                : kDefaultSessionIdleTimeoutMs),
      disk_bytes_(options.disk_bytes > 0 ? options.disk_bytes : kDefaultSessionDiskBytes),
      sandbox_(std::move(sandbox)),
      last_used_(created_),
      last_used_unix_ms_(created_unix_ms_) {}

Session::~Session() {
  End(SessionEndReason::kClosed);
}

std::optional<SessionEndReason> Session::ended() const {
  std::lock_guard lock(mutex_);
  return ended_;
}

void Session::EndLocked(SessionEndReason reason) {
  if (!ended_) ended_ = reason;
  turn_.notify_all();
}

bool Session::ExpiredLocked(Clock::time_point now) {
  if (ended_) return true;
  if (running_) return false;
  if (now >= created_ + lifetime_ || now >= last_used_ + idle_timeout_) {
    EndLocked(SessionEndReason::kExpired);
    return true;
  }
  return false;
}

Error Session::EndedRefusal() const {
  return Refusal(NotDispatched::kRequest, ErrorCode::kNotFound,
                 "The session has ended (" + std::string(SessionEndReasonName(*ended_)) +
                     "); nothing ran. Open a new session.");
}

bool Session::ExpireIfDue() {
  std::unique_ptr<ProviderSession> doomed;
  bool ended;
  {
    std::lock_guard lock(mutex_);
    ended = ExpiredLocked(Clock::now());
    if (ended && !running_) doomed = std::move(sandbox_);
  }
  return ended;  // `doomed` destroys the sandbox outside the lock
}

SessionClose Session::End(SessionEndReason reason) {
  std::unique_ptr<ProviderSession> doomed;
  SessionClose answer;
  {
    std::unique_lock lock(mutex_);
    EndLocked(reason);
    turn_.wait(lock, [this] { return !running_; });
    doomed = std::move(sandbox_);
    answer = SessionClose{*ended_, calls_, last_record_sha256_};
  }
  return answer;
}

SessionInfo Session::Info() const {
  std::lock_guard lock(mutex_);
  SessionInfo info;
  info.id = id_;
  info.provider = facts_.provider;
  info.isolation = facts_.tier;
  info.environment = facts_.environment;
  info.image = facts_.image;
  info.created_unix_ms = created_unix_ms_;
  info.expires_unix_ms = created_unix_ms_ + lifetime_.count();
  info.idle_timeout_ms = idle_timeout_.count();
  info.last_used_unix_ms = last_used_unix_ms_;
  info.calls = calls_;
  info.disk_used_bytes = disk_used_bytes_;
  info.disk_bytes = disk_bytes_;
  info.interpreters = interpreters_;
  info.busy = running_;
  info.queued = waiting_ > 0;
  info.ended = ended_;
  info.last_record_sha256 = last_record_sha256_;
  return info;
}

Expected<Result> Session::Run(const Request& request, GrantedCalls* grant) {
  auto validated = ValidateRequest(request, facts_.limits, /*in_session=*/true);
  if (!validated.ok()) return validated.error();
  if (validated->grant_profile.empty()) {
    grant = nullptr;
  } else if (grant == nullptr) {
    PLIMSOLL_RETURN_IF_ERROR(RefuseUnservedGrant(*validated));
  }
  PLIMSOLL_RETURN_IF_ERROR(CheckImageServed(validated->image, facts_.image));
  if (!validated->minimum_isolation.empty()) {
    Tier floor = *ParseTier(validated->minimum_isolation);
    if (!MeetsFloor(facts_.tier, floor)) {
      return Refusal(NotDispatched::kIsolation,
                     "The request needs isolation " + std::string(TierName(floor)) +
                         " or stronger; this session's sandbox is " +
                         std::string(TierName(facts_.tier)) + ".");
    }
  }
  if (!validated->environment.empty() && validated->environment != facts_.environment) {
    return Refusal(NotDispatched::kEnvironment, "The request requires environment " +
                                                    validated->environment +
                                                    "; this session's sandbox has " +
                                                    facts_.environment + ".");
  }

  std::unique_lock lock(mutex_);
  if (ExpiredLocked(Clock::now())) return EndedRefusal();
  if (running_) {
    if (waiting_ >= 1) {
      return Refusal(NotDispatched::kCapacity,
                     "The session is running a call and another one is waiting; a session "
                     "takes one call at a time and queues one more.");
    }
    ++waiting_;
    turn_.wait(lock, [this] { return !running_ || ended_.has_value(); });
    --waiting_;
    if (ExpiredLocked(Clock::now())) return EndedRefusal();
  }
  running_ = true;
  ProviderSession* sandbox = sandbox_.get();
  const int64_t sequence = calls_ + 1;
  const std::string previous = last_record_sha256_;
  lock.unlock();

  // Ends the call: whatever happened, the next one may go, and a session
  // that ended meanwhile gives up its sandbox here (outside the lock).
  std::unique_ptr<ProviderSession> doomed;
  auto finish = [&](auto&& update) {
    std::lock_guard relock(mutex_);
    update();
    running_ = false;
    last_used_ = Clock::now();
    last_used_unix_ms_ = UnixMillisecondsNow();
    if (ended_) doomed = std::move(sandbox_);
    turn_.notify_all();
  };

  Status boundary = sandbox->CheckBoundary();
  if (!boundary.ok()) {
    finish([this] { EndLocked(SessionEndReason::kBoundaryFailed); });
    return Refusal(NotDispatched::kEnvironment,
                   "The session's sandbox failed its host-side check before the call (" +
                       boundary.error().message() +
                       "); the session ended (boundary_failed) and nothing ran.");
  }

  RecordClock clock = RecordClock::Start();
  const auto deadline = Clock::now() + std::chrono::milliseconds(validated->timeout_ms);
  Expected<Result> result = grant != nullptr ? sandbox->RunGranted(*validated, deadline, *grant)
                                              : sandbox->Run(*validated, deadline);
  RecordClock::Span span = clock.Stop();
  if (result.ok() && grant != nullptr) {
    result->broker = grant->Summary();
    result->advice = grant->Advice();
  }
  const int64_t disk_used = sandbox->DiskUsedBytes();
  std::vector<std::string> interpreters = sandbox->InterpretersAlive();

  if (result.ok()) {
    result->provider = facts_.provider;
    result->kind = *validated->kind();
    // Honesty: never above the tier the session's sandbox was made with.
    if (!IsRunnableTier(result->isolation)) {
      result->isolation = Tier::kUnknown;
    } else if (CompareTiers(result->isolation, facts_.tier) > 0) {
      result->isolation = facts_.tier;
    }
    if (result->environment.empty()) result->environment = facts_.environment;
    if (!validated->minimum_isolation.empty() &&
        !MeetsFloor(result->isolation, *ParseTier(validated->minimum_isolation))) {
      // Code ran (no mark), and the floor forbids handing back a result
      // from below it (as Sandbox::Run does).
      result = Failure(ErrorCode::kInternal,
                       "The call's tier is " + std::string(TierName(result->isolation)) +
                           ", below the request's floor; the result is withheld. Code may "
                           "have run: do not retry automatically.");
    } else {
      result->record = MakeRecord(request, *result, facts_.policy, span,
                                  SessionLink{id_sha256_, sequence, previous});
    }
  }
  finish([&] {
    if (result.ok()) {
      calls_ = sequence;
      last_record_sha256_ = result->record.record_sha256;
    }
    disk_used_bytes_ = disk_used;
    interpreters_ = std::move(interpreters);
    if (disk_used > disk_bytes_) EndLocked(SessionEndReason::kDiskExceeded);
  });
  return result;
}

}  // namespace plimsoll
