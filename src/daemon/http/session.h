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
// While the server drains, a connection answers the request it is on with
// `Connection: close` and an idle one is closed.
//
// Usage (listener.cc):
//   co_spawn(socket.get_executor(), ServeConnection(std::move(socket), environment), detached);
#ifndef PLIMSOLL_DAEMON_HTTP_SESSION_H_
#define PLIMSOLL_DAEMON_HTTP_SESSION_H_

#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <chrono>
#include <cstdint>
#include <functional>

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

// What every connection of one listener shares. Must outlive the connections.
struct SessionEnvironment {
  const Router& router;
  Log& log;
  HttpLimits limits;
  ConnectionRegistry& registry;
  // Called (on the connection's strand) with every answer before it is
  // written, refusals before the handler included; may be empty.
  std::function<void(const Answer&)> on_answer;
};

using TcpSocket = boost::asio::ip::tcp::socket;
using UnixSocket = boost::asio::local::stream_protocol::socket;

// Serves one connection until it closes. The socket's executor must be a
// strand (or otherwise serialise the connection's handlers). Never throws.
template <class Socket>
boost::asio::awaitable<void> ServeConnection(Socket socket, const SessionEnvironment& environment);

extern template boost::asio::awaitable<void> ServeConnection<TcpSocket>(TcpSocket,
                                                                        const SessionEnvironment&);
extern template boost::asio::awaitable<void> ServeConnection<UnixSocket>(UnixSocket,
                                                                         const SessionEnvironment&);

}  // namespace plimsoll::daemon::http

#endif  // PLIMSOLL_DAEMON_HTTP_SESSION_H_
