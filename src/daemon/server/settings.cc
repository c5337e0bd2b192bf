#include "daemon/server/settings.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <string_view>

#include "daemon/http/listener.h"
#include "plimsoll/request.h"

extern char** environ;  // NOLINT: POSIX

namespace plimsoll::daemon {
namespace {

// Every PLIMSOLL_* / SANDBOX_* variable this build reads, in any component.
constexpr std::array<std::string_view, 40> kKnownVariables = {
    "SANDBOX_PROVIDER",
    "SANDBOX_LINUX_POOL_SIZE",  // the linux provider (docs/linux-provider.md)
    "SANDBOX_OCI_RUNTIME",      // the oci provider (docs/oci-provider.md)
    "SANDBOX_OCI_POOL_SIZE",
    "SANDBOX_OCI_RUNTIME_BINARY",
    "SANDBOX_OCI_RUNSC_PLATFORM",
    "SANDBOX_OCI_STATE_DIR",
    "SANDBOX_MICROVM_ACCEL",  // the microvm provider (docs/microvm.md)
    "SANDBOX_MICROVM_POOL_SIZE",
    "SANDBOX_MICROVM_STATE_DIR",
    "SANDBOX_MICROVM_JAIL_UID_BASE",
    "PLIMSOLL_MICROVM_DIR",
    "PLIMSOLL_MICROVM_JAILER",
    "PLIMSOLL_MICROVM_STRICT_PIN",
    "SANDBOX_MIN_ISOLATION",
    "PLIMSOLL_LISTEN",
    "PLIMSOLL_UNIX_SOCKET",
    "PLIMSOLL_UNIX_SOCKET_MODE",
    "PLIMSOLL_METRICS_LISTEN",
    "PLIMSOLL_DEV",
    "PLIMSOLL_HARDENED",
    "PLIMSOLL_IMAGE",
    "PLIMSOLL_IMAGES",
    "PLIMSOLL_CACHE",
    "PLIMSOLL_SECCOMP_POLICY",
    "PLIMSOLL_BENCH_RUNS",
    "PLIMSOLL_BENCH_WARMUP",
    "PLIMSOLL_CONFORMANCE_PROVIDERS",
    "PLIMSOLL_HOSTILE",
    "PLIMSOLL_HOSTILE_DUMP",
    "PLIMSOLL_HOSTILE_PROVIDERS",
    "PLIMSOLL_CALLERS",
    "PLIMSOLL_PIN_ENVIRONMENT",
    "PLIMSOLL_RUN_CEILING_MS",
    "PLIMSOLL_EVIDENCE_INTERVAL_MS",
    "PLIMSOLL_AUDIT_LOG",
    "PLIMSOLL_GRANTS",
    "PLIMSOLL_TLS_CERT",
    "PLIMSOLL_TLS_KEY",
    "PLIMSOLL_TOKEN",  // the CLI's bearer token for --daemon (docs/cli.md)
};

constexpr int64_t kMinRunCeilingMs = 1'000;
constexpr int64_t kMinEvidenceIntervalMs = 1'000;
constexpr int64_t kMaxMilliseconds = 86'400'000;  // one day

Error Invalid(std::string message) {
  return Failure(ErrorCode::kInvalidArgument, std::move(message));
}

Expected<bool> ParseBoolean(std::string_view name, std::string_view value) {
  if (value == "1" || value == "true" || value == "yes") return true;
  if (value == "0" || value == "false" || value == "no" || value.empty()) return false;
  return Invalid(std::string(name) + " must be 1 or 0, not \"" + std::string(value) + "\".");
}

// A run ceiling from `name` (a flag or variable): kMinRunCeilingMs..one day.
Expected<std::chrono::milliseconds> CheckRunCeiling(std::string_view name, int64_t value) {
  if (value < kMinRunCeilingMs || value > kMaxMilliseconds) {
    return Invalid(std::string(name) + " must be between " + std::to_string(kMinRunCeilingMs) +
                   " and " + std::to_string(kMaxMilliseconds) + " milliseconds, not " +
                   std::to_string(value) + ".");
  }
  return std::chrono::milliseconds(value);
}

// An evidence interval from `name`: 0 (off) or kMinEvidenceIntervalMs..one day.
Expected<std::chrono::milliseconds> CheckEvidenceInterval(std::string_view name, int64_t value) {
  if (value != 0 && (value < kMinEvidenceIntervalMs || value > kMaxMilliseconds)) {
    return Invalid(std::string(name) + " must be 0 (no re-checks) or between " +
                   std::to_string(kMinEvidenceIntervalMs) + " and " +
                   std::to_string(kMaxMilliseconds) + " milliseconds, not " +
                   std::to_string(value) + ".");
  }
  return std::chrono::milliseconds(value);
}

// A whole number of milliseconds from the variable `name`.
Expected<int64_t> ParseMillisecondsVariable(std::string_view name, std::string_view value) {
  int64_t number = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), number);
  if (value.empty() || error != std::errc() || end != value.data() + value.size()) {
    return Invalid(std::string(name) + " must be a whole number of milliseconds, not \"" +
                   std::string(value.substr(0, 40)) + "\".");
  }
  return number;
}

