// GET /v1/describe: what this daemon runs and how strong its wall is, plus
// the evidence monitor's state (evidence_monitor.h).
#include <nlohmann/json.hpp>

#include "daemon/server/handlers.h"
#include "plimsoll/wire.h"

namespace plimsoll::daemon {
namespace {

using nlohmann::ordered_json;

int64_t UnixMilliseconds(EvidenceStatus::TimePoint time) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count();
}

// api/openapi.yaml, EvidenceMonitor.
ordered_json EvidenceMonitorJson(const EvidenceStatus& status) {
  ordered_json out = ordered_json::object();
  out["interval_ms"] = status.interval.count();
  out["startup_tier"] = TierName(status.startup_tier);
  out["current_tier"] = TierName(status.current_tier);
  out["confirmed"] = status.confirmed;
  out["last_result"] = status.last_result ? EvidenceCheckResultName(*status.last_result)
                                          : std::string_view("startup");
  out["last_check_unix_ms"] = UnixMilliseconds(status.last_check);
  out["last_confirmed_unix_ms"] =
      status.last_confirmed ? ordered_json(UnixMilliseconds(*status.last_confirmed)) : nullptr;
  out["checks"] = status.checks;
  out["lost_reason"] = status.lost_reason;
  return out;
}

}  // namespace

boost::asio::awaitable<http::Answer> HandleDescribe(ApiServices& services,
                                                    http::RequestContext& /*context*/) {
  // Describe() is cheap and side-effect free (provider.h), so it runs here.
  ordered_json body = ordered_json::parse(
      DescriptionToJson(services.sandbox.Describe(), services.sandbox.evidence()));
  body["evidence_monitor"] = EvidenceMonitorJson(services.evidence_monitor.status());
  co_return http::JsonAnswer(http::HttpStatus::ok,
                             body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace plimsoll::daemon
