#include "daemon/http/connection.h"

#include <openssl/ssl.h>

#include <algorithm>
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/stream_traits.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <exception>
#include <memory>
#include <type_traits>

#include "daemon/http/errors_to_http.h"
#include "daemon/http/framing.h"
#include "daemon/http/loopback_host.h"
#include "daemon/http/request_id.h"
#include "daemon/http/watchdog.h"

namespace plimsoll::daemon::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace beast_http = boost::beast::http;

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);
using Parser = beast_http::request_parser<beast_http::string_body>;

// Shared with the registry's close-if-idle callback; touched on the strand only.
template <class Socket>
struct ConnectionState {
  Socket* socket = nullptr;
  bool busy = false;
};

// `Stream` carries the HTTP bytes (a socket, or TLS over one); `Socket` is
// the socket under it, which the watchdog and the drain cancel and which is
// read raw when discarding input after the last answer.
template <class Stream>
class Connection {
 public:
  using Socket = beast::lowest_layer_type<Stream>;

  Connection(Stream& stream, const ConnectionEnvironment& environment)
      : stream_(stream),
        socket_(beast::get_lowest_layer(stream)),
        environment_(environment),
        watchdog_(socket_) {}

  asio::awaitable<void> Serve(ConnectionState<Socket>& state) {
    if constexpr (kTls) {
      if (environment_.registry.draining() || !co_await Handshake()) co_return;
    }
    while (!environment_.registry.draining()) {
      if (buffer_.size() == 0 && !co_await AwaitFirstByte()) co_return;
      state.busy = true;
      bool keep_alive = co_await ServeOne();
      state.busy = false;
      if (!keep_alive) co_return;
    }
  }

 private:
  static constexpr bool kTls = std::is_same_v<Stream, TlsStream>;

  // TLS only. Waiting for the ClientHello's first byte is the idle phase;
  // from there to the end of the handshake is the header phase. Any failure
  // (a timeout, the drain, a client that is not speaking TLS) closes the
  // connection without an answer.
  asio::awaitable<bool> Handshake() {
    watchdog_.Arm(environment_.limits.idle_timeout);
    auto [wait_error] = co_await socket_.async_wait(Socket::wait_read, kNoThrow);
    watchdog_.Disarm();
    if (wait_error) co_return false;
    watchdog_.Arm(environment_.limits.header_timeout);
    auto [error] = co_await stream_.async_handshake(asio::ssl::stream_base::server, kNoThrow);
    watchdog_.Disarm();
    co_return !error;
  }

  // Waits up to the idle timeout for the next request to start.
  asio::awaitable<bool> AwaitFirstByte() {
    watchdog_.Arm(environment_.limits.idle_timeout);
    auto [error, size] = co_await stream_.async_read_some(buffer_.prepare(4096), kNoThrow);
    watchdog_.Disarm();
    if (error) co_return false;
    buffer_.commit(size);
    co_return true;
  }