// An octal file mode for the Unix socket: at most 0777, and rw for the
// owner (the daemon's user must be able to connect itself).
Expected<mode_t> ParseSocketMode(std::string_view name, std::string_view value) {
  unsigned mode = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), mode, 8);
  if (value.empty() || error != std::errc() || end != value.data() + value.size() || mode > 0777 ||
      (mode & 0600) != 0600) {
    return Invalid(std::string(name) +
                   " must be an octal mode from 0600 to 0777 that lets the owner read and "
                   "write (e.g. 0600 or 0660), not \"" +
                   std::string(value.substr(0, 40)) + "\".");
  }
  return static_cast<mode_t>(mode);
}

Expected<std::optional<Tier>> ParseFloor(std::string_view value) {
  if (value.empty()) return std::optional<Tier>();
  std::optional<Tier> tier = ParseTier(value);
  if (!tier || !IsRunnableTier(*tier)) {
    return Invalid("The minimum isolation \"" + std::string(value) +
                   "\" is not one of process, container, kernel, vm.");
  }
  return tier;
}

// "NAME=PATH" entries: each name an image name, given once; each path not
// empty; at most kMaxImages. `origin` names the flag or variable.
Expected<std::vector<ImageSetting>> ParseImages(const std::vector<std::string>& entries,
                                                std::string_view origin) {
  if (entries.size() > kMaxImages) {
    return Invalid(std::string(origin) + " names " + std::to_string(entries.size()) +
                   " images; at most " + std::to_string(kMaxImages) + " are served.");
  }
  std::vector<ImageSetting> images;
  for (const std::string& entry : entries) {
    size_t equals = entry.find('=');
    ImageSetting image;
    if (equals != std::string::npos) {
      image.name = entry.substr(0, equals);
      image.directory = entry.substr(equals + 1);
    }
    if (equals == std::string::npos || image.directory.empty() ||
        !IsWellFormedImageName(image.name)) {
      return Invalid(std::string(origin) + " \"" + entry.substr(0, 200) +
                     "\" is not NAME=PATH with NAME of 1-64 lowercase letters, digits or '-' "
                     "(e.g. data=/var/lib/plimsoll/images/data).");
    }
    for (const ImageSetting& earlier : images) {
      if (earlier.name == image.name) {
        return Invalid(std::string(origin) + " names the image \"" + image.name + "\" twice.");
      }
    }
    images.push_back(std::move(image));
  }
  return images;
}

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    if (comma > start) out.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return out;
}

