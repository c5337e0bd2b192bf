#include "client/http_connection.h"

#include <poll.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <cctype>
#include <exception>
#include <type_traits>
#include <variant>

#include "client/cleartext_policy.h"
#include "net/run_to_completion.h"
#include "net/tls_client.h"

namespace plimsoll::client {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;

using Clock = std::chrono::steady_clock;
using TcpStream = beast::tcp_stream;
using UnixStream = beast::basic_stream<asio::local::stream_protocol>;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// Answer headers larger than this are refused (the daemon's are a few
// hundred bytes; proxies add some).
constexpr uint32_t kMaxAnswerHeaderBytes = 64 << 10;

using net::RunToCompletion;

std::string Milliseconds(std::chrono::milliseconds duration) {
  return std::to_string(static_cast<int64_t>(duration.count())) + " ms";
}

std::string Lowercase(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The TLS setup failed (net/tls_client.h) before a connection was made.
Error TlsSetupRefused(const Error& error) {
  return Refusal(NotDispatched::kRequest, error.code(), error.message());
}

// Nothing was sent: the daemon never saw this call.
Error NotConnected(const DaemonUrl& url, const std::string& why) {
  return Refusal(
      NotDispatched::kCapacity, ErrorCode::kFailedPrecondition,
      "Cannot reach the daemon at " + url.ToString() + ": " + why + ". Nothing was sent.");
}

Error ConnectTimedOut(const DaemonUrl& url, std::chrono::milliseconds bound) {
  return Refusal(NotDispatched::kCapacity, ErrorCode::kDeadlineExceeded,
                 "Cannot reach the daemon at " + url.ToString() + " within " + Milliseconds(bound) +
                     ". Nothing was sent.");
}

// The request (or part of it) left: the daemon may have run it.
Error AnswerLost(const DaemonUrl& url, const std::string& what, const HttpCall& call) {
  return Failure(ErrorCode::kDataLoss, "The answer from " + url.ToString() + " was lost: " + what +
                                           "; " + call.consequence + ".");
}

template <typename T>
constexpr bool kIsStream = !std::is_same_v<std::decay_t<T>, std::monostate>;

}  // namespace

struct HttpConnection::State {
  asio::io_context io;
  std::unique_ptr<asio::ssl::context> tls_context;  // https only
  std::variant<std::monostate, std::unique_ptr<TcpStream>, std::unique_ptr<UnixStream>,
               std::unique_ptr<TlsStream>>
      stream;
  beast::flat_buffer buffer;

  bool IsOpen() const { return !std::holds_alternative<std::monostate>(stream); }

  // No TLS close_notify: the daemon treats a closed socket as the end, and a
  // shutdown exchange would need its own deadline for nothing.
  void Close() {
    stream = std::monostate{};
    buffer.consume(buffer.size());
  }

  // Whether a kept connection can carry the next request: nothing to read.
  // A daemon that closed an idle connection (or sent stray bytes) shows as
  // readable, and the request then goes on a new connection instead.
  bool StillUsable() {
    if (buffer.size() != 0) return false;
    int fd = std::visit(
        [](auto& held) -> int {
          if constexpr (kIsStream<decltype(held)>) {
            return beast::get_lowest_layer(*held).socket().native_handle();
          } else {
            return -1;
          }
        },
        stream);
    if (fd < 0) return false;
    pollfd descriptor{fd, static_cast<short>(POLLIN | POLLRDHUP), 0};
    return ::poll(&descriptor, 1, 0) == 0;
  }

  void SetDeadline(Clock::time_point deadline) {
    std::visit(
        [deadline](auto& held) {
          if constexpr (kIsStream<decltype(held)>) {
            beast::get_lowest_layer(*held).expires_at(deadline);
          }
        },
        stream);
  }

