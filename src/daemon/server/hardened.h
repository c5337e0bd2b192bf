// Hardened mode (PLIMSOLL_HARDENED=1, SPEC §4): plimsolld refuses to start
// unless every production safeguard is in place, and names every missing one
// at once, so an operator fixes them in one pass.
//
// HardenedViolations is a pure function of the settings and of facts found at
// startup. Each violation is one sentence that names the setting to change.
// The rules:
//   1. tier: kernel or vm, proven by the startup evidence. DaemonMain asks
//      twice: before anything is bound, with the provider's claim (evidence
//      never proves more than the claim, so a provider that cannot claim
//      kernel is refused before any smoke test), and again after the startup
//      evidence, with the tier it proved.
//   2. authentication by the caller store only: no --dev, and a store with
//      at least one active caller.
//   3. TLS (--tls-cert, --tls-key) on every TCP listener that is not on
//      loopback: the API and the metrics listener. The Unix socket is local
//      and exempt.
//   4. a pinned environment identity (--pin-environment).
//   5. explicit per-run resource limits (run_limit_settings.h): memory, CPU,
//      pids, both tmpfs sizes, the output cap and both maximum timeouts.
//   6. every active caller has a concurrency limit and a rate limit, and its
//      concurrency limit is at most the global --max-concurrent-runs (a
//      caller's own limit above the global one limits nothing).
//   7. session caps when sessions are on. Sessions (SPEC §9) are not built
//      yet, so no daemon has them on and this rule is vacuous today; it is
//      written now so that turning sessions on cannot forget it.
//
// Usage (daemon_main.cc):
//   HardenedFacts facts{.tier = sandbox.Describe().tier, .caller_store = true, ...};
//   std::vector<std::string> violations = HardenedViolations(settings, facts);
//   if (!violations.empty()) { log.Error(HardenedReport(violations)); return 2; }
#ifndef PLIMSOLL_DAEMON_SERVER_HARDENED_H_
#define PLIMSOLL_DAEMON_SERVER_HARDENED_H_

#include <string>
#include <vector>

#include "auth/caller.h"
#include "daemon/server/settings.h"
#include "plimsoll/tier.h"

namespace plimsoll::daemon {

inline constexpr Tier kHardenedMinimumTier = Tier::kKernel;

struct HardenedFacts {
  // Before the startup evidence: the provider's claim (Description::tier);
  // after it: the tier the evidence proved.
  Tier tier = Tier::kUnknown;
  bool tier_proven = false;
  // Requests are authenticated against the caller store, which has at least
  // one active caller (false with --dev, or with no store / no active caller).
  bool caller_store = false;
  // The store's callers that can authenticate (revoked ones cannot).
  std::vector<auth::Caller> active_callers{};
  // Sessions do not exist yet (SPEC §9): both stay false today.
  bool sessions_enabled = false;
  bool session_caps_set = false;
};

// Every rule `settings` and `facts` break, in the order of the rules above;
// empty when hardened mode may start. Pure; thread-safe.
std::vector<std::string> HardenedViolations(const Settings& settings, const HardenedFacts& facts);

// The TCP listeners that would carry cleartext beyond this machine: not on
// loopback and without TLS. Each entry is the flag and its value, e.g.
// "--listen 0.0.0.0:8470". Outside hardened mode plimsolld warns about each.
std::vector<std::string> CleartextListeners(const Settings& settings);

// The whole refusal: a first line, then one "  - sentence" line per violation.
std::string HardenedReport(const std::vector<std::string>& violations);

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_HARDENED_H_
