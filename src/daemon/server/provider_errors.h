// What a caller is told when a run fails inside the Sandbox (SPEC §4:
// details go to the log, not to callers).
//
// The rule, by the error's mark:
//   request, protocol, permission, unsupported, isolation: the message as it
//     is. These are written by the request checks and the Sandbox about the
//     request and the daemon's policy, and the caller needs them to fix the
//     request or pick another daemon.
//   environment, capacity, and errors without a mark (the run failed after
//     dispatch): a clean sentence for the caller plus an error ID; the full
//     message goes to the operator log under that ID. Their text comes from
//     providers, runtimes, QEMU and guest consoles and holds host paths,
//     errno texts of internal steps and console output. One exception keeps
//     its facts: a request whose required environment is not this daemon's
//     is told both identities (the daemon knows them itself).
//   internal: masked as every internal error is (errors_to_http.h).
// Code and mark are always kept, so clients still know whether anything ran.
//
// Usage:
//   co_return AnswerForRunError(result.error(), {request.environment, daemon_environment},
//                               context.request_id, services.log);
#ifndef PLIMSOLL_DAEMON_SERVER_PROVIDER_ERRORS_H_
#define PLIMSOLL_DAEMON_SERVER_PROVIDER_ERRORS_H_

#include <string>
#include <string_view>

#include "daemon/http/answer.h"
#include "daemon/log.h"
#include "plimsoll/error.h"

namespace plimsoll::daemon {

struct RunErrorFacts {
  std::string_view required_environment;  // the request's "environment", "" if none
  std::string_view daemon_environment;    // Sandbox::Describe().environment
};

http::Answer AnswerForRunError(const Error& error, const RunErrorFacts& facts,
                               std::string_view request_id, Log& log);

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_PROVIDER_ERRORS_H_
