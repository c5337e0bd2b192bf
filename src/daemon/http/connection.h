// One HTTP/1.1 connection: read a request within its time and size limits,
// admit it through the Router, run its handler, write the answer, repeat
// while keep-alive holds.
//
// Every answer, refusals before the handler included, carries the request-ID
// echo (request_id.h) and, for refusals, the Plimsoll-Not-Dispatched header.
// Phases and their limits (HttpLimits):
//   idle    - waiting for the first byte of a request: on expiry the
//             connection closes silently (no request was started);
//   header  - from the first byte to the end of the header: 408 on expiry;
//             431 when larger than max_header_bytes;
//   body    - reading the body: 408 on expiry; 413 above max_body_bytes
//             (refused from Content-Length alone when it says so);
//   write   - writing the answer: the connection closes on expiry.
// Malformed HTTP gets 400. After any transport refusal the connection closes.
// With loopback_host_only (--dev), a TCP request whose Host is not loopback
// gets 421 before routing, and the connection closes.
// While the server drains, a connection answers the request it is on with
// `Connection: close` and an idle one is closed.
//
// One code path serves every transport: plain TCP, a Unix socket, and TLS
// over TCP (tls.h). For TLS the handshake comes first and is bounded like a
// request: waiting for its first byte is the idle phase, the rest of the
// handshake belongs to the header phase. A client that sends nothing, or
// that does not speak TLS (plaintext HTTP to a TLS port), is closed without
// an answer; there is no channel to answer it on. When the connection ends
// after an answer, a TLS close_notify is sent (the peer's is not awaited)
// before the TCP half-close.
//
// Usage (listener.cc):
//   co_spawn(socket.get_executor(), ServeConnection(std::move(socket), environment), detached);
//   co_spawn(executor, ServeConnection(TlsStream(std::move(socket), context), environment),
//            detached);
#ifndef PLIMSOLL_DAEMON_HTTP_CONNECTION_H_
#define PLIMSOLL_DAEMON_HTTP_CONNECTION_H_

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <chrono>
#include <cstdint>
#include <functional>

#include "daemon/http/connection_limiter.h"
#include "daemon/http/connection_registry.h"
#include "daemon/http/router.h"
#include "daemon/log.h"

namespace plimsoll::daemon::http {

inline constexpr int64_t kMaxBodyBytes = int64_t{8} << 20;  // SPEC §4

struct HttpLimits {
  std::chrono::milliseconds idle_timeout{60'000};
  std::chrono::milliseconds header_timeout{10'000};
  std::chrono::milliseconds body_timeout{30'000};
  std::chrono::milliseconds write_timeout{30'000};
  uint32_t max_header_bytes = 16 * 1024;
  int64_t max_body_bytes = kMaxBodyBytes;
};

// What the connection knows of the request an answer belongs to, for
// observers (the audit log). The views are valid during the call only.
struct AnswerContext {
  Verb method = Verb::unknown;                    // unknown when the header was not read
  std::string_view route;                         // the matched route's pattern; "" when none
  std::string_view request_id;                    // the echoed ID; "" when none
  const Caller* caller = nullptr;                 // the authenticated caller, if any
  std::chrono::steady_clock::time_point started;  // the request's first byte
};

// What every connection of one listener shares. Must outlive the connections.
struct ConnectionEnvironment {
  const Router& router;
  Log& log;
  HttpLimits limits;
  ConnectionRegistry& registry;
  // Called (on the connection's strand) with every answer before it is
  // written, refusals before the handler included; may be empty. It must not
  // block for long: it runs on an event-loop thread.
  std::function<void(const Answer&, const AnswerContext&)> on_answer;
  // The caps on open connections (connection_limiter.h); null = none. The
  // listener consults it before anything is read from a new connection.
  ConnectionLimiter* limiter = nullptr;
  // Called (on the acceptor's strand) for each connection a cap refused; may
  // be empty. Must not block.
  std::function<void(ConnectionLimiter::Rejection)> on_reject;
  // --dev: TCP requests whose Host header is not a loopback name or address
  // (loopback_host.h) are refused 421 `invalid_argument`, marked `request`,
  // before routing (the DNS-rebinding defence). Unix sockets are exempt: no
  // browser can reach them.
  bool loopback_host_only = false;
};

using TcpSocket = boost::asio::ip::tcp::socket;
using UnixSocket = boost::asio::local::stream_protocol::socket;
using TlsStream = boost::asio::ssl::stream<TcpSocket>;  // server side, not yet handshaken

// Serves one connection until it closes. The stream's executor must be a
// strand (or otherwise serialise the connection's handlers). Never throws.
template <class Stream>
boost::asio::awaitable<void> ServeConnection(Stream stream,
                                             const ConnectionEnvironment& environment);

extern template boost::asio::awaitable<void> ServeConnection<TcpSocket>(
    TcpSocket, const ConnectionEnvironment&);
extern template boost::asio::awaitable<void> ServeConnection<UnixSocket>(
    UnixSocket, const ConnectionEnvironment&);
extern template boost::asio::awaitable<void> ServeConnection<TlsStream>(
    TlsStream, const ConnectionEnvironment&);

}  // namespace plimsoll::daemon::http

#endif  // PLIMSOLL_DAEMON_HTTP_CONNECTION_H_