Status ReadEnvironment(const Environment& environment, Settings& settings) {
  auto get = [&](const char* name) -> std::optional<std::string> {
    auto found = environment.find(name);
    if (found == environment.end()) return std::nullopt;
    return found->second;
  };
  if (auto value = get("SANDBOX_PROVIDER"); value && !value->empty()) settings.provider = *value;
  if (auto value = get("PLIMSOLL_IMAGES"); value && !value->empty()) {
    auto images = ParseImages(SplitCommas(*value), "PLIMSOLL_IMAGES");
    if (!images.ok()) return images.error();
    settings.images = std::move(*images);
  }
  if (auto value = get("PLIMSOLL_LISTEN"); value && !value->empty()) settings.listen = *value;
  if (auto value = get("PLIMSOLL_UNIX_SOCKET")) settings.unix_socket = *value;
  if (auto value = get("PLIMSOLL_UNIX_SOCKET_MODE"); value && !value->empty()) {
    auto mode = ParseSocketMode("PLIMSOLL_UNIX_SOCKET_MODE", *value);
    if (!mode.ok()) return mode.error();
    settings.unix_socket_mode = *mode;
  }
  if (auto value = get("PLIMSOLL_METRICS_LISTEN"); value && !value->empty()) {
    settings.metrics_listen = *value;
  }
  if (auto value = get("PLIMSOLL_DEV")) {
    auto dev = ParseBoolean("PLIMSOLL_DEV", *value);
    if (!dev.ok()) return dev.error();
    settings.dev = *dev;
  }
  if (auto value = get("PLIMSOLL_HARDENED")) {
    auto hardened = ParseBoolean("PLIMSOLL_HARDENED", *value);
    if (!hardened.ok()) return hardened.error();
    settings.hardened = *hardened;
  }
  if (auto value = get("PLIMSOLL_PIN_ENVIRONMENT")) settings.pinned_environment = *value;
  if (auto value = get("PLIMSOLL_TLS_CERT")) settings.tls_cert = *value;
  if (auto value = get("PLIMSOLL_TLS_KEY")) settings.tls_key = *value;
  if (auto value = get("PLIMSOLL_CALLERS")) settings.callers_path = *value;
  if (auto value = get("SANDBOX_MIN_ISOLATION")) {
    auto floor = ParseFloor(*value);
    if (!floor.ok()) return floor.error().WithContext("SANDBOX_MIN_ISOLATION");
    settings.min_isolation = *floor;
  }
  if (auto value = get("PLIMSOLL_RUN_CEILING_MS"); value && !value->empty()) {
    auto number = ParseMillisecondsVariable("PLIMSOLL_RUN_CEILING_MS", *value);
    if (!number.ok()) return number.error();
    auto ceiling = CheckRunCeiling("PLIMSOLL_RUN_CEILING_MS", *number);
    if (!ceiling.ok()) return ceiling.error();
    settings.run_ceiling = *ceiling;
  }
  if (auto value = get("PLIMSOLL_EVIDENCE_INTERVAL_MS"); value && !value->empty()) {
    auto number = ParseMillisecondsVariable("PLIMSOLL_EVIDENCE_INTERVAL_MS", *value);
    if (!number.ok()) return number.error();
    auto interval = CheckEvidenceInterval("PLIMSOLL_EVIDENCE_INTERVAL_MS", *number);
    if (!interval.ok()) return interval.error();
    settings.evidence_interval = *interval;
  }
  if (auto value = get("PLIMSOLL_AUDIT_LOG")) settings.audit_log = *value;
  if (auto value = get("PLIMSOLL_GRANTS")) settings.grants_path = *value;
  return Status::Ok();
}

struct RawFlags {
  std::string min_isolation;
  std::string unix_socket_mode;
  std::vector<std::string> images;  // --image, each NAME=PATH
  int64_t idle_ms = 0, header_ms = 0, body_ms = 0, drain_ms = 0, evidence_ms = 0;
  int64_t max_header_bytes = 0, max_body_bytes = 0;
  // kNotGiven unless the flag was given (0 and negative values are checked).
  static constexpr int64_t kNotGiven = std::numeric_limits<int64_t>::min();
  int64_t run_ceiling_ms = kNotGiven, evidence_interval_ms = kNotGiven;
};

