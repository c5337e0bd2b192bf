// GET /v1/describe: what this daemon runs and how strong its wall is, plus
// the evidence monitor's state (evidence_monitor.h) and the images it serves.
#include <nlohmann/json.hpp>

#include "auth/scope.h"
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

// Each image as `images` lists it: its evidence's tier (never above its
// provider's claim) and its monitor's verdict.
std::vector<ImageInfo> ListImages(const ApiServices& services) {
  std::vector<ImageInfo> out;
  for (const ServedImage& image : services.images) {
    Description description = image.sandbox.Describe();
    std::optional<Evidence> evidence = image.sandbox.evidence();
    ImageInfo info;
    info.name = image.name;
    info.is_default = &image == &services.images.front();
    info.environment = evidence && !evidence->environment.empty() ? evidence->environment
                                                                  : description.environment;
    if (evidence) {
      info.tier =
          CompareTiers(evidence->tier, description.tier) > 0 ? description.tier : evidence->tier;
    }
    info.confirmed = image.evidence_monitor.status().confirmed;
    info.contents = image.contents;
    out.push_back(std::move(info));
  }
  return out;
}

// The grant profiles this caller may name (SPEC §8): the broker's profiles
// that list the caller and for which it holds the scope. Names only.
std::vector<std::string> GrantProfilesFor(const ApiServices& services,
                                          const std::optional<Caller>& caller) {
  std::vector<std::string> names;
  if (services.broker == nullptr || !caller) return names;
  for (std::string& name : services.broker->ProfilesFor(caller->name)) {
    if (auth::HasScope(*caller, auth::GrantScope(name))) names.push_back(std::move(name));
  }
  return names;
}

}  // namespace

boost::asio::awaitable<http::Answer> HandleDescribe(ApiServices& services,
                                                    http::RequestContext& context) {
  // Describe() is cheap and side-effect free (provider.h), so it runs here.
  // The top-level fields are the default image's, as before several images.
  const ServedImage& main = services.images.front();
  ordered_json body = ordered_json::parse(
      DescriptionToJson(main.sandbox.Describe(), main.sandbox.evidence(), ListImages(services)));
  body["evidence_monitor"] = EvidenceMonitorJson(main.evidence_monitor.status());
  // Grants are served when the provider can and the daemon has a broker.
  body["capabilities"]["grants"] =
      body["capabilities"]["grants"].get<bool>() && services.broker != nullptr;
  body["grant_profiles"] = GrantProfilesFor(services, context.caller);
  co_return http::JsonAnswer(http::HttpStatus::ok,
                             body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace plimsoll::daemon
