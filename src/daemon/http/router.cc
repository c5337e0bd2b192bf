#include "daemon/http/router.h"

#include <algorithm>
#include <cctype>
#include <iterator>

#include "base/ascii.h"
#include "auth/scope.h"
#include "daemon/http/errors_to_http.h"

namespace plimsoll::daemon::http {
namespace {

namespace beast_http = boost::beast::http;

using base::AsciiLower;
using base::TrimSpaces;

// Matches `segments` against `pattern`, collecting "{name}" parameters.
bool MatchPattern(std::string_view pattern, const std::vector<std::string_view>& segments,
                  std::vector<std::string>& params) {
  std::vector<std::string_view> expected = PathSegments(pattern);
  if (expected.size() != segments.size()) return false;
  std::vector<std::string> found;
  for (size_t i = 0; i < expected.size(); ++i) {
    bool parameter = expected[i].size() > 2 && expected[i].front() == '{';
    if (parameter) {
      if (segments[i].empty()) return false;
      found.emplace_back(segments[i]);
    } else if (expected[i] != segments[i]) {
      return false;
    }
  }
  params = std::move(found);
  return true;
}

Answer Refuse(HttpStatus status, ErrorCode code, NotDispatched reason, std::string message,
              std::string_view request_id, Log& log) {
  return ErrorAnswer(status, Refusal(reason, code, std::move(message)), request_id, log);
}

}  // namespace

std::vector<std::string_view> PathSegments(std::string_view target) {
  target = target.substr(0, target.find('?'));
  std::vector<std::string_view> segments;
  if (!target.empty() && target.front() == '/') target.remove_prefix(1);
  while (true) {
    size_t slash = target.find('/');
    segments.push_back(target.substr(0, slash));
    if (slash == std::string_view::npos) break;
    target.remove_prefix(slash + 1);
  }
  return segments;
}

bool IsJsonContentType(std::string_view content_type) {
  std::string_view media = TrimSpaces(content_type.substr(0, content_type.find(';')));
  if (AsciiLower(media) != "application/json") return false;
  size_t semicolon = content_type.find(';');
  if (semicolon == std::string_view::npos) return true;
  std::string_view rest = content_type.substr(semicolon + 1);
  while (!rest.empty()) {
    size_t next = rest.find(';');
    std::string_view parameter = TrimSpaces(rest.substr(0, next));
    size_t equals = parameter.find('=');
    if (equals != std::string_view::npos &&
        AsciiLower(TrimSpaces(parameter.substr(0, equals))) == "charset") {
      std::string value = AsciiLower(TrimSpaces(parameter.substr(equals + 1)));
      if (value != "utf-8" && value != "\"utf-8\"") return false;
    }
    if (next == std::string_view::npos) break;
    rest.remove_prefix(next + 1);
  }
  return true;
}

std::variant<Admitted, Answer> Router::Admit(const RequestHeader& header,
                                             std::string_view request_id) const {
  std::vector<std::string_view> segments = PathSegments(header.target());
  const Route* matched = nullptr;
  std::vector<std::string> params;
  std::string allowed;
  for (const Route& route : routes_) {
    std::vector<std::string> candidate;
    if (!MatchPattern(route.pattern, segments, candidate)) continue;
    if (route.method == header.method()) {
      matched = &route;
      params = std::move(candidate);
      break;
    }
    allowed += allowed.empty() ? "" : ", ";
    allowed += std::string(beast_http::to_string(route.method));
  }
  if (matched == nullptr && allowed.empty()) {
    return Refuse(HttpStatus::not_found, ErrorCode::kNotFound, NotDispatched::kRequest,
                  "There is no route " + std::string(header.target().substr(0, 200)) +
                      "; see api/openapi.yaml for the routes.",
                  request_id, log_);
  }
  if (matched == nullptr) {
    Answer answer =
        Refuse(HttpStatus::method_not_allowed, ErrorCode::kInvalidArgument, NotDispatched::kRequest,
               "This route does not accept " + std::string(header.method_string().substr(0, 20)) +
                   "; it accepts " + allowed + ".",
               request_id, log_);
    answer.headers.emplace_back("Allow", allowed);
    return answer;
  }

  std::optional<Caller> caller;
  if (auto refusal = Authenticate(*matched, header, request_id, caller)) return *refusal;

  if (matched->options.json_body) {
    auto content_type = header.find(beast_http::field::content_type);
    if (content_type == header.end() || !IsJsonContentType(content_type->value())) {
      return Refuse(
          HttpStatus::unsupported_media_type, ErrorCode::kInvalidArgument, NotDispatched::kRequest,
          "The body must be JSON: send Content-Type: application/json.", request_id, log_);
    }
  }
  return Admitted{matched, std::move(params), std::move(caller)};
}

std::optional<Answer> Router::Authenticate(const Route& route, const RequestHeader& header,
                                           std::string_view request_id,
                                           std::optional<Caller>& caller) const {
  if (!route.options.authenticate) return std::nullopt;
  auto [first, last] = header.equal_range(beast_http::field::authorization);
  auto count = std::distance(first, last);
  if (count > 1) {
    Answer answer =
        Refuse(HttpStatus::unauthorized, ErrorCode::kUnauthenticated, NotDispatched::kPermission,
               "Send exactly one Authorization header.", request_id, log_);
    answer.headers.emplace_back("WWW-Authenticate", "Bearer");
    return answer;
  }
  std::optional<std::string_view> value;
  if (count == 1) value = first->value();
  Expected<Caller> found = authenticator_ == nullptr
                               ? Expected<Caller>(Failure(ErrorCode::kInternal,
                                                          "A route authenticates but the router "
                                                          "has no authenticator."))
                               : authenticator_->Authenticate(value);
  if (!found.ok()) {
    Answer answer = ErrorAnswer(found.error(), request_id, log_);
    if (found.error().code() == ErrorCode::kUnauthenticated) {
      answer.headers.emplace_back("WWW-Authenticate", "Bearer");
    }
    return answer;
  }
  if (!route.options.scope.empty() && !auth::HasScope(*found, route.options.scope)) {
    return Refuse(HttpStatus::forbidden, ErrorCode::kPermissionDenied, NotDispatched::kPermission,
                  "This caller lacks the scope \"" + std::string(route.options.scope) + "\".",
                  request_id, log_);
  }
  caller = std::move(*found);
  return std::nullopt;
}

}  // namespace plimsoll::daemon::http