void DeclareFlags(CLI::App& app, Settings& settings, RawFlags& raw) {
  app.add_option("--provider", settings.provider,
                 "Provider (default: $SANDBOX_PROVIDER, else disabled).");
  app.add_option("--image", raw.images,
                 "Serve this image as NAME (NAME=PATH; repeatable, the first is the default).")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  app.add_option("--min-isolation", raw.min_isolation, "Refuse to start below this tier.");
  app.add_option("--pin-environment", settings.pinned_environment,
                 "Refuse to start unless the provider's environment is this sha256:… identity.");
  app.add_option("--listen", settings.listen, "API address ADDR:PORT (port 0: any free port).");
  app.add_option("--unix-socket", settings.unix_socket, "Also serve the API on this Unix socket.");
  app.add_option("--unix-socket-mode", raw.unix_socket_mode,
                 "Octal mode of the --unix-socket file (default 0600: the daemon's user only).");
  app.add_option("--max-connections", settings.max_connections,
                 "Open connections per listener, all clients together (default 1024).")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--max-connections-per-peer", settings.max_connections_per_peer,
                 "Open connections of one client address (IPv6: one /64; Unix: one uid); at most "
                 "--max-connections (default 128).")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--metrics-listen", settings.metrics_listen, "Metrics address ADDR:PORT, or off.");
  app.add_flag("--dev", settings.dev, "Serve without authentication, loopback only (development).");
  app.add_option("--callers", settings.callers_path,
                 "Caller store (default: $PLIMSOLL_CALLERS, else the default store if it exists).");
  app.add_option("--max-concurrent-runs", settings.max_concurrent_runs,
                 "Runs in flight across all callers (default: --run-workers).")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-sessions", settings.max_sessions,
                 "Sessions open at once in the daemon (default 256).")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-sessions-per-caller", settings.max_sessions_per_caller,
                 "Sessions one caller may hold open (default 16; at most --max-sessions).")
      ->check(CLI::Range(1, 100000));
  app.add_option("--max-sessions-per-owner", settings.max_sessions_per_owner,
                 "Sessions of one owner (default 4; at most --max-sessions-per-caller); at the cap "
                 "the owner's least-recently-used idle session ends `replaced`.")
      ->check(CLI::Range(1, 100000));
  app.add_option("--io-threads", settings.io_threads, "Event-loop threads.")
      ->check(CLI::Range(1, 64));
  app.add_option("--run-workers", settings.run_workers, "Run worker threads.")
      ->check(CLI::Range(1, 1024));
  app.add_option("--run-queue", settings.run_queue, "Runs that may wait for a worker.")
      ->check(CLI::Range(0, 100000));
  app.add_option("--idle-timeout-ms", raw.idle_ms, "Keep-alive idle timeout.")
      ->check(CLI::PositiveNumber);
  app.add_option("--header-timeout-ms", raw.header_ms, "Time to receive a request header.")
      ->check(CLI::PositiveNumber);
  app.add_option("--body-timeout-ms", raw.body_ms, "Time to receive a request body.")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-header-bytes", raw.max_header_bytes, "Largest request header.")
      ->check(CLI::Range(1024, 1 << 20));
  app.add_option("--max-body-bytes", raw.max_body_bytes, "Largest request body (<= 8 MiB).")
      ->check(CLI::Range(int64_t{1}, http::kMaxBodyBytes));
  app.add_option("--drain-timeout-ms", raw.drain_ms, "How long SIGTERM waits for in-flight runs.")
      ->check(CLI::PositiveNumber);
  app.add_option("--evidence-budget-ms", raw.evidence_ms, "Time bound of the startup smoke test.")
      ->check(CLI::PositiveNumber);
  app.add_option("--run-ceiling-ms", raw.run_ceiling_ms,
                 "Hard ceiling on any run (default 300000 = 5 min).");
  app.add_option("--evidence-interval-ms", raw.evidence_interval_ms,
                 "How often the sandbox's evidence is re-checked (default 60000; 0 = never).");
  app.add_option("--audit-log", settings.audit_log,
                 "Append audit lines to this file (created 0600; default: the operator log).");
  app.add_option("--grants", settings.grants_path,
                 "The grants file (YAML or JSON, docs/grants.md): grant profiles runs may name.");
  app.add_option("--tls-cert", settings.tls_cert,
                 "Serve TLS with this PEM certificate chain (with --tls-key).");
  app.add_option("--tls-key", settings.tls_key, "The PEM private key of --tls-cert.");
  DeclareRunLimitFlags(app, settings.run_limits);
}

Status ApplyRawFlags(const RawFlags& raw, Settings& settings) {
  using std::chrono::milliseconds;
  if (!raw.images.empty()) {  // the flags replace PLIMSOLL_IMAGES whole
    auto images = ParseImages(raw.images, "--image");
    if (!images.ok()) return images.error();
    settings.images = std::move(*images);
  }
  if (!raw.min_isolation.empty()) {
    auto floor = ParseFloor(raw.min_isolation);
    if (!floor.ok()) return floor.error().WithContext("--min-isolation");
    settings.min_isolation = *floor;
  }
  if (!raw.unix_socket_mode.empty()) {
    auto mode = ParseSocketMode("--unix-socket-mode", raw.unix_socket_mode);
    if (!mode.ok()) return mode.error();
    settings.unix_socket_mode = *mode;
  }
  if (raw.idle_ms > 0) settings.http.idle_timeout = milliseconds(raw.idle_ms);
  if (raw.header_ms > 0) settings.http.header_timeout = milliseconds(raw.header_ms);
  if (raw.body_ms > 0) settings.http.body_timeout = milliseconds(raw.body_ms);
  if (raw.max_header_bytes > 0)
    settings.http.max_header_bytes = static_cast<uint32_t>(raw.max_header_bytes);
  if (raw.max_body_bytes > 0) settings.http.max_body_bytes = raw.max_body_bytes;
  if (raw.drain_ms > 0) settings.drain_timeout = milliseconds(raw.drain_ms);
  if (raw.evidence_ms > 0) settings.evidence_budget = milliseconds(raw.evidence_ms);
  if (raw.run_ceiling_ms != RawFlags::kNotGiven) {
    auto ceiling = CheckRunCeiling("--run-ceiling-ms", raw.run_ceiling_ms);
    if (!ceiling.ok()) return ceiling.error();
    settings.run_ceiling = *ceiling;
  }
  if (raw.evidence_interval_ms != RawFlags::kNotGiven) {
    auto interval = CheckEvidenceInterval("--evidence-interval-ms", raw.evidence_interval_ms);
    if (!interval.ok()) return interval.error();
    settings.evidence_interval = *interval;
  }
  return Status::Ok();
}

