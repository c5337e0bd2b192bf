// Run records (SPEC §5): digests that bind what was sent to what came back.
//
// The digest encoding is byte-exact and identical in every client language;
// docs/run-records.md gives the field order of each digest, and
// testdata/records/vectors.json holds shared test vectors.
//
// Usage (daemon side, done by plimsoll::Sandbox):
//
//   plimsoll::RecordClock clock = plimsoll::RecordClock::Start();
//   ... run ...
//   result.record = plimsoll::MakeRecord(request, result, policy, clock.Stop());
//
// Usage (client side):
//
//   plimsoll::Status status = plimsoll::CheckExchange(sent, received, &chain);
//   if (!status.ok()) { /* data_loss: do not believe the answer */ }
#ifndef PLIMSOLL_RECORD_H_
#define PLIMSOLL_RECORD_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "plimsoll/error.h"
#include "plimsoll/limits.h"
#include "plimsoll/tier.h"

namespace plimsoll {

struct Request;
struct Result;

inline constexpr int64_t kRecordVersion = 1;
inline constexpr std::string_view kRequestDomain = "plimsoll.run-request.v1";
inline constexpr std::string_view kResultDomain = "plimsoll.run-result.v1";
inline constexpr std::string_view kRecordDomain = "plimsoll.run-record.v1";
inline constexpr std::string_view kPolicyDomain = "plimsoll.policy.v1";

// The session fields of a record made by a session call.
struct SessionLink {
  std::string session_sha256;   // SHA-256 of the session ID, lowercase hex
  int64_t sequence = 0;         // from 1
  std::string previous_sha256;  // record_sha256 of the previous call; "" for 1
  friend bool operator==(const SessionLink&, const SessionLink&) = default;
};

struct Record {
  int64_t version = kRecordVersion;
  std::string request_sha256;
  std::string result_sha256;
  std::string provider;
  Tier isolation = Tier::kUnknown;
  std::string environment;
  std::string policy;  // identity of the enforced limits (PolicyDigest)
  int64_t started_unix_ms = 0;
  int64_t ended_unix_ms = 0;  // start + monotonic elapsed, never before start
  std::optional<SessionLink> session;
  std::string record_sha256;
  friend bool operator==(const Record&, const Record&) = default;
};

// Wall-clock start plus a monotonic stopwatch, so that the end time is
// start + elapsed and can never precede the start, even if the wall clock
// steps backwards during the run.
class RecordClock {
 public:
  struct Span {
    int64_t started_unix_ms = 0;
    int64_t ended_unix_ms = 0;
  };
  static RecordClock Start();
  // For tests: an explicit start and monotonic origin.
  RecordClock(int64_t started_unix_ms, std::chrono::steady_clock::time_point origin)
      : started_unix_ms_(started_unix_ms), origin_(origin) {}
  Span Stop() const;
  Span StopAt(std::chrono::steady_clock::time_point now) const;

 private:
  int64_t started_unix_ms_;
  std::chrono::steady_clock::time_point origin_;
};

// The three digests, lowercase hex SHA-256 (64 characters).
std::string RequestDigest(const Request& request);
std::string ResultDigest(const Result& result);  // ignores result.record
std::string RecordDigest(const Record& record);  // ignores record.record_sha256

// SHA-256 of a session ID, for SessionLink::session_sha256.
std::string SessionIdDigest(std::string_view session_id);

// The identity of an enforced envelope, for Record::policy: a digest with
// domain kPolicyDomain over every Limits field in declaration order.
std::string PolicyDigest(const Limits& limits);

// Builds the record of an answered call: fills both digests from `request`
// and `result`, copies provider, isolation and environment from `result`,
// and computes record_sha256.
Record MakeRecord(const Request& request, const Result& result, std::string policy,
                  RecordClock::Span span, std::optional<SessionLink> session = std::nullopt);

// The state a client keeps to check a session's record chain.
struct ChainState {
  std::string session_sha256;
  int64_t last_sequence = 0;
  std::string last_record_sha256;
};

// What a client checks on every answer (SPEC §5): both digests recomputed
// from what was sent and received, the record's provider, tier and
// environment equal to the answer's, the tier meeting the request's floor,
// record_sha256 recomputed, start <= end, and, when `chain` is given, session
// continuity (advancing `chain` on success); without `chain` (a single run)
// the record must carry no session fields. Any mismatch is kDataLoss.
Status CheckExchange(const Request& sent, const Result& received, ChainState* chain = nullptr);

}  // namespace plimsoll

#endif  // PLIMSOLL_RECORD_H_
