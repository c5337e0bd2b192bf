// libFuzzer target: the bytes a client writes on a connection to plimsolld,
// taken through every decision the daemon makes before a handler runs, in
// the order src/daemon/http/session.cc makes them, without sockets:
//
//   Beast's request parser with the daemon's limits (HttpLimits: 16 KiB
//   header, 8 MiB body) -> on a read error, the transport refusal
//   (TransportRefusal) -> the request-ID echo rule (EchoableRequestId) ->
//   Router::Admit over the API route table (path segments, method,
//   authentication, scope, content type) -> the body -> for POST /v1/runs,
//   the body decoder (request_checks.h: protocol first, round trip,
//   validation). Up to four pipelined requests per input, as keep-alive
//   would serve them.
//
// Every answer made before a handler is checked as a client would read it:
// framed (FrameAnswer), serialised, parsed back by Beast's response parser;
// status line and headers well-formed, Content-Type application/json, the
// nothing-ran mark in `Plimsoll-Not-Dispatched` and in the body, the request
// ID echoed exactly when one well-formed ID was sent (SPEC §3).
//
// Seeds: fuzz/corpus/http_request/. fuzz/run runs it for a bounded time.
#include <boost/asio/buffer.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "auth/scope.h"
#include "daemon/authenticator.h"
#include "daemon/http/errors_to_http.h"
#include "daemon/http/framing.h"
#include "daemon/http/request_id.h"
#include "daemon/http/router.h"
#include "daemon/log.h"
#include "plimsoll/wire.h"
#include "request_checks.h"

namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace beast_http = boost::beast::http;
namespace http = plimsoll::daemon::http;
using plimsoll::ErrorCode;
using plimsoll::Expected;
using plimsoll::NotDispatched;

constexpr int kMaxRequestsPerInput = 4;

// Known tokens get callers with scopes; "store-failure" is the store's
// internal error (marked `permission`, as caller_store.cc returns it).
class FuzzAuthenticator final : public plimsoll::daemon::Authenticator {
 public:
  Expected<plimsoll::daemon::Caller> Authenticate(
      std::optional<std::string_view> authorization) override {
    if (authorization == "Bearer runs-token") {
      return plimsoll::daemon::Caller{.name = "runner", .scopes = {"runs"}};
    }
    if (authorization == "Bearer admin-token") {
      return plimsoll::daemon::Caller{.name = "admin", .scopes = {"admin"}};
    }
    if (authorization == "Bearer store-failure") {
      return plimsoll::Refusal(NotDispatched::kPermission, ErrorCode::kInternal,
                               "The caller store could not be read.");
    }
    return plimsoll::Refusal(NotDispatched::kPermission, ErrorCode::kUnauthenticated,
                             "The bearer token is missing or unknown.");
  }
};

// No handler runs here: routes get an empty one. (Defining a coroutine in
// this file would also trip clang 14's "Cannot represent a difference across
// sections" with -fsanitize=fuzzer.)
const http::Handler kNeverCalled;

// The API route table of src/daemon/server/routes.cc (AddApiRoutes). Keep the
// two in step.
struct Daemon {
  Daemon() : log(null_stream), router(&authenticator, log) {
    const http::RouteOptions describe{.authenticate = true,
                                      .scope = plimsoll::auth::kScopeDescribe};
    const http::RouteOptions runs{
        .authenticate = true, .scope = plimsoll::auth::kScopeRuns, .json_body = true};
    const http::RouteOptions sessions{.authenticate = true,
                                      .scope = plimsoll::auth::kScopeSessions};
    const http::RouteOptions open{.authenticate = false};
    router.Add({http::Verb::get, "/v1/describe", describe, kNeverCalled});
    router.Add({http::Verb::post, "/v1/runs", runs, kNeverCalled});
    router.Add({http::Verb::post, "/v1/sessions", sessions, kNeverCalled});
    router.Add({http::Verb::post, "/v1/sessions/{id}/runs", sessions, kNeverCalled});
    router.Add({http::Verb::delete_, "/v1/sessions/{id}", sessions, kNeverCalled});
    router.Add({http::Verb::get, "/healthz", open, kNeverCalled});
    router.Add({http::Verb::get, "/readyz", open, kNeverCalled});
  }

  std::ostream null_stream{nullptr};
  plimsoll::daemon::Log log;
  FuzzAuthenticator authenticator;
  http::Router router;
  http::HttpLimits limits;
};