bool IsLoopbackAddress(const std::string& text) {
  auto endpoint = http::ParseListenAddress(text);
  return endpoint.ok() && endpoint->address().is_loopback();
}

}  // namespace

Expected<Settings> ParseSettings(const std::vector<std::string>& args,
                                 const Environment& environment) {
  Settings settings;
  PLIMSOLL_RETURN_IF_ERROR(ReadEnvironment(environment, settings));
  CLI::App app{"plimsolld: the plimsoll daemon (HTTP API, api/openapi.yaml).", "plimsolld"};
  RawFlags raw;
  DeclareFlags(app, settings, raw);
  std::vector<std::string> reversed(args.rbegin(), args.rend() - (args.empty() ? 0 : 1));
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    settings.show_help = true;
    settings.help = app.help();
    return settings;
  } catch (const CLI::ParseError& error) {
    return Invalid(std::string(error.what()) + " (plimsolld --help lists the flags)");
  }
  PLIMSOLL_RETURN_IF_ERROR(ApplyRawFlags(raw, settings));
  if (!http::ParseListenAddress(settings.listen).ok()) {
    return http::ParseListenAddress(settings.listen).error().WithContext("--listen");
  }
  if (settings.metrics_listen != "off" && !http::ParseListenAddress(settings.metrics_listen).ok()) {
    return http::ParseListenAddress(settings.metrics_listen)
        .error()
        .WithContext("--metrics-listen");
  }
  if (settings.tls_cert.empty() != settings.tls_key.empty()) {
    return Invalid(
        "TLS needs both --tls-cert and --tls-key (PLIMSOLL_TLS_CERT, PLIMSOLL_TLS_KEY), or "
        "neither; only " +
        std::string(settings.tls_cert.empty() ? "the key" : "the certificate") + " is set.");
  }
  if (settings.max_connections_per_peer > settings.max_connections) {
    // One client alone must never be able to fill the daemon.
    return Invalid("--max-connections-per-peer (" +
                   std::to_string(settings.max_connections_per_peer) +
                   ") must not be above --max-connections (" +
                   std::to_string(settings.max_connections) + ").");
  }
  if (settings.max_sessions_per_owner > settings.max_sessions_per_caller ||
      settings.max_sessions_per_caller > settings.max_sessions) {
    return Invalid("Session caps must nest: --max-sessions-per-owner (" +
                   std::to_string(settings.max_sessions_per_owner) +
                   ") <= --max-sessions-per-caller (" +
                   std::to_string(settings.max_sessions_per_caller) + ") <= --max-sessions (" +
                   std::to_string(settings.max_sessions) + ").");
  }
  PLIMSOLL_RETURN_IF_ERROR(CheckRunLimits(settings.run_limits, settings.run_ceiling));
  return settings;
}

std::vector<std::string> UnknownVariables(const Environment& environment) {
  std::vector<std::string> unknown;
  for (const auto& [name, value] : environment) {
    bool ours = name.starts_with("PLIMSOLL_") || name.starts_with("SANDBOX_");
    if (!ours) continue;
    if (std::find(kKnownVariables.begin(), kKnownVariables.end(), name) == kKnownVariables.end()) {
      unknown.push_back(name);
    }
  }
  return unknown;
}

Status CheckStartupRules(const Settings& settings, bool has_callers) {
  std::vector<std::string> violations;
  if (settings.dev) {
    if (!IsLoopbackAddress(settings.listen)) {
      violations.push_back(
          "--dev serves without authentication, so --listen must be a loopback "
          "address, not " +
          settings.listen);
    }
    if (settings.metrics_listen != "off" && !IsLoopbackAddress(settings.metrics_listen)) {
      violations.push_back("--dev needs --metrics-listen on loopback, not " +
                           settings.metrics_listen);
    }
  } else if (!has_callers && settings.provider != "disabled") {
    violations.push_back("the " + settings.provider +
                         " provider runs code but no callers are configured; create one "
                         "(plimsoll callers create NAME) or, for local development only, pass "
                         "--dev");
  }
  if (violations.empty()) return Status::Ok();
  std::string message = "plimsolld cannot start: ";
  for (size_t i = 0; i < violations.size(); ++i) {
    message += (i == 0 ? "" : "; ") + violations[i];
  }
  return Failure(ErrorCode::kFailedPrecondition, message + ".");
}

Environment CurrentEnvironment() {
  Environment environment;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    size_t equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    environment.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  return environment;
}

}  // namespace plimsoll::daemon
