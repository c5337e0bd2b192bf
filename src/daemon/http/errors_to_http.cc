#include "daemon/http/errors_to_http.h"

#include <openssl/rand.h>

#include <array>
#include <cstdio>

#include "daemon/http/request_id.h"
#include "plimsoll/wire.h"

namespace plimsoll::daemon::http {

HttpStatus HttpStatusFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kInvalidArgument:
      return HttpStatus::bad_request;
    case ErrorCode::kUnauthenticated:
      return HttpStatus::unauthorized;
    case ErrorCode::kPermissionDenied:
      return HttpStatus::forbidden;
    case ErrorCode::kNotFound:
      return HttpStatus::not_found;
    case ErrorCode::kFailedPrecondition:
      return HttpStatus::conflict;
    case ErrorCode::kResourceExhausted:
      return HttpStatus::too_many_requests;
    case ErrorCode::kUnimplemented:
      return HttpStatus::not_implemented;
    case ErrorCode::kDeadlineExceeded:
      return HttpStatus::gateway_timeout;
    case ErrorCode::kInternal:
      return HttpStatus::internal_server_error;
    case ErrorCode::kDataLoss:
      return HttpStatus::bad_gateway;
  }
  return HttpStatus::internal_server_error;
}

std::string NewErrorId() {
  std::array<unsigned char, 16> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    // The CSPRNG failing is itself worth an ID; fall back to a fixed marker.
    return std::string(32, '0');
  }
  std::string hex;
  hex.reserve(32);
  for (unsigned char byte : bytes) {
    std::array<char, 3> pair{};
    std::snprintf(pair.data(), pair.size(), "%02x", byte);
    hex.append(pair.data(), 2);
  }
  return hex;
}

Answer ErrorAnswer(const Error& error, std::string_view request_id, Log& log) {
  return ErrorAnswer(HttpStatusFor(error.code()), error, request_id, log);
}

Answer ErrorAnswer(HttpStatus status, const Error& error, std::string_view request_id, Log& log) {
  Answer answer;
  answer.status = status;
  answer.not_dispatched = error.not_dispatched();
  if (error.code() != ErrorCode::kInternal) {
    answer.body = ErrorToJson(error, request_id);
    return answer;
  }
  std::string error_id = NewErrorId();
  log.Error("internal error " + error_id + ": " + error.ToString());
  Error masked(ErrorCode::kInternal,
               "The daemon hit an internal error; the operator's log has the details under "
               "error ID " +
                   error_id + ".",
               error.not_dispatched());
  answer.body = ErrorToJson(masked, request_id);
  answer.headers.emplace_back(std::string(kErrorIdHeader), error_id);
  return answer;
}

Answer SummarisedErrorAnswer(HttpStatus status, const Error& error, std::string_view summary,
                             std::string_view request_id, Log& log) {
  if (error.code() == ErrorCode::kInternal) return ErrorAnswer(status, error, request_id, log);
  std::string error_id = NewErrorId();
  std::string where =
      request_id.empty() ? std::string() : " (request ID " + std::string(request_id) + ")";
  log.Warning("error " + error_id + where + ": " + error.ToString());
  Answer answer;
  answer.status = status;
  answer.not_dispatched = error.not_dispatched();
  Error summarised(
      error.code(),
      std::string(summary) + " The operator's log has the details under error ID " + error_id + ".",
      error.not_dispatched());
  answer.body = ErrorToJson(summarised, request_id);
  answer.headers.emplace_back(std::string(kErrorIdHeader), error_id);
  return answer;
}

}  // namespace plimsoll::daemon::http
