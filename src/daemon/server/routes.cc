// The route tables of the API and metrics listeners (handlers.h lists them).
#include "auth/scope.h"
#include "daemon/server/handlers.h"

namespace plimsoll::daemon {

void AddApiRoutes(http::Router& router, ApiServices& services) {
  using http::Verb;
  auto bind = [&services](auto handler) {
    return
        [&services, handler](http::RequestContext& context) { return handler(services, context); };
  };
  const http::RouteOptions describe{
      .authenticate = true, .scope = auth::kScopeDescribe, .json_body = false};
  const http::RouteOptions runs{.authenticate = true, .scope = auth::kScopeRuns, .json_body = true};
  const http::RouteOptions sessions{
      .authenticate = true, .scope = auth::kScopeSessions, .json_body = true};
  const http::RouteOptions session_reads{
      .authenticate = true, .scope = auth::kScopeSessions, .json_body = false};
  const http::RouteOptions open{.authenticate = false, .scope = {}, .json_body = false};
  router.Add({Verb::get, "/v1/describe", describe, bind(HandleDescribe)});
  router.Add({Verb::post, "/v1/runs", runs, bind(HandleRun)});
  router.Add({Verb::post, "/v1/sessions", sessions, bind(HandleSessionOpen)});
  router.Add({Verb::post, "/v1/sessions/{id}/runs", sessions, bind(HandleSessionRun)});
  router.Add({Verb::get, "/v1/sessions/{id}", session_reads, bind(HandleSessionState)});
  router.Add({Verb::delete_, "/v1/sessions/{id}", session_reads, bind(HandleSessionClose)});
  router.Add({Verb::get, "/healthz", open, HandleHealthz});
  router.Add({Verb::get, "/readyz", open, bind(HandleReadyz)});
}

void AddMetricsRoutes(http::Router& router, Metrics& metrics) {
  const http::RouteOptions open{.authenticate = false, .scope = {}, .json_body = false};
  router.Add({http::Verb::get, "/metrics", open,
              [&metrics](http::RequestContext&) -> boost::asio::awaitable<http::Answer> {
                http::Answer answer = http::JsonAnswer(http::HttpStatus::ok, metrics.Render());
                answer.content_type = std::string(http::kPrometheusContentType);
                co_return answer;
              }});
}

}  // namespace plimsoll::daemon