  Status ConnectUnix(const DaemonUrl& url, Clock::time_point deadline,
                     std::chrono::milliseconds bound) {
    auto socket = std::make_unique<UnixStream>(io);
    socket->expires_at(deadline);
    asio::local::stream_protocol::endpoint endpoint(url.socket_path);
    beast::error_code error =
        RunToCompletion(io, [&](auto handler) { socket->async_connect(endpoint, handler); });
    if (error == beast::error::timeout) return ConnectTimedOut(url, bound);
    if (error) return NotConnected(url, error.message());
    stream = std::move(socket);
    return Status::Ok();
  }

  Status ConnectTcp(const DaemonUrl& url, const ConnectionSettings& settings,
                    Clock::time_point deadline, std::chrono::milliseconds bound) {
    // Resolution is blocking: instant for IP literals and /etc/hosts names;
    // a DNS lookup is bounded by the system resolver's own timeouts.
    asio::ip::tcp::resolver resolver(io);
    beast::error_code error;
    auto endpoints = resolver.resolve(url.host, std::to_string(url.port),
                                      asio::ip::tcp::resolver::numeric_service, error);
    if (error) return NotConnected(url, "cannot resolve " + url.host + ": " + error.message());
    std::vector<asio::ip::address> addresses;
    for (const auto& entry : endpoints) addresses.push_back(entry.endpoint().address());
    PLIMSOLL_RETURN_IF_ERROR(CheckCleartextResolved(url, addresses, settings.allow_cleartext));
    if (Clock::now() >= deadline) return ConnectTimedOut(url, bound);

    if (url.transport == Transport::kHttp) {
      auto socket = std::make_unique<TcpStream>(io);
      socket->expires_at(deadline);
      error = RunToCompletion(io, [&](auto handler) { socket->async_connect(endpoints, handler); });
      if (error == beast::error::timeout) return ConnectTimedOut(url, bound);
      if (error) return NotConnected(url, error.message());
      stream = std::move(socket);
      return Status::Ok();
    }

    auto tls = std::make_unique<TlsStream>(io, *tls_context);
    if (Status prepared = net::PrepareTlsClientConnection(tls->native_handle(), url.host);
        !prepared.ok()) {
      return TlsSetupRefused(prepared.error());
    }
    beast::get_lowest_layer(*tls).expires_at(deadline);
    error = RunToCompletion(
        io, [&](auto handler) { beast::get_lowest_layer(*tls).async_connect(endpoints, handler); });
    if (error == beast::error::timeout) return ConnectTimedOut(url, bound);
    if (error) return NotConnected(url, error.message());
    error = RunToCompletion(
        io, [&](auto handler) { tls->async_handshake(asio::ssl::stream_base::client, handler); });
    if (error == beast::error::timeout) return ConnectTimedOut(url, bound);
    if (error) {
      return NotConnected(url, net::DescribeTlsHandshakeFailure(tls->native_handle(), error));
    }
    stream = std::move(tls);
    return Status::Ok();
  }

  template <typename Message>
  beast::error_code Write(Message& message) {
    return std::visit(
        [&](auto& held) -> beast::error_code {
          if constexpr (kIsStream<decltype(held)>) {
            return RunToCompletion(
                io, [&](auto handler) { http::async_write(*held, message, handler); });
          } else {
            return asio::error::not_connected;
          }
        },
        stream);
  }