  // Serves one request; returns whether the connection may serve another.
  asio::awaitable<bool> ServeOne() {
    AnswerContext facts;
    facts.started = std::chrono::steady_clock::now();
    Parser parser;
    parser.header_limit(environment_.limits.max_header_bytes);
    parser.body_limit(static_cast<uint64_t>(environment_.limits.max_body_bytes));

    watchdog_.Arm(environment_.limits.header_timeout);
    auto [header_error, header_size] =
        co_await beast_http::async_read_header(stream_, buffer_, parser, kNoThrow);
    watchdog_.Disarm();
    if (header_error) {
      // Content-Length above the body limit is found once the whole header is
      // parsed, so its request ID can be echoed; after other errors the
      // header is incomplete (a second ID may be unread) and none is.
      bool header_complete = header_error == beast_http::error::body_limit;
      std::string id = header_complete ? EchoableRequestId(parser.get().base()) : std::string();
      unsigned version = parser.get().version() == 10 ? 10 : 11;  // unparsed: answer 1.1
      if (header_complete) facts.method = parser.get().method();
      facts.request_id = id;
      co_return co_await RefuseRead(header_error, "header", id, version, facts);
    }

    const auto& header = parser.get();
    std::string request_id = EchoableRequestId(header.base());
    unsigned version = header.version();
    facts.method = header.method();
    facts.request_id = request_id;
    if (std::optional<Answer> misdirected = CheckHost(header, request_id)) {
      co_return co_await Write(*misdirected, request_id, version, false, facts);
    }
    auto admitted = environment_.router.Admit(header.base(), request_id);
    if (auto* refusal = std::get_if<Answer>(&admitted)) {
      if (!parser.is_done()) refusal->close_connection = true;
      co_return co_await Write(*refusal, request_id, version, header.keep_alive(), facts);
    }

    if (!parser.is_done()) {
      if (header[beast_http::field::expect] == "100-continue" && !co_await WriteContinue(version)) {
        co_return false;
      }
      watchdog_.Arm(environment_.limits.body_timeout);
      auto [body_error, body_size] =
          co_await beast_http::async_read(stream_, buffer_, parser, kNoThrow);
      watchdog_.Disarm();
      if (body_error) {
        co_return co_await RefuseRead(body_error, "body", request_id, version, facts);
      }
    }

    Admitted& route = std::get<Admitted>(admitted);
    facts.route = route.route->pattern;
    RequestContext context{std::move(route.path_params), std::move(parser.get().body()), request_id,
                           std::move(route.caller)};
    if (context.caller) facts.caller = &*context.caller;
    Answer answer = co_await CallHandler(*route.route, context);
    co_return co_await Write(answer, request_id, version, parser.get().keep_alive(), facts);
  }

  // The DNS-rebinding defence of --dev (loopback_host.h): one Host header,
  // naming loopback. The request's body is not read.
  std::optional<Answer> CheckHost(const beast_http::request_header<>& header,
                                  std::string_view request_id) {
    if constexpr (std::is_same_v<Stream, UnixSocket>) return std::nullopt;
    if (!environment_.loopback_host_only) return std::nullopt;
    auto hosts = header.equal_range(beast_http::field::host);
    bool one = hosts.first != hosts.second && std::next(hosts.first) == hosts.second;
    if (one && IsLoopbackHost(hosts.first->value())) return std::nullopt;
    Answer refusal = ErrorAnswer(
        HttpStatus::misdirected_request,
        Refusal(NotDispatched::kRequest, ErrorCode::kInvalidArgument,
                "This daemon runs in development mode (--dev) and answers only requests "
                "addressed to a loopback name: its Host header must be localhost, an address "
                "in 127.0.0.0/8 or [::1], with an optional port (a defence against DNS "
                "rebinding)."),
        request_id, environment_.log);
    refusal.close_connection = true;
    return refusal;
  }

  asio::awaitable<Answer> CallHandler(const Route& route, RequestContext& context) {
    try {
      co_return co_await route.handler(context);
    } catch (const std::exception& exception) {
      co_return ErrorAnswer(
          Failure(ErrorCode::kInternal, std::string("A handler threw: ") + exception.what()),
          context.request_id, environment_.log);
    }
  }

  asio::awaitable<bool> RefuseRead(const boost::system::error_code& error, std::string_view phase,
                                   std::string_view request_id, unsigned version,
                                   const AnswerContext& facts) {
    auto refusal = TransportRefusal(error, watchdog_.expired(), phase, environment_.limits,
                                    request_id, environment_.log);
    if (!refusal) co_return false;
    co_await Write(*refusal, request_id, version, false, facts);
    co_return false;
  }

  asio::awaitable<bool> WriteContinue(unsigned version) {
    beast_http::response<beast_http::empty_body> interim{beast_http::status::continue_, version};
    watchdog_.Arm(environment_.limits.write_timeout);
    auto [error, size] = co_await beast_http::async_write(stream_, interim, kNoThrow);
    watchdog_.Disarm();
    co_return !error;
  }

