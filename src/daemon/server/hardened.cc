#include "daemon/server/hardened.h"

#include "daemon/http/listener.h"
#include "daemon/server/run_limit_settings.h"

namespace plimsoll::daemon {
namespace {

bool IsLoopback(const std::string& address) {
  auto endpoint = http::ParseListenAddress(address);
  return endpoint.ok() && endpoint->address().is_loopback();
}

std::string JoinFlags(const std::vector<std::string>& flags) {
  std::string text;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (i > 0) text += (i + 1 == flags.size()) ? " and " : ", ";
    text += flags[i];
  }
  return text;
}

void CheckTier(const Settings& settings, const HardenedFacts& facts,
               std::vector<std::string>& violations) {
  if (MeetsFloor(facts.tier, kHardenedMinimumTier)) return;
  std::string tier(TierName(facts.tier));
  std::string needs =
      "hardened mode needs tier kernel or vm proven at startup; choose a provider "
      "that reaches it with --provider / SANDBOX_PROVIDER (oci with runsc, or "
      "microvm)";
  if (facts.tier_proven) {
    violations.push_back("The startup evidence of the " + settings.provider +
                         " provider proved tier " + tier + ", but " + needs + ".");
  } else {
    violations.push_back("The " + settings.provider + " provider can prove at most tier " + tier +
                         ", but " + needs + ".");
  }
}

void CheckAuthentication(const Settings& settings, const HardenedFacts& facts,
                         std::vector<std::string>& violations) {
  if (settings.dev) {
    violations.push_back(
        "--dev (PLIMSOLL_DEV) turns authentication off; hardened mode authenticates every "
        "request against the caller store: remove --dev.");
  }
  if (!facts.caller_store) {
    violations.push_back(
        "No caller store with an active caller is loaded; hardened mode needs one: create a "
        "caller (plimsoll callers create NAME --max-concurrent N --rate-per-min N) and name "
        "the store with --callers / PLIMSOLL_CALLERS.");
  }
}

void CheckTls(const Settings& settings, std::vector<std::string>& violations) {
  for (const std::string& listener : CleartextListeners(settings)) {
    violations.push_back(listener +
                         " is not a loopback address and TLS is off; hardened mode needs TLS on "
                         "every non-loopback listener: set --tls-cert and --tls-key "
                         "(PLIMSOLL_TLS_CERT, PLIMSOLL_TLS_KEY) or listen on loopback.");
  }
}

void CheckPinnedEnvironment(const Settings& settings, std::vector<std::string>& violations) {
  if (!settings.pinned_environment.empty()) return;
  violations.push_back(
      "No environment identity is pinned; hardened mode runs only a known guest image or "
      "engine build: set --pin-environment / PLIMSOLL_PIN_ENVIRONMENT to the sha256:… "
      "identity that `plimsoll describe` or GET /v1/describe shows.");
}

void CheckExplicitLimits(const Settings& settings, std::vector<std::string>& violations) {
  std::vector<std::string> unset = UnsetResourceLimitFlags(settings.run_limits);
  if (unset.empty()) return;
  violations.push_back(
      "Per-run resource limits are not all explicit; hardened mode does not run "
      "on this build's defaults: set " +
      JoinFlags(unset) + ".");
}

void CheckCallerLimits(const Settings& settings, const HardenedFacts& facts,
                       std::vector<std::string>& violations) {
  int64_t global = static_cast<int64_t>(
      settings.max_concurrent_runs > 0 ? settings.max_concurrent_runs : settings.run_workers);
  for (const auth::Caller& caller : facts.active_callers) {
    std::vector<std::string> missing;
    if (!caller.max_concurrent) missing.emplace_back("--max-concurrent");
    if (!caller.rate_per_min) missing.emplace_back("--rate-per-min");
    if (!missing.empty()) {
      violations.push_back("The caller \"" + caller.name + "\" has no " +
                           (caller.max_concurrent ? std::string("rate limit")
                            : caller.rate_per_min ? std::string("concurrency limit")
                                                  : std::string("concurrency or rate limit")) +
                           "; hardened mode needs both on every caller: revoke it and create it "
                           "again with " +
                           JoinFlags(missing) + " (plimsoll callers).");
    }
    if (caller.max_concurrent && *caller.max_concurrent > global) {
      violations.push_back(
          "The caller \"" + caller.name + "\" may run " + std::to_string(*caller.max_concurrent) +
          " at once, more than the global --max-concurrent-runs (" + std::to_string(global) +
          "); hardened mode needs every caller's limit within the global one: "
          "lower the caller's --max-concurrent or raise --max-concurrent-runs.");
    }
  }
}

void CheckSessions(const HardenedFacts& facts, std::vector<std::string>& violations) {
  // The daemon's caps cannot be switched off (built in, or flags of at
  // least 1), so session_caps_set holds whenever sessions are on; the rule
  // stays so that a cap made optional later cannot be forgotten.
  if (!facts.sessions_enabled || facts.session_caps_set) return;
  violations.push_back(
      "Sessions are on without caps; hardened mode needs limits on session lifetime, idle time, "
      "disk and sessions per caller and per owner.");
}

}  // namespace

std::vector<std::string> HardenedViolations(const Settings& settings, const HardenedFacts& facts) {
  std::vector<std::string> violations;
  CheckTier(settings, facts, violations);
  CheckAuthentication(settings, facts, violations);
  CheckTls(settings, violations);
  CheckPinnedEnvironment(settings, violations);
  CheckExplicitLimits(settings, violations);
  CheckCallerLimits(settings, facts, violations);
  CheckSessions(facts, violations);
  return violations;
}

std::vector<std::string> CleartextListeners(const Settings& settings) {
  std::vector<std::string> cleartext;
  bool tls = !settings.tls_cert.empty();
  if (tls) return cleartext;
  if (!IsLoopback(settings.listen)) cleartext.push_back("--listen " + settings.listen);
  if (settings.metrics_listen != "off" && !IsLoopback(settings.metrics_listen)) {
    cleartext.push_back("--metrics-listen " + settings.metrics_listen);
  }
  return cleartext;
}

std::string HardenedReport(const std::vector<std::string>& violations) {
  std::string report = "plimsolld cannot start in hardened mode (PLIMSOLL_HARDENED=1): " +
                       std::to_string(violations.size()) + " safeguard(s) missing:";
  for (const std::string& violation : violations) report += "\n  - " + violation;
  return report;
}

}  // namespace plimsoll::daemon
