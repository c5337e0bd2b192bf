// Framing an Answer as an HTTP/1.1 response, and the answers for problems
// found while reading a request (transport refusals).
#ifndef PLIMSOLL_DAEMON_HTTP_FRAMING_H_
#define PLIMSOLL_DAEMON_HTTP_FRAMING_H_

#include <boost/beast/http/message.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/system/error_code.hpp>
#include <optional>
#include <string_view>

#include "daemon/http/answer.h"
#include "daemon/http/connection.h"

namespace plimsoll::daemon::http {

using Response = boost::beast::http::response<boost::beast::http::string_body>;

// The response for `answer`: status, body, content type, Cache-Control
// no-store, the Plimsoll-Not-Dispatched header for refusals, the request-ID
// echo when `request_id` is non-empty, and Connection per `keep_alive`.
Response FrameAnswer(Answer answer, std::string_view request_id, unsigned http_version,
                     bool keep_alive);

// The refusal for a read that failed with `error` (`timed_out` when the
// watchdog expired), or nullopt when there is nobody to answer (the peer
// closed or reset the connection).
std::optional<Answer> TransportRefusal(const boost::system::error_code& error, bool timed_out,
                                       std::string_view phase, const HttpLimits& limits,
                                       std::string_view request_id, Log& log);

}  // namespace plimsoll::daemon::http

#endif  // PLIMSOLL_DAEMON_HTTP_FRAMING_H_
