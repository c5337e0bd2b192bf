// What plimsoll-attest signs (docs/attest.md): an in-toto Statement v1
// about one checked exchange, carried in a DSSE envelope.
//
// A run or a session call:
//   {"_type": "https://in-toto.io/Statement/v1",
//    "subject": [{"name": "plimsoll-run", "digest": {"sha256": RECORD_SHA256}}],
//    "predicateType": "https://plimsoll.dev/attestation/run/v1",
//    "predicate": {"request_sha256", "result_sha256", "provider", "tier", "environment",
//                  "policy", "started_unix_ms", "ended_unix_ms",
//                  "session": {"session_sha256", "sequence", "previous_sha256"}  (session calls),
//                  "bundle": {"index", "previous_line_sha256"}}}
// A session's close:
//   {"_type": ..., "subject": [{"name": "plimsoll-session", "digest": {"sha256": SESSION_SHA256}}],
//    "predicateType": "https://plimsoll.dev/attestation/session-close/v1",
//    "predicate": {"ended", "calls", "last_record_sha256",
//                  "bundle": {"index", "previous_line_sha256"}}}
//
// "bundle" is the entry's place in its bundle (bundle.h): its line index and
// the SHA-256 of the previous line. It is inside the signed statement, so a
// dropped, reordered or inserted line breaks a signed link, not merely an
// unkeyed hash anyone could recompute.
//
// The statement is built from what the client checked; a verifier rebuilds
// it from the bundle's stored exchange and compares the bytes, so the
// signature covers exactly these fields.
#ifndef PLIMSOLL_ATTEST_STATEMENT_H_
#define PLIMSOLL_ATTEST_STATEMENT_H_

#include <string>
#include <string_view>

#include "plimsoll/record.h"
#include "plimsoll/session.h"

namespace plimsoll::attest {

inline constexpr std::string_view kStatementType = "https://in-toto.io/Statement/v1";
inline constexpr std::string_view kRunPredicateType = "https://plimsoll.dev/attestation/run/v1";
inline constexpr std::string_view kClosePredicateType =
    "https://plimsoll.dev/attestation/session-close/v1";
// The DSSE payloadType of every envelope.
inline constexpr std::string_view kPayloadType = "application/vnd.in-toto+json";

// An entry's place in its bundle: line `index` (from 0) and the lowercase
// hex SHA-256 of line index-1's bytes without its newline ("" for line 0).
struct BundleLink {
  int64_t index = 0;
  std::string previous_line_sha256;
  friend bool operator==(const BundleLink&, const BundleLink&) = default;
};

// The statement about a run's (or session call's) record, as compact JSON
// with its keys in the order above.
std::string RunStatement(const Record& record, const BundleLink& link);

// The statement about a session's close: its SHA-256 (SessionIdDigest)
// and what the daemon said at the close.
std::string CloseStatement(std::string_view session_sha256, const SessionClose& close,
                           const BundleLink& link);

}  // namespace plimsoll::attest

#endif  // PLIMSOLL_ATTEST_STATEMENT_H_