Daemon& TheDaemon() {
  static Daemon* daemon = new Daemon();
  return *daemon;
}

std::string Lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
  return out;
}

std::string_view TrimSpaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

// SPEC §3, read independently of request_id.cc.
std::string ExpectedEcho(const http::RequestHeader& header) {
  std::vector<std::string_view> values;
  for (const auto& field : header) {
    if (Lowercase(field.name_string()) == "plimsoll-request-id") values.push_back(field.value());
  }
  if (values.size() != 1 || values[0].size() != 32) return "";
  for (char c : values[0]) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return "";
  }
  return std::string(values[0]);
}

void CheckDecodersOfTheHeader(const http::RequestHeader& header) {
  // Path segments: joined again they are the path without its query and
  // leading slash.
  std::string_view target = header.target();
  std::string_view path = target.substr(0, target.find('?'));
  if (!path.empty() && path.front() == '/') path.remove_prefix(1);
  std::vector<std::string_view> segments = http::PathSegments(target);
  FUZZ_CHECK(!segments.empty(), "PathSegments returned nothing");
  std::string joined;
  for (size_t i = 0; i < segments.size(); ++i) {
    FUZZ_CHECK(segments[i].find('/') == std::string_view::npos, "a segment holds a slash");
    if (i > 0) joined += '/';
    joined += segments[i];
  }
  FUZZ_CHECK(joined == path, "PathSegments lost or added bytes of " + std::string(target));

  auto content_type = header.find(beast_http::field::content_type);
  if (content_type != header.end()) {
    std::string_view value = content_type->value();
    if (http::IsJsonContentType(value)) {
      FUZZ_CHECK(Lowercase(TrimSpaces(value.substr(0, value.find(';')))) == "application/json",
                 "IsJsonContentType accepted " + std::string(value));
    }
  }
}

// Frames `answer` as the session would, serialises it, and reads it back the
// way a client does.
void CheckFramedRefusal(const http::Answer& answer, const std::string& request_id, unsigned version,
                        bool keep_alive) {
  FUZZ_CHECK(answer.not_dispatched.has_value(),
             "an answer made before any handler has no nothing-ran mark: " + answer.body);
  FUZZ_CHECK(answer.status != http::HttpStatus::ok, "a refusal with status 200");

  Expected<plimsoll::ErrorAnswer> body = plimsoll::ParseErrorJson(answer.body);
  FUZZ_CHECK(body.ok(), "the refusal body is not an error answer: " + answer.body);
  FUZZ_CHECK(body->error.not_dispatched() == answer.not_dispatched,
             "the body's mark differs from the header's: " + answer.body);
  FUZZ_CHECK(body->request_id == request_id, "the body's request ID is wrong: " + answer.body);

  http::Answer copy = answer;
  http::Response response = http::FrameAnswer(std::move(copy), request_id, version, keep_alive);
  std::ostringstream wire;
  wire << response;
  std::string bytes = wire.str();

  beast_http::response_parser<beast_http::string_body> parser;
  parser.eager(true);
  beast::error_code error;
  size_t used = parser.put(asio::buffer(bytes), error);
  if (!error && !parser.is_done()) {
    used += parser.put(asio::buffer(bytes.data() + used, bytes.size() - used), error);
  }
  FUZZ_CHECK(
      !error && parser.is_done() && used == bytes.size(),
      "the framed answer does not parse as one HTTP response (" + error.message() + "):\n" + bytes);
  const auto& read = parser.get();
  FUZZ_CHECK(read.result() == answer.status, "the status changed in framing:\n" + bytes);
  FUZZ_CHECK(read.body() == answer.body, "the body changed in framing:\n" + bytes);
  FUZZ_CHECK(read[beast_http::field::content_type] == "application/json",
             "a refusal that is not application/json:\n" + bytes);
  FUZZ_CHECK(read.keep_alive() == keep_alive, "the Connection header is wrong:\n" + bytes);

  auto ids = read.equal_range(http::kRequestIdHeader);
  auto id_count = std::distance(ids.first, ids.second);
  if (request_id.empty()) {
    FUZZ_CHECK(id_count == 0, "a request ID was echoed although none was well-formed:\n" + bytes);
  } else {
    FUZZ_CHECK(id_count == 1 && ids.first->value() == request_id,
               "the request ID was not echoed exactly once:\n" + bytes);
  }
  auto marks = read.equal_range(http::kNotDispatchedHeader);
  FUZZ_CHECK(std::distance(marks.first, marks.second) == 1 &&
                 marks.first->value() == plimsoll::NotDispatchedName(*answer.not_dispatched),
             "Plimsoll-Not-Dispatched is missing or wrong:\n" + bytes);
}

