// GET /healthz (liveness) and GET /readyz (readiness: not draining, the
// provider's cheap preflight passes, the current evidence passed its checks,
// and the evidence monitor has not seen it fall below the startup tier).
#include <nlohmann/json.hpp>

#include "daemon/http/errors_to_http.h"
#include "daemon/server/handlers.h"

namespace plimsoll::daemon {
namespace {

http::Answer NotReady(ApiServices& services, const http::RequestContext& context,
                      std::string message) {
  return http::ErrorAnswer(http::HttpStatus::service_unavailable,
                           Failure(ErrorCode::kFailedPrecondition, std::move(message)),
                           context.request_id, services.log);
}

}  // namespace

boost::asio::awaitable<http::Answer> HandleHealthz(http::RequestContext& /*context*/) {
  co_return http::JsonAnswer(http::HttpStatus::ok, R"({"status":"ok"})");
}

boost::asio::awaitable<http::Answer> HandleReadyz(ApiServices& services,
                                                  http::RequestContext& context) {
  if (services.draining.load()) co_return NotReady(services, context, "The daemon is draining.");
  // Preflight is cheap and starts no sandbox (provider.h), so it runs here.
  Status preflight = services.sandbox.provider().Preflight();
  if (!preflight.ok()) {
    co_return NotReady(services, context,
                       "The provider's preflight fails: " + preflight.error().message());
  }
  std::optional<Evidence> evidence = services.sandbox.evidence();
  if (!evidence || !evidence->AllChecksPassed()) {
    co_return NotReady(services, context, "The provider's sandbox is not confirmed.");
  }
  EvidenceStatus monitored = services.evidence_monitor.status();
  if (!monitored.confirmed) {
    co_return NotReady(services, context,
                       "The sandbox's evidence is below the " +
                           std::string(TierName(monitored.startup_tier)) +
                           " tier proven at startup: " + monitored.lost_reason + ".");
  }
  nlohmann::ordered_json body = {{"status", "ready"},
                                 {"provider", services.sandbox.provider().name()},
                                 {"tier", TierName(evidence->tier)}};
  co_return http::JsonAnswer(http::HttpStatus::ok, body.dump());
}

}  // namespace plimsoll::daemon
