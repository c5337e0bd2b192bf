// The route table of one listener, and everything decided from a request's
// header alone: which route, which caller, whether the body's type is right.
//
// Order of checks (each refusal carries the mark `request`, or `permission`
// for authentication): route (unknown path 404 not_found; known path, wrong
// method 405 with Allow) -> authentication (routes that need it: one
// Authorization header at most, Authenticator decides; 401/403) -> content
// type (routes with a JSON body: application/json, charset utf-8 if given;
// 415). The body is read only after all of these pass, so an unauthenticated
// client cannot make the daemon read 8 MiB.
//
// Query strings are ignored. Path parameters ("{id}") match one non-empty
// segment.
//
// Thread-safety: Add() before serving; Admit() and the handlers from any
// thread afterwards.
//
// Usage:
//   Router router(&authenticator, log);
//   router.Add({verb::get, "/v1/describe", {.scope = kScopeDescribe}, DescribeHandler});
//   auto admitted = router.Admit(parser.get().base(), request_id);
#ifndef PLIMSOLL_DAEMON_HTTP_ROUTER_H_
#define PLIMSOLL_DAEMON_HTTP_ROUTER_H_

#include <boost/asio/awaitable.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/verb.hpp>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "daemon/authenticator.h"
#include "daemon/http/answer.h"
#include "daemon/log.h"

namespace plimsoll::daemon::http {

using Verb = boost::beast::http::verb;
using RequestHeader = boost::beast::http::request_header<>;

// What a handler sees of one request.
struct RequestContext {
  std::vector<std::string> path_params;  // in pattern order
  std::string body;
  std::string request_id;        // the echoable ID, "" when none
  std::optional<Caller> caller;  // set on routes that authenticate
};

using Handler = std::function<boost::asio::awaitable<Answer>(RequestContext&)>;

struct RouteOptions {
  bool authenticate = true;
  std::string_view scope;  // needed when authenticating; "" = any caller
  bool json_body = false;  // require Content-Type: application/json
};

struct Route {
  Verb method;
  std::string pattern;  // "/v1/sessions/{id}/runs"
  RouteOptions options;
  Handler handler;
};

// A request admitted to a route; the body is still to be read.
struct Admitted {
  const Route* route;
  std::vector<std::string> path_params;
  std::optional<Caller> caller;
};

class Router {
 public:
  // `authenticator` may be null only when no route authenticates. Both
  // arguments must outlive the router.
  Router(Authenticator* authenticator, Log& log) : authenticator_(authenticator), log_(log) {}

  void Add(Route route) { routes_.push_back(std::move(route)); }

  // Either the route to run, or the refusal answer (with the mark).
  std::variant<Admitted, Answer> Admit(const RequestHeader& header,
                                       std::string_view request_id) const;

 private:
  std::optional<Answer> Authenticate(const Route& route, const RequestHeader& header,
                                     std::string_view request_id,
                                     std::optional<Caller>& caller) const;

  Authenticator* authenticator_;
  Log& log_;
  std::vector<Route> routes_;
};

// Splits a request target into path segments, dropping the query string.
// "/v1/sessions/ab/runs?x" -> {"v1", "sessions", "ab", "runs"}.
std::vector<std::string_view> PathSegments(std::string_view target);

// Whether a Content-Type value is JSON in UTF-8: media type application/json
// (case-insensitive), and a charset parameter, if any, of utf-8.
bool IsJsonContentType(std::string_view content_type);

}  // namespace plimsoll::daemon::http

#endif  // PLIMSOLL_DAEMON_HTTP_ROUTER_H_
