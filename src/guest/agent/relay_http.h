// The HTTP/1.1 the agent's host-call relay speaks on kHostCallSocket
// (host_calls.h): just enough for any HTTP client (curl --unix-socket,
// Python's http.client, Node's fetch with a Unix-socket dispatcher) to send
// one request per connection and read one answer.
//
// A request is a request line `METHOD SP TARGET SP HTTP/1.1` (or 1.0), then
// header lines, then an empty line, all at most kMaxRelayHeaderBytes, then
// exactly Content-Length body bytes (none without it). Header names are
// matched without case; Content-Length and Content-Type at most once. The
// relay does not check the method or the target: the broker does, and
// counts what it refuses. What the relay refuses is HTTP it cannot read at
// all (a broken request line, a header line without a colon, a body sent
// chunked, a length that is not a number); it answers 400 or 411 and, so
// that the attempt is still counted, relays a call the broker refuses
// (FallbackCall: no method, no path).
//
// The answer is `HTTP/1.1 STATUS REASON`, Content-Type (when the upstream
// sent one), Content-Length, `Connection: close`, `Plimsoll-Refused: CODE`
// when the broker refused the call (`relay` when the relay did) and
// `Plimsoll-Truncated: true` when the upstream's body was cut; then the body.
//
// Thread-safety: pure functions.
#ifndef PLIMSOLL_GUEST_AGENT_RELAY_HTTP_H_
#define PLIMSOLL_GUEST_AGENT_RELAY_HTTP_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "guest/host_calls.h"
#include "plimsoll/granted_calls.h"

namespace plimsoll::guest::agent {

inline constexpr size_t kMaxRelayHeaderBytes = 16 * 1024;

// The head of a request, once read.
struct RelayRequestHead {
  std::string method;
  std::string target;
  std::string content_type;  // "" when absent
  int64_t content_length = 0;
};

// Parses the bytes before the empty line (without it). nullopt and `error`
// (a whole sentence) when they are not a request the relay reads; `status`
// is then 400, or 411 for a chunked body.
std::optional<RelayRequestHead> ParseRelayRequestHead(std::string_view head, int* status,
                                                      std::string* error);

// The call the broker sees for HTTP the relay could not read: counted and
// refused there (an empty path is never allowed).
HostCall FallbackCall(int64_t id);

// The whole HTTP response for `answer`.
std::string FormatRelayResponse(const HostCallAnswer& answer);

// A response the relay makes itself (400, 411, 502 when the host is gone),
// marked `Plimsoll-Refused: relay` so a client tells it from an upstream's
// answer: {"error": "relay", "message": MESSAGE}.
std::string FormatRelayError(int status, std::string_view message);

}  // namespace plimsoll::guest::agent

#endif  // PLIMSOLL_GUEST_AGENT_RELAY_HTTP_H_
