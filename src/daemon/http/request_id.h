// The request-ID echo rule (SPEC §3).
//
// A client sends `Plimsoll-Request-Id: <32 lowercase hex digits>`, fresh per
// HTTP request, and believes nothing in an answer that does not carry its own
// ID back. The daemon echoes the ID on every answer, refusals included, when
// the request carried exactly one well-formed ID. An absent, malformed or
// repeated header is neither echoed nor refused: the answer simply carries no
// ID, and the client's own check turns it into a data-loss error.
//
// Usage:
//   std::string echo = EchoableRequestId(request.base());   // "" = no echo
#ifndef PLIMSOLL_DAEMON_HTTP_REQUEST_ID_H_
#define PLIMSOLL_DAEMON_HTTP_REQUEST_ID_H_

#include <boost/beast/http/fields.hpp>
#include <string>
#include <string_view>

namespace plimsoll::daemon::http {

inline constexpr std::string_view kRequestIdHeader = "Plimsoll-Request-Id";
inline constexpr std::string_view kNotDispatchedHeader = "Plimsoll-Not-Dispatched";
inline constexpr std::string_view kErrorIdHeader = "Plimsoll-Error-Id";

// Whether `id` is exactly 32 lowercase hexadecimal digits.
bool IsWellFormedRequestId(std::string_view id);

// The ID to echo: the value of the only Plimsoll-Request-Id header when it is
// well-formed, else "".
std::string EchoableRequestId(const boost::beast::http::fields& headers);

}  // namespace plimsoll::daemon::http

#endif  // PLIMSOLL_DAEMON_HTTP_REQUEST_ID_H_
