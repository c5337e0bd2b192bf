#include "daemon/http/framing.h"

#include <boost/asio/error.hpp>
#include <boost/beast/http/error.hpp>
#include <string>

#include "daemon/http/errors_to_http.h"
#include "daemon/http/request_id.h"

namespace plimsoll::daemon::http {
namespace {

namespace beast_http = boost::beast::http;

Answer Refuse(HttpStatus status, std::string message, std::string_view request_id, Log& log) {
  Answer answer = ErrorAnswer(
      status, Refusal(NotDispatched::kRequest, ErrorCode::kInvalidArgument, std::move(message)),
      request_id, log);
  answer.close_connection = true;
  return answer;
}

bool PeerWentAway(const boost::system::error_code& error) {
  return error == beast_http::error::end_of_stream || error == beast_http::error::partial_message ||
         error == boost::asio::error::eof || error == boost::asio::error::connection_reset ||
         error == boost::asio::error::broken_pipe || error == boost::asio::error::not_connected ||
         error == boost::asio::error::bad_descriptor;
}

}  // namespace

Response FrameAnswer(Answer answer, std::string_view request_id, unsigned http_version,
                     bool keep_alive) {
  Response response{answer.status, http_version};
  response.set(beast_http::field::server, "plimsolld");
  response.set(beast_http::field::content_type, answer.content_type);
  response.set(beast_http::field::cache_control, "no-store");
  if (!request_id.empty()) response.set(kRequestIdHeader, request_id);
  if (answer.not_dispatched) {
    response.set(kNotDispatchedHeader, NotDispatchedName(*answer.not_dispatched));
  }
  for (auto& [name, value] : answer.headers) response.insert(name, value);
  response.body() = std::move(answer.body);
  response.keep_alive(keep_alive);
  response.prepare_payload();
  return response;
}

std::optional<Answer> TransportRefusal(const boost::system::error_code& error, bool timed_out,
                                       std::string_view phase, const HttpLimits& limits,
                                       std::string_view request_id, Log& log) {
  if (timed_out) {
    auto budget = phase == "header" ? limits.header_timeout : limits.body_timeout;
    return Refuse(HttpStatus::request_timeout,
                  "The request's " + std::string(phase) + " did not arrive within " +
                      std::to_string(budget.count()) + " ms.",
                  request_id, log);
  }
  if (PeerWentAway(error) || error == boost::asio::error::operation_aborted) return std::nullopt;
  if (error == beast_http::error::header_limit) {
    return Refuse(
        HttpStatus::request_header_fields_too_large,
        "The request header is larger than " + std::to_string(limits.max_header_bytes) + " bytes.",
        request_id, log);
  }
  if (error == beast_http::error::body_limit) {
    return Refuse(
        HttpStatus::payload_too_large,
        "The request body is larger than " + std::to_string(limits.max_body_bytes) + " bytes.",
        request_id, log);
  }
  if (error.category() == beast_http::make_error_code(beast_http::error::bad_method).category()) {
    return Refuse(HttpStatus::bad_request,
                  "The request is not well-formed HTTP/1.1 (" + error.message() + ").", request_id,
                  log);
  }
  return std::nullopt;
}

}  // namespace plimsoll::daemon::http
