// The efficiency advisor: wasteful call patterns in one run's trace (SPEC §8).
//
// It reads only trace entries (method, route template, status, sizes,
// latency and the opaque fingerprint) and the profile's `batch_of` hints:
// never a concrete path, a body or a credential, because the trace never
// holds them. So a finding can never leak the data sent or received.
//
// Patterns:
//   fan_out: N >= kMinFanOutCalls answered calls to a per-item route whose
//     collection route (batch_of) is granted. extra_calls = N - 1;
//     added_latency_ms = (N - 1) x the median latency of those calls;
//     bytes = their response bytes.
//   repeated_read: GETs of one route whose fingerprint (same method, path and
//     body) was seen before in the run. extra_calls = the repeats;
//     added_latency_ms = repeats x the median latency of the calls with a
//     repeated fingerprint; bytes = their response bytes.
// Both are agent-fixable: the agent's code can change what it calls. Each
// finding's route is the allow entry ("GET /items/*"), never a path.
//
// Usage:
//
//   std::vector<AdvisorFinding> findings = Advise(trace.Entries(), profile);
//   result.advice = AgentAdvice(findings);   // the rest go to the operator's log
//
// Pure functions: thread-safe.
#ifndef PLIMSOLL_BROKER_ADVISOR_H_
#define PLIMSOLL_BROKER_ADVISOR_H_

#include <span>
#include <vector>

#include "broker/grants.h"
#include "broker/trace.h"
#include "plimsoll/result.h"

namespace plimsoll::broker {

inline constexpr int64_t kMinFanOutCalls = 3;

struct AdvisorFinding {
  Advice advice;  // pattern, route, message, extra_calls, added_latency_ms, bytes
  // Whether the agent's code can act on it (then it goes on the result).
  bool agent_fixable = true;
  friend bool operator==(const AdvisorFinding&, const AdvisorFinding&) = default;
};

// Every finding in the trace: fan_out findings first, then repeated_read,
// each group sorted by route. Only calls the upstream answered (allowed,
// status != 0) count.
std::vector<AdvisorFinding> Advise(std::span<const TraceEntry> entries, const Profile& profile);

// The agent-fixable findings' advice, in order.
std::vector<Advice> AgentAdvice(const std::vector<AdvisorFinding>& findings);

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_ADVISOR_H_
