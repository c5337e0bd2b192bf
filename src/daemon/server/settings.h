// plimsolld's settings: command-line flags over environment variables over
// defaults (docs/daemon.md lists them all).
//
//   --provider NAME          SANDBOX_PROVIDER       (default: disabled)
//   --image NAME=PATH        PLIMSOLL_IMAGES        an image to serve, repeatable (the
//                            (NAME=PATH,...)        first is the default; at most 16;
//                                                   default: the provider's own, "default")
//   --min-isolation TIER     SANDBOX_MIN_ISOLATION  refuse to start below it
//   --listen ADDR:PORT       PLIMSOLL_LISTEN        (default 127.0.0.1:8470; port 0 = any)
//   --unix-socket PATH       PLIMSOLL_UNIX_SOCKET   (default: none)
//   --unix-socket-mode OCTAL PLIMSOLL_UNIX_SOCKET_MODE (default 0600; owner rw required)
//   --max-connections N, --max-connections-per-peer N  caps on open connections per
//                                                   listener (1024, 128; per-peer <= global)
//   --metrics-listen ADDR:PORT|off  PLIMSOLL_METRICS_LISTEN (default 127.0.0.1:8471)
//   --dev                    PLIMSOLL_DEV=1         no authentication, loopback only
//   --callers PATH           PLIMSOLL_CALLERS       the caller store (default: the store's
//                                                   default path, when that file exists)
//   --max-concurrent-runs N                         runs in flight, all callers (default: run
//                                                   workers)
//   --tls-cert PATH          PLIMSOLL_TLS_CERT      TLS on the TCP listeners (http/tls.h); both
//   --tls-key PATH           PLIMSOLL_TLS_KEY       or neither (a loopback metrics listener
//                                                   stays plaintext)
//                            PLIMSOLL_HARDENED=1    refuse to start without every production
//                                                   safeguard (hardened.h)
//   --memory-mb, --cpus-millis, --pids, --tmp-mb, --work-mb, --output-cap-kb,
//   --[max-]snippet-timeout-ms, --[max-]project-timeout-ms   per-run limits
//                                                   (run_limit_settings.h)
//   --io-threads N, --run-workers N, --run-queue N,
//   --idle-timeout-ms, --header-timeout-ms, --body-timeout-ms,
//   --max-header-bytes, --max-body-bytes (<= 8 MiB), --drain-timeout-ms,
//   --evidence-budget-ms
//   --run-ceiling-ms N       PLIMSOLL_RUN_CEILING_MS      hard ceiling on any run (default
//                                                         300000; 1000..86400000)
//   --evidence-interval-ms N PLIMSOLL_EVIDENCE_INTERVAL_MS evidence re-check period (default
//                                                         60000; 0 = off; else >= 1000)
//   --audit-log PATH         PLIMSOLL_AUDIT_LOG           audit lines to this file (default: the
//                                                         operator log, marked "audit")
//   --grants PATH            PLIMSOLL_GRANTS              the grants file (SPEC §8,
//                                                         docs/grants.md; default: none, and a
//                                                         run naming a grant profile is refused)
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

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "daemon/http/connection.h"
#include "daemon/server/run_limit_settings.h"
#include "plimsoll/error.h"
#include "plimsoll/tier.h"

namespace plimsoll::daemon {

using Environment = std::map<std::string, std::string>;

// One image to serve (SPEC §7): --image NAME=PATH.
struct ImageSetting {
  std::string name;       // IsWellFormedImageName
  std::string directory;  // an image directory (docs/guest-images.md)
  friend bool operator==(const ImageSetting&, const ImageSetting&) = default;
};

// At most this many --image flags: each image is a sandbox with its own
// evidence monitor thread, warm pool and startup smoke test.
inline constexpr size_t kMaxImages = 16;

struct Settings {
  std::string provider = "disabled";
  // The images served, the default first; names distinct. Empty: the
  // provider's default image, served under the name "default".
  std::vector<ImageSetting> images;
  std::optional<Tier> min_isolation;
  // "sha256:…": refuse to start unless the provider's environment (the guest
  // image or engine identity) is exactly this one.
  std::string pinned_environment;
  std::string listen = "127.0.0.1:8470";
  std::string unix_socket;         // "" = none
  mode_t unix_socket_mode = 0600;  // the socket file's mode
  // Caps on open connections of each listener (http/connection_limiter.h);
  // the per-peer one is at most the global one.
  size_t max_connections = 1024;
  size_t max_connections_per_peer = 128;
  std::string metrics_listen = "127.0.0.1:8471";  // "off" = no metrics listener
  bool dev = false;
  // The caller store; "" = auth::DefaultCallerStorePath() when that file exists.
  std::string callers_path;
  // Runs admitted at once across all callers; 0 = run_workers.
  size_t max_concurrent_runs = 0;
  // Open sessions (SPEC §9): in the daemon, of one caller, of one owner
  // (at the owner cap its least-recently-used idle session is `replaced`);
  // per owner <= per caller <= total.
  size_t max_sessions = 256;
  size_t max_sessions_per_caller = 16;
  size_t max_sessions_per_owner = 4;
  bool hardened = false;
  // TLS on the TCP listeners: both paths or neither (http/tls.h).
  std::string tls_cert;
  std::string tls_key;
  // Per-run limits given explicitly; unset ones keep the Limits{} defaults.
  RunLimitSettings run_limits;
  http::HttpLimits http;
  size_t io_threads = 2;
  size_t run_workers = 2;
  size_t run_queue = 64;
  std::chrono::milliseconds drain_timeout{30'000};
  std::chrono::milliseconds evidence_budget{30'000};
  // SPEC §4's hard ceiling on any run: a timeout above it is refused
  // `request` (it becomes Limits::run_ceiling_ms), and a run whose provider
  // has not returned by its deadline plus run_grace is answered
  // deadline_exceeded by the daemon.
  std::chrono::milliseconds run_ceiling{300'000};
  std::chrono::milliseconds run_grace{5'000};  // no flag: tests shorten it
  // How often the evidence monitor re-checks the sandbox; 0 = never.
  std::chrono::milliseconds evidence_interval{60'000};
  std::string audit_log;    // "" = audit lines go to the operator log
  std::string grants_path;  // "" = no grants: the broker is off

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
// least one active caller. Hardened mode's own rules are in hardened.h.
Status CheckStartupRules(const Settings& settings, bool has_callers);

// The process environment as a map.
Environment CurrentEnvironment();

}  // namespace plimsoll::daemon

#endif  // PLIMSOLL_DAEMON_SERVER_SETTINGS_H_
