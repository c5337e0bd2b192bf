#include "daemon/http/listener.h"

#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <charconv>
#include <exception>

namespace plimsoll::daemon::http {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

Error BindError(std::string_view what, const boost::system::error_code& error) {
  return Failure(ErrorCode::kFailedPrecondition,
                 "Cannot listen: " + std::string(what) + ": " + error.message() + ".");
}

// A Unix socket file nobody accepts on is a leftover of a crashed daemon.
Status RemoveStaleUnixSocket(const std::string& path, asio::io_context& io_context) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0) return Status::Ok();
  if (!S_ISSOCK(info.st_mode)) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "Cannot listen on " + path + ": it exists and is not a socket.");
  }
  asio::local::stream_protocol::socket probe(io_context);
  boost::system::error_code error;
  probe.connect(asio::local::stream_protocol::endpoint(path), error);
  if (!error) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "Cannot listen on " + path + ": another process is serving on it.");
  }
  ::unlink(path.c_str());
  return Status::Ok();
}

template <class Protocol>
Status PrepareEndpoint(const typename Protocol::endpoint&, asio::io_context&) {
  return Status::Ok();
}

template <>
Status PrepareEndpoint<asio::local::stream_protocol>(
    const asio::local::stream_protocol::endpoint& endpoint, asio::io_context& io_context) {
  return RemoveStaleUnixSocket(endpoint.path(), io_context);
}

}  // namespace

template <class Protocol>
Listener<Protocol>::Listener(asio::io_context& io_context, const SessionEnvironment& environment)
    : io_context_(io_context),
      strand_(asio::make_strand(io_context)),
      acceptor_(strand_),
      environment_(environment) {}

template <class Protocol>
Status Listener<Protocol>::Bind(const typename Protocol::endpoint& endpoint) {
  PLIMSOLL_RETURN_IF_ERROR(PrepareEndpoint<Protocol>(endpoint, io_context_));
  boost::system::error_code error;
  acceptor_.open(endpoint.protocol(), error);
  if (error) return BindError("open", error);
  if constexpr (std::is_same_v<Protocol, tcp>) {
    acceptor_.set_option(asio::socket_base::reuse_address(true), error);
    if (error) return BindError("SO_REUSEADDR", error);
  }
  acceptor_.bind(endpoint, error);
  if (error) return BindError("bind", error);
  acceptor_.listen(asio::socket_base::max_listen_connections, error);
  if (error) return BindError("listen", error);
  return Status::Ok();
}

template <class Protocol>
typename Protocol::endpoint Listener<Protocol>::local_endpoint() const {
  boost::system::error_code error;
  return acceptor_.local_endpoint(error);
}

template <class Protocol>
void Listener<Protocol>::Start() {
  asio::co_spawn(strand_, AcceptLoop(), asio::detached);
}

template <class Protocol>
void Listener<Protocol>::Close() {
  asio::post(strand_, [this] {
    boost::system::error_code ignored;
    acceptor_.close(ignored);
  });
}

template <class Protocol>
asio::awaitable<void> Listener<Protocol>::AcceptLoop() {
  while (acceptor_.is_open()) {
    typename Protocol::socket socket(asio::make_strand(io_context_));
    auto [error] = co_await acceptor_.async_accept(socket, kNoThrow);
    if (error == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
    if (error) {
      // Out of descriptors or similar: say so, back off briefly, keep serving.
      environment_.log.Warning("accept failed: " + error.message());
      asio::steady_timer pause(strand_, std::chrono::milliseconds(50));
      co_await pause.async_wait(kNoThrow);
      continue;
    }
    auto executor = socket.get_executor();
    if constexpr (std::is_same_v<Protocol, tcp>) {
      if (tls_) {
        SpawnTls(std::move(socket));
        continue;
      }
    }
    asio::co_spawn(executor, ServeConnection(std::move(socket), environment_), asio::detached);
  }
}

template <class Protocol>
void Listener<Protocol>::SpawnTls(
    typename Protocol::socket socket) requires std::is_same_v<Protocol, tcp> {
  auto executor = socket.get_executor();
  try {
    TlsStream stream(std::move(socket), *tls_);
    asio::co_spawn(executor, ServeConnection(std::move(stream), environment_), asio::detached);
  } catch (const std::exception& exception) {
    // SSL_new failed (out of memory): drop this connection, keep accepting.
    environment_.log.Warning(std::string("A TLS connection could not be set up: ") +
                             exception.what());
  }
}

template class Listener<tcp>;
template class Listener<asio::local::stream_protocol>;

Expected<tcp::endpoint> ParseListenAddress(std::string_view text) {
  auto refuse = [&](std::string_view why) -> Error {
    return Failure(ErrorCode::kInvalidArgument,
                   "\"" + std::string(text) + "\" is not a listen address (" + std::string(why) +
                       "); write ADDRESS:PORT, e.g. 127.0.0.1:8470 or [::1]:0.");
  };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return refuse("no port");
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  unsigned port = 0;
  auto [end, parse_error] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (parse_error != std::errc() || end != port_text.data() + port_text.size() || port > 65535 ||
      port_text.empty()) {
    return refuse("bad port");
  }
  boost::system::error_code error;
  auto address = asio::ip::make_address(std::string(host), error);
  if (error) return refuse("the address must be numeric");
  return tcp::endpoint(address, static_cast<unsigned short>(port));
}

std::string FormatEndpoint(const tcp::endpoint& endpoint) {
  std::string host = endpoint.address().to_string();
  if (endpoint.address().is_v6()) host = "[" + host + "]";
  return host + ":" + std::to_string(endpoint.port());
}

}  // namespace plimsoll::daemon::http
