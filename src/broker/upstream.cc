#include "broker/upstream.h"

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <exception>
#include <limits>
#include <memory>
#include <vector>

#include "net/run_to_completion.h"
#include "net/tls_client.h"

namespace plimsoll::broker {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace ssl = boost::asio::ssl;

using Clock = std::chrono::steady_clock;
using tcp = asio::ip::tcp;
using TcpStream = beast::tcp_stream;
using TlsStream = beast::ssl_stream<beast::tcp_stream>;

// How much of the body one read may fill.
constexpr std::size_t kReadChunkBytes = 64 << 10;

using net::RunToCompletion;

// `ca_file` "" gives the one context on the system's trust store, made on
// first use and shared by every call (an SSL_CTX serves many connections
// from many threads); a file (tests only) gives a new context trusting it.
Expected<std::shared_ptr<ssl::context>> UpstreamTlsContext(const std::string& ca_file) {
  auto make = [](const std::string& file) -> Expected<std::shared_ptr<ssl::context>> {
    auto context = net::MakeTlsClientContext(file);
    if (!context.ok()) return context.error();
    return std::shared_ptr<ssl::context>(std::move(*context));
  };
  if (!ca_file.empty()) return make(ca_file);
  static const Expected<std::shared_ptr<ssl::context>> system = make("");
  return system;
}

bool IsTokenChar(char c) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return true;
  return std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

bool IsHeaderName(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), IsTokenChar);
}

// Visible ASCII, spaces and tabs, not starting or ending with white space:
// no CR, LF, NUL or other control byte can split a header.
bool IsHeaderValue(std::string_view value) {
  for (char c : value) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte != '\t' && (byte < 0x20 || byte > 0x7e)) return false;
  }
  return value.empty() || (value.front() != ' ' && value.front() != '\t' && value.back() != ' ' &&
                           value.back() != '\t');
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

bool IsReservedHeader(std::string_view name) {
  for (std::string_view reserved :
       {"host", "connection", "content-length", "content-type", "transfer-encoding", "cookie",
        "proxy-authorization", "te", "upgrade", "expect", "keep-alive"}) {
    if (EqualsIgnoringCase(name, reserved)) return true;
  }
  return false;
}

// The request target CanonicalPath::encoded() makes: "/" then visible
// ASCII. Checked again so nothing else can reach the request line.
bool IsRequestTarget(std::string_view path) {
  if (path.empty() || path.front() != '/') return false;
  return std::all_of(path.begin(), path.end(), [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte > 0x20 && byte < 0x7f && c != '?' && c != '#';
  });
}

std::string HostHeader(const Origin& origin) {
  std::string host =
      origin.host.find(':') != std::string::npos ? "[" + origin.host + "]" : origin.host;
  const uint16_t default_port = origin.scheme == "https" ? 443 : 80;
  if (origin.EffectivePort() != default_port) host += ":" + std::to_string(origin.EffectivePort());
  return host;
}

http::verb Verb(HttpMethod method) {
  switch (method) {
    case HttpMethod::kGet:
      return http::verb::get;
    case HttpMethod::kHead:
      return http::verb::head;
    case HttpMethod::kPost:
      return http::verb::post;
    case HttpMethod::kPut:
      return http::verb::put;
    case HttpMethod::kPatch:
      return http::verb::patch;
    case HttpMethod::kDelete:
      return http::verb::delete_;
  }
  return http::verb::get;
}

// The errors, one constructor per kind (UpstreamErrorKindOf reads the code).
class Errors {
 public:
  Errors(const Origin& origin, Clock::time_point started)
      : origin_(origin.ToString()), started_(started) {}

  Error Timeout(std::string_view step) const {
    const auto elapsed =
        std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started_).count();
    return Failure(ErrorCode::kDeadlineExceeded,
                   "The upstream " + origin_ + " did not " + std::string(step) +
                       " before the call's deadline (" + std::to_string(elapsed) +
                       " ms after the call started).");
  }
  Error Connection(std::string_view what) const {
    return Failure(ErrorCode::kFailedPrecondition,
                   "The call to the upstream " + origin_ + " failed: " + std::string(what) + ".");
  }
  Error Protocol(std::string_view what) const {
    return Failure(ErrorCode::kDataLoss, "The upstream " + origin_ + " " + std::string(what) + ".");
  }
  Error BadRequest(std::string_view what) const {
    return Failure(ErrorCode::kInvalidArgument, "The call to the upstream " + origin_ +
                                                    " was not sent: " + std::string(what) + ".");
  }

 private:
  std::string origin_;
  Clock::time_point started_;
};

