// Turning plimsoll::Error into HTTP answers (SPEC §3, §4).
//
// Status per code (api/openapi.yaml and docs/daemon.md list the same table):
//   invalid_argument 400, unauthenticated 401, permission_denied 403,
//   not_found 404, failed_precondition 409, resource_exhausted 429,
//   unimplemented 501, deadline_exceeded 504, internal 500, data_loss 502.
// failed_precondition is 409, not 412: 412 belongs to HTTP's conditional
// requests (If-Match ...), which plimsoll does not use, and generic clients
// and caches treat it as such.
//
// Transport refusals made before a handler runs (bad framing, oversize
// header or body, unknown route, wrong method, wrong content type, slow
// client) keep their error code but may carry a more precise HTTP status
// (405, 408, 413, 415, 431); the body and the Plimsoll-Not-Dispatched header
// carry the mark exactly as for any other refusal.
//
// Internal errors are masked: the caller sees a generic message with a random
// error ID (also in the Plimsoll-Error-Id header); the real message goes to
// the operator log under that ID. The "nothing ran" mark is kept.
#ifndef PLIMSOLL_DAEMON_HTTP_ERRORS_TO_HTTP_H_
#define PLIMSOLL_DAEMON_HTTP_ERRORS_TO_HTTP_H_

#include <string>
#include <string_view>

#include "daemon/http/answer.h"
#include "daemon/log.h"
#include "plimsoll/error.h"

namespace plimsoll::daemon::http {

// The HTTP status an error code is answered with.
HttpStatus HttpStatusFor(ErrorCode code);

// The error answer for `error`: body {"error": {...}} with `request_id` when
// non-empty, the mark in body and header. Internal errors are masked and
// logged to `log`. Thread-safe.
Answer ErrorAnswer(const Error& error, std::string_view request_id, Log& log);

// The same with an explicit HTTP status (transport refusals, /readyz).
Answer ErrorAnswer(HttpStatus status, const Error& error, std::string_view request_id, Log& log);

// An answer that keeps `error`'s code and mark but replaces its message with
// `summary` (a clean sentence for the caller) plus the error ID; the full
// error goes to `log` under that ID (Plimsoll-Error-Id header, as for
// internal errors). For errors whose text comes from places a caller must not
// see: host paths, errno texts of internal steps, runtime or console output
// (server/provider_errors.h decides which). Internal errors are masked as by
// ErrorAnswer whatever `summary` says. Thread-safe.
Answer SummarisedErrorAnswer(HttpStatus status, const Error& error, std::string_view summary,
                             std::string_view request_id, Log& log);

// 32 lowercase hex digits from the CSPRNG; identifies one internal error.
std::string NewErrorId();

}  // namespace plimsoll::daemon::http

#endif  // PLIMSOLL_DAEMON_HTTP_ERRORS_TO_HTTP_H_
