// The calls a granted run's guest may make outside its sandbox (SPEC §8),
// as a provider sees them.
//
// A run that names a grant profile is handed one GrantedCalls for its whole
// duration (Sandbox::Run's `grant`; the daemon and the CLI open it from the
// broker, src/broker/broker.h). The provider forwards each call its guest
// makes (JavaScript's host.get/host.post, the Unix socket in containers, the
// VM's serial relay) to Call() and hands the answer back to the guest as it
// is. Everything else (the allow list, the credential, the budget, the
// trace) is the implementation's business: a provider never sees a
// credential and never decides what is allowed.
//
// After the run the Sandbox puts Summary() and Advice() on the result, before
// the result digest is made, so the record covers the trace.
//
// Usage (a provider):
//
//   HostCallAnswer answer = calls.Call("GET", "/items/42", "", "", deadline);
//   if (!answer.refused.empty()) { /* tell the guest answer.message */ }
//
// Thread-safety: Call may be called from several threads at once (a guest
// with several connections); implementations lock what they share.
#ifndef PLIMSOLL_GRANTED_CALLS_H_
#define PLIMSOLL_GRANTED_CALLS_H_

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/result.h"

namespace plimsoll {

// What the guest gets back for one call.
struct HostCallAnswer {
  // The upstream's status, or for a refused call: 403 (not_allowed,
  // bad_path), 429 (max_calls, route_max_calls, circuit_open), 413
  // (body_too_large), 504 (upstream_timeout), 502 (upstream_error).
  int status = 0;
  std::string content_type{};  // the upstream's; "application/json" when refused
  // The upstream's body (at most 4 MiB), or when refused a small JSON object
  // {"error": <refused>, "message": <message>}.
  std::string body{};
  bool truncated = false;  // the upstream sent more than the cap
  std::string refused{};   // "" or the trace's reason (BrokerRoute::reason)
  std::string message{};   // "" or a whole sentence saying why it was refused
};

class GrantedCalls {
 public:
  virtual ~GrantedCalls() = default;

  // One guest call: `method` and `path` as the guest sent them (checked by
  // the implementation, never trusted), `body` and its `content_type` (""
  // for none). Bounded by `deadline` and by the run's own budget. Never
  // fails: a refusal is an answer with `refused` set.
  virtual HostCallAnswer Call(std::string_view method, std::string_view path, std::string_view body,
                              std::string_view content_type,
                              std::chrono::steady_clock::time_point deadline) = 0;

  // The call trace summary the result carries (profile, counts, rows).
  virtual BrokerSummary Summary() const = 0;

  // The efficiency advisor's findings the agent can act on.
  virtual std::vector<::plimsoll::Advice> Advice() const = 0;
};

}  // namespace plimsoll

#endif  // PLIMSOLL_GRANTED_CALLS_H_