// Where the connection goes: the origin's addresses, resolved here (never
// through a proxy). http only to loopback addresses.
Expected<std::vector<tcp::endpoint>> Endpoints(asio::io_context& io, const Origin& origin,
                                               const Errors& errors) {
  std::vector<tcp::endpoint> endpoints;
  const uint16_t port = origin.EffectivePort();
  beast::error_code error;
  const asio::ip::address literal = asio::ip::make_address(origin.host, error);
  if (!error) {
    endpoints.emplace_back(literal, port);
  } else {
    tcp::resolver resolver(io);
    auto results =
        resolver.resolve(origin.host, std::to_string(port), tcp::resolver::numeric_service, error);
    if (error) {
      return errors.Connection("cannot resolve " + origin.host + " (" + error.message() + ")");
    }
    for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  }
  if (endpoints.empty()) return errors.Connection(origin.host + " has no address");
  if (origin.scheme != "https") {
    for (const auto& endpoint : endpoints) {
      if (!endpoint.address().is_loopback()) {
        return errors.Connection("plain http is allowed only to loopback, and " + origin.host +
                                 " resolves to " + endpoint.address().to_string());
      }
    }
  }
  return endpoints;
}

// A malformed answer (as opposed to one cut short by the connection).
bool IsParseError(const beast::error_code& error) {
  static const beast::error_code kHttpError = http::error::bad_version;
  return error.category() == kHttpError.category() && error != http::error::end_of_stream &&
         error != http::error::partial_message;
}

// Writes the request and reads the answer on a connected stream (TCP or
// TLS). The stream's deadline is already set.
template <typename Stream>
Expected<UpstreamAnswer> Exchange(asio::io_context& io, Stream& stream,
                                  const http::request<http::string_body>& request, bool head,
                                  Clock::time_point deadline, const Errors& errors) {
  const auto timed_out = [deadline](const beast::error_code& error) {
    return error == beast::error::timeout || Clock::now() >= deadline;
  };
  const beast::error_code write_error =
      RunToCompletion(io, [&](auto handler) { http::async_write(stream, request, handler); });
  if (write_error && timed_out(write_error)) return errors.Timeout("take the request");
  // After another write error the upstream may still have answered (some
  // refuse a request before reading all of its body), so read either way.

  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(kMaxUpstreamHeaderBytes));
  parser.body_limit(std::numeric_limits<std::uint64_t>::max());  // cut below, not refused
  if (head) parser.skip(true);
  beast::error_code error = RunToCompletion(
      io, [&](auto handler) { http::async_read_header(stream, buffer, parser, handler); });
  if (error) {
    if (timed_out(error)) return errors.Timeout("answer");
    if (error == http::error::header_limit) {
      return errors.Protocol("sent an answer whose header is over " +
                             std::to_string(kMaxUpstreamHeaderBytes) + " bytes");
    }
    if (write_error) {
      return errors.Connection("the connection broke while sending the request (" +
                               write_error.message() + ")");
    }
    if (IsParseError(error)) {
      return errors.Protocol("sent an answer that is not valid HTTP/1.1 (" + error.message() + ")");
    }
    return errors.Connection("the connection ended before an answer (" + error.message() + ")");
  }

  UpstreamAnswer answer;
  const auto& header = parser.get();
  answer.status = header.result_int();
  if (auto field = header.find(http::field::content_type); field != header.end()) {
    answer.content_type = std::string(field->value());
  }
  if (auto field = header.find(http::field::retry_after); field != header.end()) {
    answer.retry_after = std::string(field->value());
  }

  std::vector<char> chunk(kReadChunkBytes);
  while (!parser.is_done()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    error = RunToCompletion(
        io, [&](auto handler) { http::async_read(stream, buffer, parser, handler); });
    if (error == http::error::need_buffer) error = {};
    answer.body.append(chunk.data(), chunk.size() - parser.get().body().size);
    if (answer.body.size() > kMaxResponseBody) {
      answer.body.resize(kMaxResponseBody);
      answer.truncated = true;
      break;  // the rest is never read; the connection closes with the stream
    }
    if (!error) continue;
    if (timed_out(error)) return errors.Timeout("finish its answer");
    if (error == ssl::error::stream_truncated) {
      // The TCP connection ended without TLS's close_notify: only an answer
      // whose length was known and is complete could be trusted, and this
      // one is not complete.
      return errors.Connection(
          "the TLS connection ended without close_notify before the answer was complete");
    }
    if (IsParseError(error)) {
      return errors.Protocol("sent an answer body that is not valid HTTP/1.1 (" + error.message() +
                             ")");
    }
    return errors.Connection("the connection ended in the middle of the answer (" +
                             error.message() + ")");
  }
  return answer;
}

}  // namespace

std::string_view UpstreamErrorKindName(UpstreamErrorKind kind) {
  switch (kind) {
    case UpstreamErrorKind::kTimeout:
      return "timeout";
    case UpstreamErrorKind::kConnection:
      return "connection";
    case UpstreamErrorKind::kProtocol:
      return "protocol";
    case UpstreamErrorKind::kBodyTooLarge:
      return "body_too_large";
  }
  return "connection";
}

