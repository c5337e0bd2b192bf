// An HTTP answer before it is framed: status, body, and the headers plimsoll
// adds. The connection (connection.h) turns it into a Beast response and adds
// the request-ID echo, so no handler can forget it.
//
// Usage:
//   return JsonAnswer(status::ok, ResultToJson(result));
//   return ErrorAnswer(error, request_id);          // errors_to_http.h
#ifndef PLIMSOLL_DAEMON_HTTP_ANSWER_H_
#define PLIMSOLL_DAEMON_HTTP_ANSWER_H_

#include <boost/beast/http/status.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::daemon::http {

using HttpStatus = boost::beast::http::status;

inline constexpr std::string_view kJsonContentType = "application/json";
inline constexpr std::string_view kPrometheusContentType =
    "text/plain; version=0.0.4; charset=utf-8";

struct Answer {
  HttpStatus status = HttpStatus::ok;
  std::string content_type = std::string(kJsonContentType);
  std::string body;
  // Set on refusals: becomes the Plimsoll-Not-Dispatched header.
  std::optional<NotDispatched> not_dispatched;
  // Extra headers (Allow, WWW-Authenticate, Plimsoll-Error-Id, ...).
  std::vector<std::pair<std::string, std::string>> headers;
  // The connection cannot be reused after this answer (e.g. an unread body).
  bool close_connection = false;
  // Members the handler adds to this call's audit line (server/audit.h), e.g.
  // {"run": {...}}; null when none. Never sent to the client.
  nlohmann::ordered_json audit_details;
};

inline Answer JsonAnswer(HttpStatus status, std::string body) {
  Answer answer;
  answer.status = status;
  answer.body = std::move(body);
  return answer;
}

}  // namespace plimsoll::daemon::http

#endif  // PLIMSOLL_DAEMON_HTTP_ANSWER_H_
