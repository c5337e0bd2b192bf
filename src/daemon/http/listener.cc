#include "daemon/http/listener.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http/write.hpp>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <functional>

#include "daemon/http/errors_to_http.h"
#include "daemon/http/framing.h"
#include "daemon/http/watchdog.h"

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

// chmod, then a check that the path is still the socket just made.
Status RestrictSocketFile(const std::string& path, mode_t mode) {
  if (::chmod(path.c_str(), mode) != 0) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "Cannot listen on " + path + ": chmod failed: " + std::strerror(errno) + ".");
  }
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISSOCK(info.st_mode) ||
      (info.st_mode & 07777) != mode) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "Cannot listen on " + path +
                       ": the socket file changed under the daemon (keep its directory private).");
  }
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

// The answer to a connection refused by a cap: nothing of it was read, so
// it carries no request-ID echo (there is none to echo).
Answer CapRefusal(ConnectionLimiter::Rejection rejection, Log& log) {
  std::string why = rejection == ConnectionLimiter::Rejection::kPeer
                        ? "this client already holds as many open connections as one client may"
                        : "the daemon holds as many open connections as it serves";
  Answer answer = ErrorAnswer(
      HttpStatus::service_unavailable,
      Refusal(NotDispatched::kCapacity, "Connection refused before any request was read: " + why +
                                            "; close idle connections or try again shortly."),
      "", log);
  answer.headers.emplace_back("Retry-After", "1");
  return answer;
}

// Writes the cap refusal (bounded), ends the sending direction, then reads
// and drops what the client sends for a moment so closing does not reset
// the connection before the client read the answer.
template <class Socket>
asio::awaitable<void> RefuseConnection(Socket socket, ConnectionLimiter::Rejection rejection,
                                       std::unique_ptr<ConnectionLimiter::RefusalSlot> /*held*/,
                                       Log& log) {
  constexpr auto kBound = std::chrono::milliseconds(1000);
  try {
    Response response = FrameAnswer(CapRefusal(rejection, log), "", 11, false);
    Watchdog<Socket> watchdog(socket);
    watchdog.Arm(kBound);
    auto [write_error, written] =
        co_await boost::beast::http::async_write(socket, response, kNoThrow);
    if (!write_error) {
      boost::system::error_code ignored;
      socket.shutdown(Socket::shutdown_send, ignored);
      std::array<char, 4096> scratch;
      size_t budget = 64 * 1024;
      while (budget > 0) {
        auto [error, size] = co_await socket.async_read_some(asio::buffer(scratch), kNoThrow);
        if (error) break;
        budget -= std::min(budget, size);
      }
    }
    watchdog.Disarm();
  } catch (const std::exception&) {
    // Out of memory while refusing: the close below is the answer.
  }
  boost::system::error_code ignored;
  socket.close(ignored);
}

// Serves one accepted TCP connection over TLS with `context`. A free function,
// not a member constrained to TCP: Clang 14 instantiates a constrained member
// of an explicitly instantiated class even where its constraint fails.
void SpawnTls(tcp::socket socket, asio::ssl::context& context,
              const ConnectionEnvironment& environment,
              std::function<void(std::exception_ptr)> release) {
  auto executor = socket.get_executor();
  try {
    TlsStream stream(std::move(socket), context);
    asio::co_spawn(executor, ServeConnection(std::move(stream), environment), std::move(release));
  } catch (const std::exception& exception) {
    // SSL_new failed (out of memory): drop this connection, keep accepting.
    environment.log.Warning(std::string("A TLS connection could not be set up: ") +
                            exception.what());
  }
}

}  // namespace

template <class Protocol>
Listener<Protocol>::Listener(asio::io_context& io_context, const ConnectionEnvironment& environment)
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
  if constexpr (std::is_same_v<Protocol, asio::local::stream_protocol>) {
    // Before listen(): until then a connect() is refused, so nobody gets in
    // between the bind (which creates the file by the umask) and the chmod.
    PLIMSOLL_RETURN_IF_ERROR(RestrictSocketFile(endpoint.path(), unix_mode_));
  }
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
    std::shared_ptr<ConnectionLimiter::Slot> slot;
    if (environment_.limiter != nullptr) {
      auto admitted = environment_.limiter->TryAcquire(PeerKeyOf(socket));
      if (auto* rejection = std::get_if<ConnectionLimiter::Rejection>(&admitted)) {
        Refuse(std::move(socket), *rejection);
        continue;
      }
      slot = std::make_shared<ConnectionLimiter::Slot>(
          std::move(std::get<ConnectionLimiter::Slot>(admitted)));
    }
    // The slot is released when the connection's coroutine ends.
    std::function<void(std::exception_ptr)> release = [slot](std::exception_ptr) {};
    if constexpr (std::is_same_v<Protocol, tcp>) {
      if (tls_) {
        SpawnTls(std::move(socket), *tls_, environment_, std::move(release));
        continue;
      }
    }
    asio::co_spawn(executor, ServeConnection(std::move(socket), environment_), std::move(release));
  }
}

template <class Protocol>
void Listener<Protocol>::Refuse(typename Protocol::socket socket,
                                ConnectionLimiter::Rejection rejection) {
  if (environment_.on_reject) environment_.on_reject(rejection);
  std::unique_ptr<ConnectionLimiter::RefusalSlot> refusing;
  if (!tls_) refusing = environment_.limiter->TryBeginRefusal();
  if (refusing == nullptr) {  // TLS, or too many refusals in progress: just close
    boost::system::error_code ignored;
    socket.close(ignored);
    return;
  }
  auto executor = socket.get_executor();
  asio::co_spawn(
      executor,
      RefuseConnection(std::move(socket), rejection, std::move(refusing), environment_.log),
      asio::detached);
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