  // Parameters are references or trivially destructible: g++ 12 destroys
  // non-trivial temporaries of a co_await expression twice (seen under ASan).
  asio::awaitable<bool> Write(Answer& answer, std::string_view request_id, unsigned version,
                              bool request_keep_alive, const AnswerContext& facts) {
    bool keep_alive =
        request_keep_alive && !answer.close_connection && !environment_.registry.draining();
    if (environment_.on_answer) environment_.on_answer(answer, facts);
    Response response = FrameAnswer(std::move(answer), request_id, version, keep_alive);
    // An answer to HEAD carries the headers a GET would (Content-Length
    // included) and no content (RFC 9110 §9.3.2).
    if (facts.method == Verb::head) response.body().clear();
    watchdog_.Arm(environment_.limits.write_timeout);
    auto [error, size] = co_await beast_http::async_write(stream_, response, kNoThrow);
    watchdog_.Disarm();
    if (error) co_return false;
    if (!keep_alive) {
      co_await CloseSending();
      if (answer.close_connection) co_await DiscardUnreadInput();
    }
    co_return keep_alive;
  }

  // Ends the sending direction after the last answer. For TLS a close_notify
  // goes first, so the client can tell the end from a truncation; marking the
  // peer's close_notify as received makes OpenSSL send ours and finish at
  // once instead of waiting for the client's (bounded by the write timeout).
  asio::awaitable<void> CloseSending() {
    if constexpr (kTls) {
      SSL_set_shutdown(stream_.native_handle(), SSL_RECEIVED_SHUTDOWN);
      watchdog_.Arm(environment_.limits.write_timeout);
      auto [error] = co_await stream_.async_shutdown(kNoThrow);
      watchdog_.Disarm();
    }
    boost::system::error_code ignored;
    socket_.shutdown(Socket::shutdown_send, ignored);
  }

  // After refusing a request whose bytes were not all read, read and drop
  // what the client still sends (bounded in time and size) before closing:
  // closing with unread input makes the kernel send a reset, which can
  // destroy the refusal before the client reads it.
  asio::awaitable<void> DiscardUnreadInput() {
    constexpr auto kLinger = std::chrono::seconds(2);
    uint64_t budget = 2 * static_cast<uint64_t>(environment_.limits.max_body_bytes);
    std::array<char, 16 * 1024> scratch;
    watchdog_.Arm(kLinger);
    while (budget > 0) {
      auto [error, size] = co_await socket_.async_read_some(asio::buffer(scratch), kNoThrow);
      if (error) break;
      budget -= std::min<uint64_t>(budget, size);
    }
    watchdog_.Disarm();
  }

  Stream& stream_;
  Socket& socket_;
  const ConnectionEnvironment& environment_;
  Watchdog<Socket> watchdog_;
  beast::flat_buffer buffer_;
};

}  // namespace

template <class Stream>
asio::awaitable<void> ServeConnection(Stream stream, const ConnectionEnvironment& environment) {
  using Socket = beast::lowest_layer_type<Stream>;
  Socket& socket = beast::get_lowest_layer(stream);
  auto state = std::make_shared<ConnectionState<Socket>>();
  state->socket = &socket;
  auto executor = socket.get_executor();
  uint64_t id = environment.registry.Add([state, executor] {
    asio::post(executor, [state] {
      if (state->socket == nullptr || state->busy) return;
      boost::system::error_code ignored;
      state->socket->cancel(ignored);
    });
  });
  try {
    Connection<Stream> connection(stream, environment);
    co_await connection.Serve(*state);
  } catch (const std::exception& exception) {
    environment.log.Error(std::string("A connection failed: ") + exception.what());
  }
  state->socket = nullptr;
  boost::system::error_code ignored;
  socket.close(ignored);
  environment.registry.Remove(id);
}

template asio::awaitable<void> ServeConnection<TcpSocket>(TcpSocket, const ConnectionEnvironment&);
template asio::awaitable<void> ServeConnection<UnixSocket>(UnixSocket,
                                                           const ConnectionEnvironment&);
template asio::awaitable<void> ServeConnection<TlsStream>(TlsStream, const ConnectionEnvironment&);

}  // namespace plimsoll::daemon::http
