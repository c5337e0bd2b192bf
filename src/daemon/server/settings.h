// plimsolld's settings: command-line flags over environment variables over
// defaults (docs/daemon.md lists them all).
//
//   --provider NAME          SANDBOX_PROVIDER       (default: disabled)
//   --min-isolation TIER     SANDBOX_MIN_ISOLATION  refuse to start below it
//   --listen ADDR:PORT       PLIMSOLL_LISTEN        (default 127.0.0.1:8470; port 0 = any)
//   --unix-socket PATH       PLIMSOLL_UNIX_SOCKET   (default: none)
//   --metrics-listen ADDR:PORT|off  PLIMSOLL_METRICS_LISTEN (default 127.0.0.1:8471)
//   --dev                    PLIMSOLL_DEV=1         no authentication, loopback only
//   --callers PATH           PLIMSOLL_CALLERS       the caller store (default: the store's
//                                                   default path, when that file exists)
//   --max-concurrent-runs N                         runs in flight, all callers (default: run
//   workers) PLIMSOLL_HARDENED=1                             (refused: not in this build yet)
//   --io-threads N, --run-workers N, --run-queue N,
//   --idle-timeout-ms, --header-timeout-ms, --body-timeout-ms,
//   --max-header-bytes, --max-body-bytes (<= 8 MiB), --drain-timeout-ms,
//   --evidence-budget-ms
//
// Parsing only reads and checks values; the rules that combine them (dev
// needs loopback, a real provider needs callers or --dev) are in
// CheckStartupRules so tests can probe each.
//
// Usage:
//   auto settings = ParseSettings(args, CurrentEnvironment());
//   for (const std::string& name : UnknownVariables(env)) log.Warning(...);
#ifndef PLIMSOLL_DAEMON_SERVER_SETTINGS_H_
#define PLIMSOLL_DAEMON_SERVER_SETTINGS_H_

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/http/session.h"
#include "plimsoll/error.h"
#include "plimsoll/tier.h"

namespace plimsoll::daemon {

using Environment = std::map<std::string, std::string>;

struct Settings {
  std::string provider = "disabled";
  std::optional<Tier> min_isolation;
  // "sha256:…": refuse to start unless the provider's environment (the guest
  // image or engine identity) is exactly this one.
  std::string pinned_environment;
  std::string listen = "127.0.0.1:8470";
  std::string unix_socket;                        // "" = none
  std::string metrics_listen = "127.0.0.1:8471";  // "off" = no metrics listener
  bool dev = false;
  // The caller store; "" = auth::DefaultCallerStorePath() when that file exists.
  std::string callers_path;
  // Runs admitted at once across all callers; 0 = run_workers.
  size_t max_concurrent_runs = 0;
  bool hardened = false;
  http::HttpLimits http;
  size_t io_threads = 2;
  size_t run_workers = 2;
  size_t run_queue = 64;
  std::chrono::milliseconds drain_timeout{30'000};
  std::chrono::milliseconds evidence_budget{30'000};

  bool show_help = false;  // --help: print `help` and exit 0
  std::string help;
};

// Parses `args` (args[0] is the program name) over `environment`.
// Errors are kInvalidArgument with a sentence naming the flag or variable.
Expected<Settings> ParseSettings(const std::vector<std::string>& args,
                                 const Environment& environment);

// PLIMSOLL_* and SANDBOX_* variables in `environment` that nothing in this
// build reads (a misspelt SANDBOX_MIN_ISOLATON must not pass silently).
std::vector<std::string> UnknownVariables(const Environment& environment);

// The rules that combine settings, checked before binding; every violation
// is listed at once. `has_callers` says whether a caller store opened with at
// least one active caller.
Status CheckStartupRules(const Settings& settings, bool has_callers);

// The process environment as a map.
Environment CurrentEnvironment();

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_SETTINGS_H_