  template <typename Parser>
  beast::error_code Read(Parser& parser) {
    return std::visit(
        [&](auto& held) -> beast::error_code {
          if constexpr (kIsStream<decltype(held)>) {
            return RunToCompletion(
                io, [&](auto handler) { http::async_read(*held, buffer, parser, handler); });
          } else {
            return asio::error::not_connected;
          }
        },
        stream);
  }
};

HttpConnection::HttpConnection(DaemonUrl url, ConnectionSettings settings,
                               std::unique_ptr<State> state)
    : url_(std::move(url)), settings_(std::move(settings)), state_(std::move(state)) {}

HttpConnection::~HttpConnection() = default;

Expected<std::unique_ptr<HttpConnection>> HttpConnection::Create(DaemonUrl url,
                                                                 ConnectionSettings settings) {
  auto state = std::make_unique<State>();
  if (url.transport == Transport::kHttps) {
    auto context = net::MakeTlsClientContext(settings.ca_file);
    if (!context.ok()) return TlsSetupRefused(context.error());
    state->tls_context = std::move(*context);
  }
  return std::unique_ptr<HttpConnection>(
      new HttpConnection(std::move(url), std::move(settings), std::move(state)));
}

Expected<HttpAnswer> HttpConnection::Exchange(const HttpCall& call) {
  State& state = *state_;
  const Clock::time_point deadline = Clock::now() + call.budget;
  try {
    if (!state.IsOpen() || !state.StillUsable()) {
      state.Close();
      const Clock::time_point connect_deadline =
          std::min(deadline, Clock::now() + settings_.connect_timeout);
      const auto bound = std::min(call.budget, settings_.connect_timeout);
      Status connected = url_.transport == Transport::kUnix
                             ? state.ConnectUnix(url_, connect_deadline, bound)
                             : state.ConnectTcp(url_, settings_, connect_deadline, bound);
      if (!connected.ok()) {
        state.Close();
        return connected.error();
      }
      ++connections_opened_;
    }

    http::request<http::string_body> request;
    // The verbs the API has; anything else is a bug of the caller, sent as
    // what it says so the daemon refuses it (405) rather than this client
    // quietly sending another method.
    const http::verb verb = http::string_to_verb(call.method);
    if (verb == http::verb::unknown) {
      request.method_string(call.method);
    } else {
      request.method(verb);
    }
    request.target(call.target);
    request.version(11);
    request.set(http::field::host, url_.HostHeader());
    for (const auto& [name, value] : call.headers) request.set(name, value);
    if (call.method == "POST") request.body() = call.body;
    request.keep_alive(true);
    request.prepare_payload();

    state.SetDeadline(deadline);
    beast::error_code write_error = state.Write(request);
    if (write_error == beast::error::timeout) {
      state.Close();
      return Failure(ErrorCode::kDeadlineExceeded,
                     "Sending the request to " + url_.ToString() + " did not finish within " +
                         Milliseconds(call.budget) + "; " + call.consequence + ".");
    }
    // After a write error the daemon may still have answered (it refuses
    // some requests before reading their whole body), so read either way.

    http::response_parser<http::string_body> parser;
    parser.header_limit(kMaxAnswerHeaderBytes);
    parser.body_limit(static_cast<uint64_t>(std::max<int64_t>(settings_.max_response_bytes, 0)));
    beast::error_code read_error = state.Read(parser);
    if (read_error) {
      state.Close();
      if (read_error == beast::error::timeout) {
        return Failure(ErrorCode::kDeadlineExceeded, "No complete answer from " + url_.ToString() +
                                                         " within " + Milliseconds(call.budget) +
                                                         "; " + call.consequence + ".");
      }
      if (read_error == http::error::body_limit) {
        return AnswerLost(url_,
                          "its body is larger than the client's limit of " +
                              std::to_string(settings_.max_response_bytes) +
                              " bytes (max_response_bytes) and was not read",
                          call);
      }
      if (read_error == http::error::header_limit) {
        return AnswerLost(
            url_, "its header is larger than " + std::to_string(kMaxAnswerHeaderBytes) + " bytes",
            call);
      }
      std::string what =
          write_error
              ? "the connection failed while sending the request (" + write_error.message() + ")"
              : "the connection failed before a complete answer (" + read_error.message() + ")";
      return AnswerLost(url_, what, call);
    }

    const auto& response = parser.get();
    HttpAnswer answer;
    answer.status = response.result_int();
    for (const auto& field : response) {
      answer.headers.emplace_back(Lowercase(field.name_string()), std::string(field.value()));
    }
    answer.body = response.body();
    if (write_error || !response.keep_alive()) state.Close();
    return answer;
  } catch (const std::exception& exception) {
    // Not expected (every operation above reports through error codes); the
    // request may have left, so no mark.
    state.Close();
    return Failure(ErrorCode::kInternal, "The call to " + url_.ToString() +
                                             " failed unexpectedly: " + exception.what() + "; " +
                                             call.consequence + ".");
  }
}

}  // namespace plimsoll::client