// A read error: the answer the session would write, if any. Returns false
// (the connection closes after a transport refusal or when the peer left).
void RefuseRead(const beast::error_code& error, std::string_view phase,
                const std::string& request_id, unsigned version) {
  Daemon& daemon = TheDaemon();
  std::optional<http::Answer> refusal = http::TransportRefusal(
      error, /*timed_out=*/false, phase, daemon.limits, request_id, daemon.log);
  if (!refusal) return;
  FUZZ_CHECK(refusal->close_connection, "a transport refusal keeps the connection");
  CheckFramedRefusal(*refusal, request_id, version, /*keep_alive=*/false);
}

// Serves one request from the front of `input`; returns false when the
// connection would close.
bool ServeOne(std::string_view& input) {
  Daemon& daemon = TheDaemon();
  beast_http::request_parser<beast_http::string_body> parser;
  parser.header_limit(daemon.limits.max_header_bytes);
  parser.body_limit(static_cast<uint64_t>(daemon.limits.max_body_bytes));

  // The header: all of `input` is offered at once, as if it had arrived.
  beast::error_code error;
  size_t used = parser.put(asio::buffer(input.data(), input.size()), error);
  input.remove_prefix(used);
  if (error == beast_http::error::need_more) return false;  // the peer left mid-header
  if (error) {
    bool header_complete = error == beast_http::error::body_limit;
    std::string id = header_complete ? http::EchoableRequestId(parser.get().base()) : "";
    unsigned version = parser.get().version() == 10 ? 10 : 11;
    RefuseRead(error, "header", id, version);
    return false;
  }
  FUZZ_CHECK(parser.is_header_done(), "put() returned without error before the header's end");

  const auto& header = parser.get();
  std::string request_id = http::EchoableRequestId(header.base());
  FUZZ_CHECK(request_id == ExpectedEcho(header.base()),
             "EchoableRequestId disagrees with SPEC §3: got \"" + request_id + "\"");
  CheckDecodersOfTheHeader(header.base());
  unsigned version = header.version();

  auto admitted = daemon.router.Admit(header.base(), request_id);
  if (auto* refusal = std::get_if<http::Answer>(&admitted)) {
    bool keep_alive = header.keep_alive() && parser.is_done() && !refusal->close_connection;
    CheckFramedRefusal(*refusal, request_id, version, keep_alive);
    return keep_alive;
  }
  const http::Admitted& route = std::get<http::Admitted>(admitted);
  FUZZ_CHECK(route.route->method == header.method(), "admitted with the wrong method");
  FUZZ_CHECK(
      http::PathSegments(route.route->pattern).size() == http::PathSegments(header.target()).size(),
      "admitted to a route of another shape");
  FUZZ_CHECK(!route.route->options.authenticate || route.caller.has_value(),
             "an authenticated route admitted without a caller");
  if (route.route->options.json_body) {
    FUZZ_CHECK(http::IsJsonContentType(header[beast_http::field::content_type]),
               "a JSON route admitted another content type");
  }

  // The body.
  while (!parser.is_done()) {
    size_t more = parser.put(asio::buffer(input.data(), input.size()), error);
    input.remove_prefix(more);
    if (error == beast_http::error::need_more) {
      // All input was offered: nothing taken means the body is cut short
      // (the peer left mid-body, or would time out): nobody to answer.
      if (more == 0 || input.empty()) return false;
      error = {};
      continue;
    }
    if (error) {
      RefuseRead(error, "body", request_id, version);
      return false;
    }
    if (more == 0) return false;
  }

  if (route.route->pattern == "/v1/runs") {
    Expected<plimsoll::Request> request = plimsoll::fuzz::CheckRequestBody(header.body());
    if (!request.ok()) {
      http::Answer answer = http::ErrorAnswer(request.error(), request_id, daemon.log);
      CheckFramedRefusal(answer, request_id, version, header.keep_alive());
    }
  }
  return header.keep_alive();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  for (int i = 0; i < kMaxRequestsPerInput && !input.empty(); ++i) {
    if (!ServeOne(input)) break;
  }
  return 0;
}
