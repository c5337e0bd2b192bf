// A listening socket (TCP or Unix) and its accept loop. Each accepted
// connection gets its own strand and a ServeConnection coroutine.
//
// A TCP listener given a TLS context (UseTls) serves TLS on every connection
// (tls.h, connection.h); without one, and always for a Unix socket (local by
// nature), it serves plaintext.
//
// A listener whose environment has a ConnectionLimiter takes a place for each
// accepted connection before reading from it; one over a cap is refused
// (connection_limiter.h). A Unix socket file is created with UseMode()'s
// mode (0600 unless told), set before the socket listens.
//
// Thread-safety: Bind(), UseTls() and UseMode() before the io_context runs; Start() and
// Close() from any thread (they post to the acceptor's strand).
//
// Usage:
//   TcpListener listener(io_context, environment);
//   PLIMSOLL_RETURN_IF_ERROR(listener.Bind(endpoint));
//   listener.UseTls(tls->context);   // optional
//   std::cout << listener.local_port();
//   listener.Start();
//   ...
//   listener.Close();   // stop accepting; open connections are the registry's
#ifndef PLIMSOLL_DAEMON_HTTP_LISTENER_H_
#define PLIMSOLL_DAEMON_HTTP_LISTENER_H_

#include <sys/types.h>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/strand.hpp>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>

#include "daemon/http/connection.h"
#include "plimsoll/error.h"

namespace plimsoll::daemon::http {

template <class Protocol>
class Listener {
 public:
  // `environment` must outlive the listener and every connection it accepts.
  Listener(boost::asio::io_context& io_context, const ConnectionEnvironment& environment);

  // Opens, binds and listens. For Unix sockets an existing socket file at the
  // path is replaced only when nothing accepts on it (a stale leftover).
  Status Bind(const typename Protocol::endpoint& endpoint);

  typename Protocol::endpoint local_endpoint() const;

  // Serve TLS with `context` (shared by every connection; not null) on every
  // connection accepted from now on. TCP only.
  void UseTls(std::shared_ptr<boost::asio::ssl::context> context) requires
      std::is_same_v<Protocol, boost::asio::ip::tcp> {
    tls_ = std::move(context);
  }
  bool tls() const { return tls_ != nullptr; }

  // The mode of the Unix socket file Bind() creates (default 0600: only the
  // daemon's user may connect). Unix only; before Bind().
  void UseMode(mode_t mode) requires std::is_same_v<Protocol, boost::asio::local::stream_protocol> {
    unix_mode_ = mode;
  }

  void Start();
  void Close();

 private:
  boost::asio::awaitable<void> AcceptLoop();
  // A connection over a cap (environment.limiter): counted, then answered
  // 503 and closed (TLS: closed), without reading from it.
  void Refuse(typename Protocol::socket socket, ConnectionLimiter::Rejection rejection);

  boost::asio::io_context& io_context_;
  boost::asio::strand<boost::asio::io_context::executor_type> strand_;
  typename Protocol::acceptor acceptor_;
  const ConnectionEnvironment& environment_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
  mode_t unix_mode_ = 0600;
};

using TcpListener = Listener<boost::asio::ip::tcp>;
using UnixListener = Listener<boost::asio::local::stream_protocol>;

extern template class Listener<boost::asio::ip::tcp>;
extern template class Listener<boost::asio::local::stream_protocol>;

// "127.0.0.1:8470", "[::1]:0" -> an endpoint. Host names are refused: the
// daemon binds numeric addresses only, so what it listens on is unambiguous.
Expected<boost::asio::ip::tcp::endpoint> ParseListenAddress(std::string_view text);

// "127.0.0.1:8470" / "[::1]:8470".
std::string FormatEndpoint(const boost::asio::ip::tcp::endpoint& endpoint);

}  // namespace plimsoll::daemon::http

#endif  // PLIMSOLL_DAEMON_HTTP_LISTENER_H_
