// One HTTP/1.1 call from the host to a grant profile's upstream API (SPEC §8).
//
// CallUpstream is the only way the broker talks to an operator's API. It
// makes exactly one request on a fresh connection and reads one answer:
//   - it resolves and connects by itself: no HTTP_PROXY, HTTPS_PROXY, NO_PROXY
//     or any other proxy setting is ever read;
//   - https: TLS 1.2 or later, the certificate verified against the system's
//     trust store and the origin's host name (or IP address), SNI set
//     (src/net/tls_client.h, shared with the C++ client); http only when every
//     address the host resolves to is loopback (grants allow http only for
//     loopback origins; checked again);
//   - Host from the origin, `Connection: close`, the caller's extra headers
//     (the broker's Authorization), Content-Type and the body; no cookies are
//     sent or kept;
//   - a request body over kMaxRequestBody is refused before connecting;
//   - no redirect is followed: a 3xx is the answer, and its Location is not
//     passed on (only status, Content-Type and Retry-After are);
//   - at most kMaxResponseBody bytes of body are kept; a longer body is cut
//     there and the answer says `truncated`;
//   - connecting, the TLS handshake, writing and reading are all bounded by
//     `deadline`. Name resolution is not (it is instant for IP literals and
//     /etc/hosts names; a DNS lookup is bounded by the system resolver).
//
// Errors are values: Error::message() is a whole sentence that never holds a
// header value (so never the credential), and UpstreamErrorKindOf() gives
// the machine kind, which CallRefusalFor() turns into the trace's reason.
//
// Usage:
//
//   UpstreamRequest request{.origin = profile.base_url, .method = HttpMethod::kGet,
//                           .path = canonical_path.encoded(),
//                           .headers = {{"Authorization", "Bearer " + token}}};
//   auto answer = CallUpstream(request, std::chrono::steady_clock::now() + 5s);
//   if (!answer.ok()) {
//     CallRefusal reason = CallRefusalFor(UpstreamErrorKindOf(answer.error()));
//     ...
//   }
//   breaker.RecordAnswer(answer->status, answer->retry_after);
//
// Thread-safe: every call has its own connection and I/O context.
#ifndef PLIMSOLL_BROKER_UPSTREAM_H_
#define PLIMSOLL_BROKER_UPSTREAM_H_

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/origin.h"
#include "broker/route.h"
#include "broker/trace.h"
#include "plimsoll/error.h"

namespace plimsoll::broker {

inline constexpr std::size_t kMaxRequestBody = std::size_t{1} << 20;   // 1 MiB up
inline constexpr std::size_t kMaxResponseBody = std::size_t{4} << 20;  // 4 MiB down
// An answer's status line and headers larger than this are a protocol error.
inline constexpr std::size_t kMaxUpstreamHeaderBytes = std::size_t{64} << 10;

struct UpstreamRequest {
  Origin origin{};
  HttpMethod method = HttpMethod::kGet;
  // The request target: CanonicalPath::encoded(), starting with "/".
  std::string path{};
  // Added as they are, after Host and before Content-Type. Names are HTTP
  // tokens; values are visible ASCII, spaces and tabs. Host, Connection,
  // Content-Length, Content-Type, Transfer-Encoding and Cookie are set here
  // or never, so passing one is an error.
  std::vector<std::pair<std::string, std::string>> headers{};
  std::string body{};          // at most kMaxRequestBody bytes
  std::string content_type{};  // sent when not empty (same rules as a header value)
  // PEM file of the certificates to trust for https, "" (always, in the
  // broker) for the system's trust store. Tests name their own CA here.
  std::string ca_file{};
};

struct UpstreamAnswer {
  int status = 0;
  std::string content_type{};                // "" when the upstream sent none
  std::optional<std::string> retry_after{};  // for the circuit breaker
  std::string body{};                        // at most kMaxResponseBody bytes
  bool truncated = false;                    // the upstream sent more than kept
};

enum class UpstreamErrorKind {
  kTimeout,       // the deadline passed before the answer was complete
  kConnection,    // no connection (resolution, connect, TLS), or it broke
  kProtocol,      // the answer is not HTTP/1.1 we can read, or a bad header
  kBodyTooLarge,  // the request body is over kMaxRequestBody; nothing sent
};

// "timeout", "connection", "protocol", "body_too_large".
std::string_view UpstreamErrorKindName(UpstreamErrorKind kind);

// The kind of an error CallUpstream returned. The contract, by ErrorCode:
// kDeadlineExceeded = timeout, kInvalidArgument = body_too_large,
// kDataLoss = protocol, anything else = connection.
UpstreamErrorKind UpstreamErrorKindOf(const Error& error);

// The trace reason of a failed upstream call: kUpstreamTimeout,
// kBodyTooLarge or kUpstreamError.
CallRefusal CallRefusalFor(UpstreamErrorKind kind);

// One request, one answer (see the top of this file). `deadline` bounds the
// whole call; a deadline already past gives a timeout without connecting.
Expected<UpstreamAnswer> CallUpstream(const UpstreamRequest& request,
                                      std::chrono::steady_clock::time_point deadline);

}  // namespace plimsoll::broker

#endif  // PLIMSOLL_BROKER_UPSTREAM_H_
