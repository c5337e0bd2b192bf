// One run's exchange with the agent, host side: what the `linux` and `oci`
// providers do once their sandbox is up and its agent waits for the job.
//
// Usage:
//   Result result;  // isolation, environment and kind set by the provider
//   Status exchanged = guest::ExchangeJob(channel, job, request, deadline + grace, &result);
//   if (exchanged.ok()) { hand the sandbox to teardown; return result; }
//   destroy the sandbox now;
//   return guest::AnswerFailedExchange(request, exchanged.error(), message, std::move(result));
#ifndef PLIMSOLL_GUEST_EXCHANGE_H_
#define PLIMSOLL_GUEST_EXCHANGE_H_

#include <chrono>
#include <string>

#include "guest/protocol.h"
#include "plimsoll/error.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"

namespace plimsoll::guest {

// Writes the job frame and reads the sealed report (both bounded by
// `report_deadline`), then fills `*result` from it (FillResult) and, when
// given, `*report_out` with the report itself (a session reads the
// interpreters it lists). Returns the error that stopped the exchange
// otherwise (`*result` untouched).
//
// A granted run (`calls`, with job.host_calls set) has its agent's host calls
// answered through `calls` while the job runs (host_calls.h).
Status ExchangeJob(int channel, const Job& job, const Request& request,
                   std::chrono::steady_clock::time_point report_deadline, Result* result,
                   Report* report_out = nullptr, GrantedCalls* calls = nullptr);

// What a run answers once its exchange failed with `failure` and its sandbox
// is gone: the deadline passing is a timed-out result (exit 124; a project's
// outcome timed_out); otherwise a project gets a protocol_error result with
// `message` on stderr and exit code 1, a snippet an unmarked kInternal error
// carrying `message` (code may have run). `result` carries what the provider
// already set (isolation, environment, kind, duration).
Expected<Result> AnswerFailedExchange(const Request& request, const Error& failure,
                                      const std::string& message, Result result);

}  // namespace plimsoll::guest

#endif  // PLIMSOLL_GUEST_EXCHANGE_H_
