#include "daemon/server/provider_errors.h"

#include "daemon/http/errors_to_http.h"

namespace plimsoll::daemon {

http::Answer AnswerForRunError(const Error& error, const RunErrorFacts& facts,
                               std::string_view request_id, Log& log) {
  std::optional<NotDispatched> mark = error.not_dispatched();
  http::HttpStatus status = http::HttpStatusFor(error.code());
  if (error.code() == ErrorCode::kInternal) return http::ErrorAnswer(error, request_id, log);
  if (mark && *mark != NotDispatched::kEnvironment && *mark != NotDispatched::kCapacity) {
    return http::ErrorAnswer(error, request_id, log);
  }
  std::string summary;
  if (mark == NotDispatched::kEnvironment) {
    if (!facts.required_environment.empty() &&
        facts.required_environment != facts.daemon_environment) {
      summary = "The request requires environment " + std::string(facts.required_environment) +
                "; this daemon has " +
                (facts.daemon_environment.empty() ? std::string("none")
                                                  : std::string(facts.daemon_environment)) +
                ", so nothing ran.";
    } else {
      summary =
          "The sandbox could not be prepared on this daemon's host, so nothing ran (a fault of "
          "the host's environment, which another daemon may not have).";
    }
  } else if (mark == NotDispatched::kCapacity) {
    summary =
        "The sandbox did not start in time because the host is busy, so nothing ran; try "
        "again shortly.";
  } else {
    summary = "The run failed after it was dispatched (" +
              std::string(ErrorCodeName(error.code())) +
              "); its code may have run, so do not retry it automatically.";
  }
  return http::SummarisedErrorAnswer(status, error, summary, request_id, log);
}

}  // namespace plimsoll::daemon
