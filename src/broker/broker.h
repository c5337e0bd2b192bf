// The broker (SPEC §8): the one object of a daemon that makes agent code's
// calls to the operators' APIs, and the per-run grant each call goes through.
//
// A Broker is made once at startup from the grants file. It reads every
// profile's credential material from the environment then (a static token,
// or a JWT secret of at least 32 bytes), so a missing variable stops the
// daemon before it serves anything, and keeps one circuit breaker per
// profile, shared by all runs.
//
// A run that names a grant profile Open()s a RunGrant: the caller's right to
// the profile is checked (an unknown and a forbidden profile get the same
// `permission` refusal, byte for byte), the credential is minted (jwt) or
// taken (static) once, and from then on every guest call goes through
// RunGrant::Call, which checks, counts, traces and forwards it with the
// credential attached host-side. The credential is never returned by any
// public method, never in a GuestAnswer (an upstream that echoes it has it
// replaced by a marker first: credential_scrub.h), never in the trace.
//
// Usage:
//
//   auto broker = Broker::Create(std::move(grants), [](std::string_view name) {
//     return GetEnvironmentVariable(name);  // std::optional<std::string>
//   });
//   if (!broker.ok()) return broker.error();  // every problem, one per line
//   describe.grant_profiles = broker->ProfilesFor(caller.name);
//
//   auto grant = broker->Open(request.grant_profile, caller.name, run_budget,
//                             /*in_session=*/false);
//   if (!grant.ok()) return grant.error();  // Refusal(kPermission, ...)
//   // For each guest call (host.get, the Unix socket, the serial relay):
//   GuestAnswer answer = (*grant)->Call("GET", "/items/42", "", "", run_deadline);
//   // After the run:
//   result.broker_trace = (*grant)->Summary();
//   result.advice = (*grant)->Advice();
//   for (const auto& finding : (*grant)->OperatorFindings()) log.Info(finding.advice.message);
//
// Thread-safety: a Broker is immutable after Create apart from its circuit
// breakers, which lock themselves; every const method and Open may be called
// from any thread. A RunGrant may be called from several threads at once (a
// guest with several connections): everything Call touches is either
// immutable after Open or locks itself (the call budget, the trace, the
// circuit breaker), and calls are not serialised, so one slow upstream call
// does not hold up another. A RunGrant keeps the broker's shared state
// alive, so it may outlive the Broker object.
#ifndef PLIMSOLL_BROKER_BROKER_H_
#define PLIMSOLL_BROKER_BROKER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "broker/advisor.h"
#include "broker/call_budget.h"
#include "broker/circuit_breaker.h"
#include "broker/grants.h"
#include "broker/route.h"
#include "broker/trace.h"
#include "plimsoll/error.h"
#include "plimsoll/granted_calls.h"
#include "plimsoll/result.h"

namespace plimsoll::broker {

// Reads one environment variable; nullopt when it is not set.
using EnvironmentReader = std::function<std::optional<std::string>(std::string_view)>;

// What the guest gets back for one call (plimsoll/granted_calls.h).
using GuestAnswer = ::plimsoll::HostCallAnswer;

class RunGrant;

class Broker {
 public:
  // Reads every profile's token source through `environment` and checks it:
  // a static token must be set, non-empty and visible ASCII (it goes into a
  // header); a JWT secret must be set and at least kMinJwtSecretBytes long.
  // Errors: Failure(kFailedPrecondition, "The broker cannot start: N
  // problem(s):\n<one line per problem>"), naming the variables but never
  // their values. `clock` drives the circuit breakers (tests inject one).
  static Expected<Broker> Create(Grants grants, const EnvironmentReader& environment,
                                 const BreakerClock& clock = BreakerClock::System());

  Broker(Broker&&) noexcept = default;
  Broker& operator=(Broker&&) noexcept = default;
  Broker(const Broker&) = delete;
  Broker& operator=(const Broker&) = delete;
  ~Broker();

  // The profile names `caller` may use, sorted: what `describe` shows.
  std::vector<std::string> ProfilesFor(std::string_view caller) const;

  // The grant of one run. Refusals (nothing ran):
  //   - Refusal(kPermission, kPermissionDeniedMessage) when the profile does
  //     not exist or the caller may not use it (the same, byte for byte);
  //   - Refusal(kPermission, ...) when `in_session` and the profile lacks
  //     allow_in_sessions;
  //   - Refusal(kRequest, ...) when run_budget is not positive.
  // A jwt profile's token is minted here: sub = caller, aud, scope = the
  // profile's scopes, a random jti, exp = iat + min(ttl, run_budget + 5 s).
  // Every call of the grant is bounded by now + run_budget.
  Expected<std::unique_ptr<RunGrant>> Open(std::string_view profile, std::string_view caller,
                                           std::chrono::milliseconds run_budget,
                                           bool in_session) const;

  // The refusal message for an unknown or forbidden profile.
  static constexpr std::string_view kPermissionDeniedMessage =
      "The grant profile does not exist or this caller may not use it.";

  // The state of a profile's circuit breaker (nullopt for an unknown
  // profile), for metrics and tests; never shown to callers.
  std::optional<CircuitBreaker::State> CircuitState(std::string_view profile) const;

 private:
  friend class RunGrant;
  struct State;
  explicit Broker(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

class RunGrant final : public GrantedCalls {
 public:
  RunGrant(const RunGrant&) = delete;
  RunGrant& operator=(const RunGrant&) = delete;
  ~RunGrant() override;  // wipes the credential

  // One guest call: `method` and `raw_path` as the guest sent them, `body`
  // and its `content_type` ("" for none). In order: the method is parsed,
  // the path canonicalised (route.h) and matched against the allow list, the
  // content type and body size checked, the call budget spent, the circuit
  // breaker asked (its health check sent when it is time for a probe), and
  // the call made upstream with the credential attached, bounded by the
  // earlier of `deadline` and the run's, and its answer scrubbed of the
  // credential (credential_scrub.h). Every call, allowed or refused, is
  // recorded in the trace with its route template (never the path), sizes,
  // latency and fingerprint. Never fails: a refusal is a GuestAnswer.
  //
  // A refused call's message never names the upstream (its origin may be an
  // internal address): the guest learns what happened, not where.
  GuestAnswer Call(std::string_view method, std::string_view raw_path, std::string_view body,
                   std::string_view content_type,
                   std::chrono::steady_clock::time_point deadline) override;

  // The trace summary the result carries: the profile's name and the trace's
  // counts and rows (trace.h).
  BrokerSummary Summary() const override;
  // The advisor's agent-fixable findings, for the result (advisor.h).
  std::vector<::plimsoll::Advice> Advice() const override;
  // The advisor's other findings, for the operator's log.
  std::vector<AdvisorFinding> OperatorFindings() const;

  const std::string& profile() const;

 private:
  friend class Broker;
  struct Parts;
  explicit RunGrant(std::unique_ptr<Parts> parts);
  std::unique_ptr<Parts> parts_;
};

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_BROKER_H_