UpstreamErrorKind UpstreamErrorKindOf(const Error& error) {
  switch (error.code()) {
    case ErrorCode::kDeadlineExceeded:
      return UpstreamErrorKind::kTimeout;
    case ErrorCode::kResourceExhausted:
      return UpstreamErrorKind::kBodyTooLarge;
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kDataLoss:
      return UpstreamErrorKind::kProtocol;
    default:
      return UpstreamErrorKind::kConnection;
  }
}

CallRefusal CallRefusalFor(UpstreamErrorKind kind) {
  switch (kind) {
    case UpstreamErrorKind::kTimeout:
      return CallRefusal::kUpstreamTimeout;
    case UpstreamErrorKind::kBodyTooLarge:
      return CallRefusal::kBodyTooLarge;
    case UpstreamErrorKind::kConnection:
    case UpstreamErrorKind::kProtocol:
      return CallRefusal::kUpstreamError;
  }
  return CallRefusal::kUpstreamError;
}

Expected<UpstreamAnswer> CallUpstream(const UpstreamRequest& request, Clock::time_point deadline) {
  const Clock::time_point started = Clock::now();
  const Errors errors(request.origin, started);

  // Everything that can be refused without a connection, first.
  if (request.body.size() > kMaxRequestBody) {
    return Failure(ErrorCode::kResourceExhausted,
                   "The request body is " + std::to_string(request.body.size()) +
                       " bytes, over the broker's limit of " + std::to_string(kMaxRequestBody) +
                       " bytes (1 MiB); nothing was sent upstream.");
  }
  if (request.origin.scheme != "https" && request.origin.scheme != "http") {
    return errors.BadRequest("the origin's scheme is neither https nor http");
  }
  if (!IsRequestTarget(request.path)) {
    return errors.BadRequest("the path is not a canonical request target");
  }
  for (const auto& [name, value] : request.headers) {
    // Only the name is shown: a value may be a credential.
    if (!IsHeaderName(name)) return errors.BadRequest("a header name is not an HTTP token");
    if (IsReservedHeader(name)) {
      return errors.BadRequest("the header " + name + " is set by the broker itself");
    }
    if (!IsHeaderValue(value)) {
      return errors.BadRequest("the value of the header " + name +
                               " holds a character a header cannot carry");
    }
  }
  if (!IsHeaderValue(request.content_type)) {
    return errors.BadRequest("the content type holds a character a header cannot carry");
  }
  if (started >= deadline) return errors.Timeout("get the call");

  try {
    http::request<http::string_body> message{Verb(request.method), request.path, 11};
    message.set(http::field::host, HostHeader(request.origin));
    for (const auto& [name, value] : request.headers) message.insert(name, value);
    if (!request.content_type.empty()) message.set(http::field::content_type, request.content_type);
    message.set(http::field::connection, "close");
    message.body() = request.body;
    message.prepare_payload();
    const bool head = request.method == HttpMethod::kHead;

    asio::io_context io;
    auto endpoints = Endpoints(io, request.origin, errors);
    if (!endpoints.ok()) return endpoints.error();
    if (Clock::now() >= deadline) return errors.Timeout("get the call");

    if (request.origin.scheme == "http") {
      TcpStream stream(io);
      stream.expires_at(deadline);
      beast::error_code error =
          RunToCompletion(io, [&](auto handler) { stream.async_connect(*endpoints, handler); });
      if (error == beast::error::timeout) return errors.Timeout("accept a connection");
      if (error) return errors.Connection("cannot connect (" + error.message() + ")");
      return Exchange(io, stream, message, head, deadline, errors);
    }

    auto context = UpstreamTlsContext(request.ca_file);
    if (!context.ok()) return errors.Connection(context.error().message());
    TlsStream stream(io, **context);
    if (!net::PrepareTlsClientConnection(stream.native_handle(), request.origin.host).ok()) {
      return errors.Connection("OpenSSL refused to check the certificate against " +
                               request.origin.host);
    }
    beast::get_lowest_layer(stream).expires_at(deadline);
    beast::error_code error = RunToCompletion(io, [&](auto handler) {
      beast::get_lowest_layer(stream).async_connect(*endpoints, handler);
    });
    if (error == beast::error::timeout) return errors.Timeout("accept a connection");
    if (error) return errors.Connection("cannot connect (" + error.message() + ")");
    error = RunToCompletion(
        io, [&](auto handler) { stream.async_handshake(ssl::stream_base::client, handler); });
    if (error == beast::error::timeout || (error && Clock::now() >= deadline)) {
      return errors.Timeout("complete the TLS handshake");
    }
    if (error) {
      return errors.Connection(net::DescribeTlsHandshakeFailure(stream.native_handle(), error));
    }
    // No close_notify afterwards: the answer's end is known from its
    // framing, and a shutdown exchange would need its own deadline.
    return Exchange(io, stream, message, head, deadline, errors);
  } catch (const std::exception& exception) {
    return errors.Connection(std::string("an unexpected error happened (") + exception.what() +
                             ")");
  }
}

}  // namespace plimsoll::broker
