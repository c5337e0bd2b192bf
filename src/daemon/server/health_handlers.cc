// GET /healthz (liveness) and GET /readyz (readiness: not draining, the
// provider's cheap preflight passes, the current evidence passed its checks,
// and the evidence monitor has not seen it fall below the startup tier).
//
// Neither blocks an event-loop thread: /healthz touches nothing, and /readyz
// awaits the preflight on the ReadinessProbe's own thread (coalesced, fresh
// within a second, bounded; readiness_probe.h); the rest is short locks
// around copies. /readyz needs no authentication, so what went wrong stays
// in the operator log under an error ID: the answer names only which check
// failed.
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

// Not ready for a reason whose detail holds provider or console text.
http::Answer NotReadyWithDetail(ApiServices& services, const http::RequestContext& context,
                                std::string summary, std::string detail) {
  return http::SummarisedErrorAnswer(http::HttpStatus::service_unavailable,
                                     Failure(ErrorCode::kFailedPrecondition, std::move(detail)),
                                     summary, context.request_id, services.log);
}

}  // namespace

boost::asio::awaitable<http::Answer> HandleHealthz(http::RequestContext& /*context*/) {
  co_return http::JsonAnswer(http::HttpStatus::ok, R"({"status":"ok"})");
}

boost::asio::awaitable<http::Answer> HandleReadyz(ApiServices& services,
                                                  http::RequestContext& context) {
  if (services.draining.load()) co_return NotReady(services, context, "The daemon is draining.");
  Status preflight = co_await services.readiness.Check();
  if (!preflight.ok()) {
    co_return NotReadyWithDetail(
        services, context, "The provider's preflight does not pass.",
        "/readyz: the provider's preflight: " + preflight.error().message());
  }
  // Ready when every image's sandbox is confirmed: a request may name any.
  std::optional<Evidence> main_evidence;
  for (const ServedImage& image : services.images) {
    const std::string which =
        services.images.size() > 1 ? " of the image \"" + image.name + "\"" : std::string();
    std::optional<Evidence> evidence = image.sandbox.evidence();
    if (!evidence || !evidence->AllChecksPassed()) {
      co_return NotReady(services, context,
                         "The provider's sandbox" + which + " is not confirmed.");
    }
    EvidenceStatus monitored = image.evidence_monitor.status();
    if (!monitored.confirmed) {
      co_return NotReadyWithDetail(
          services, context,
          "The sandbox's evidence" + which + " is below the " +
              std::string(TierName(monitored.startup_tier)) + " tier proven at startup.",
          "/readyz: the evidence" + which + " fell: " + monitored.lost_reason);
    }
    if (!main_evidence) main_evidence = std::move(evidence);
  }
  nlohmann::ordered_json body = {{"status", "ready"},
                                 {"provider", services.images.front().sandbox.provider().name()},
                                 {"tier", TierName(main_evidence->tier)}};
  co_return http::JsonAnswer(http::HttpStatus::ok, body.dump());
}

}  // namespace plimsoll::daemon
