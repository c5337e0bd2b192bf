// The call trace of one run: every call the guest made through the broker,
// allowed or denied, as the broker saw it (SPEC §8).
//
// An entry keeps the method, the route TEMPLATE that matched (never the
// concrete path), the status, whether the broker allowed it and why not, the
// sizes and the latency, and an opaque fingerprint: HMAC-SHA256, under a key
// random to this run, of method + canonical path + body. Equal fingerprints
// mean "the same request again", which is all the advisor (advisor.h) needs
// to find repeated reads; the key dies with the trace, so a fingerprint
// cannot be tested against guesses of the path or body afterwards.
//
// Summarize() folds the entries into rows by (method, route, status,
// allowed, reason), at most kMaxSummaryRows of them (the most frequent),
// with the number of rows left out and the totals.
//
// Usage (one CallTrace per run and grant profile):
//
//   auto trace = CallTrace::Create();  // Expected<std::unique_ptr<CallTrace>>
//   TraceEntry entry{.method = "GET", .route = "/items/*", .status = 200, ...};
//   entry.fingerprint = (*trace)->Fingerprint("GET", canonical_path, body);
//   (*trace)->Record(std::move(entry));
//   TraceSummary summary = (*trace)->Summarize();
//   auto advice = Advise((*trace)->Entries(), profile);
//
// Thread-safe: the broker may record calls of one run from several threads.
#ifndef PLIMSOLL_BROKER_TRACE_H_
#define PLIMSOLL_BROKER_TRACE_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "broker/route.h"
#include "plimsoll/error.h"
#include "plimsoll/result.h"

namespace plimsoll::broker {

inline constexpr std::size_t kMaxSummaryRows = ::plimsoll::kMaxBrokerRoutes;
// Entries kept for the advisor; calls past it are still counted in the
// summary, and entries_dropped() says how many were not kept.
inline constexpr std::size_t kMaxTraceEntries = 4096;

// Why a call did not get (all of) its answer. kNone: it did.
enum class CallRefusal {
  kNone,
  kNotAllowed,       // no allow entry matches (or an unknown method)
  kBadPath,          // CanonicalizePath refused the path
  kMaxCalls,         // the profile's max_calls is spent
  kRouteMaxCalls,    // the route's route_max_calls is spent
  kCircuitOpen,      // the upstream asked us to back off (circuit_breaker.h)
  kBodyTooLarge,     // the request body is over the cap
  kUpstreamTimeout,  // no answer within the run's deadline
  kUpstreamError,    // connection or protocol failure upstream
};

// "" for kNone, else "not_allowed", "bad_path", "max_calls", ...
std::string_view CallRefusalCode(CallRefusal refusal);

// The method as a trace records it: one of GET HEAD POST PUT PATCH DELETE,
// or "OTHER" for anything a guest made up (traces never carry guest text).
std::string TraceMethodName(std::string_view guest_method);

struct TraceEntry {
  std::string method;    // TraceMethodName
  std::string route;     // the template's path ("/items/*"), "" when none matched
  int status = 0;        // the upstream's HTTP status; 0 when it gave none
  bool allowed = false;  // whether the broker let the call go upstream
  CallRefusal refusal = CallRefusal::kNone;
  int64_t request_bytes = 0;
  int64_t response_bytes = 0;
  double latency_ms = 0;
  std::string fingerprint;  // hex; "" when the path was refused
  friend bool operator==(const TraceEntry&, const TraceEntry&) = default;
};

struct TraceSummaryRow {
  std::string method;
  std::string route;
  int status = 0;
  bool allowed = false;
  std::string reason;  // CallRefusalCode
  int64_t count = 0;
  friend bool operator==(const TraceSummaryRow&, const TraceSummaryRow&) = default;
};

// The trace as the result carries it (the lead moves it into the public
// Result, covered by the result digest).
struct TraceSummary {
  // Sorted by (method, route, status, allowed, reason): byte-stable for a
  // digest. At most kMaxSummaryRows.
  std::vector<TraceSummaryRow> rows;
  int64_t rows_dropped = 0;  // distinct rows left out (the least frequent)
  int64_t calls = 0;         // every call, allowed or denied
  int64_t denied = 0;        // calls with allowed == false
  friend bool operator==(const TraceSummary&, const TraceSummary&) = default;
};

class CallTrace {
 public:
  // A trace with a fresh random 32-byte fingerprint key (RAND_bytes).
  static Expected<std::unique_ptr<CallTrace>> Create();
  // A trace with a given key (tests; or a caller with its own randomness).
  explicit CallTrace(std::string fingerprint_key);
  ~CallTrace();  // wipes the key
  CallTrace(const CallTrace&) = delete;
  CallTrace& operator=(const CallTrace&) = delete;

  // Lowercase hex HMAC-SHA256 under this trace's key of the method, the
  // canonical (encoded) path and the body, each length-prefixed so no two
  // different requests share an input. "" if OpenSSL fails.
  std::string Fingerprint(std::string_view method, const CanonicalPath& path,
                          std::string_view body) const;

  void Record(TraceEntry entry);

  // The kept entries, in call order (a copy).
  std::vector<TraceEntry> Entries() const;
  int64_t entries_dropped() const;

  TraceSummary Summarize() const;

 private:
  using RowKey = std::tuple<std::string, std::string, int, bool, std::string>;

  std::string key_;
  mutable std::mutex mutex_;
  std::vector<TraceEntry> entries_;  // guarded by mutex_
  int64_t entries_dropped_ = 0;      // guarded by mutex_
  std::map<RowKey, int64_t> rows_;   // guarded by mutex_
  int64_t calls_ = 0;                // guarded by mutex_
  int64_t denied_ = 0;               // guarded by mutex_
};

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_TRACE_H_
