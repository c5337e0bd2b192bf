#include "daemon/server/daemon_main.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>

#include "broker/broker_file.h"
#include "daemon/auth/store_authenticator.h"
#include "auth/store_file.h"
#include "daemon/authenticator.h"
#include "daemon/log.h"
#include "daemon/server/audit.h"
#include "daemon/server/hardened.h"
#include "daemon/server/open_images.h"
#include "daemon/server/server.h"

namespace plimsoll::daemon {
namespace {

constexpr std::string_view kDevBanner =
    "DEVELOPMENT MODE (--dev): requests are NOT authenticated; anyone who can reach the "
    "loopback listener can run code. Never use --dev on a shared machine or in production.";

void WarnAboutEnvironment(const Environment& environment, Log& log) {
  for (const std::string& name : UnknownVariables(environment)) {
    log.Warning(name + " is set but no part of plimsoll reads it; check its spelling.");
  }
}

// Reconcile every image's provider first (so one's cleanup cannot take
// another's warm pool), then each image's preflight + smoke test and the
// minimum isolation. The pin holds the default image.
Status ConfirmImages(const Settings& settings, const std::vector<ImageToServe>& images, Log& log) {
  for (const ImageToServe& image : images) {
    Status reconciled = image.sandbox->provider().Reconcile();
    if (!reconciled.ok()) return reconciled.error().WithContext("Removing leftovers failed");
  }
  const bool several = images.size() > 1;
  for (const ImageToServe& image : images) {
    Sandbox& sandbox = *image.sandbox;
    const std::string which = several ? " (image " + image.name + ")" : std::string();
    const bool is_default = &image == &images.front();
    // The pin holds for the daemon's whole life: every later evidence
    // collection re-checks it (a changed image is refused, not served).
    if (is_default) sandbox.PinEnvironment(settings.pinned_environment);
    auto evidence = sandbox.CollectEvidence(settings.evidence_budget);
    if (!evidence.ok()) {
      std::string environment = sandbox.Describe().environment;
      if (is_default && !settings.pinned_environment.empty() &&
          environment != settings.pinned_environment) {
        return Failure(ErrorCode::kFailedPrecondition,
                       "The environment is pinned to " + settings.pinned_environment + " but the " +
                           std::string(sandbox.provider().name()) + " provider has " +
                           (environment.empty() ? std::string("none") : environment) + which + ".");
      }
      return several ? evidence.error().WithContext("The image " + image.name) : evidence.error();
    }
    log.Info("provider " + std::string(sandbox.provider().name()) + which + ", tier " +
             std::string(TierName(evidence->tier)) + ": " + evidence->summary);
    if (settings.min_isolation && !MeetsFloor(evidence->tier, *settings.min_isolation)) {
      return Failure(ErrorCode::kFailedPrecondition,
                     "SANDBOX_MIN_ISOLATION is " + std::string(TierName(*settings.min_isolation)) +
                         " but the " + std::string(sandbox.provider().name()) +
                         " provider's evidence shows " + std::string(TierName(evidence->tier)) +
                         which + ".");
    }
  }
  return Status::Ok();
}

// The weakest tier the images' evidence proves (unknown when any has none).
Tier WeakestProvenTier(const std::vector<ImageToServe>& images) {
  Tier weakest = Tier::kVm;
  for (const ImageToServe& image : images) {
    std::optional<Evidence> evidence = image.sandbox->evidence();
    Tier tier = evidence ? evidence->tier : Tier::kUnknown;
    if (CompareTiers(tier, weakest) < 0) weakest = tier;
  }
  return weakest;
}

// The caller store of --callers / PLIMSOLL_CALLERS, else the default store
// when that file exists; nullptr when there is none to open. An explicit or
// existing store that cannot be opened stops the start.
Expected<std::unique_ptr<auth::StoreAuthenticator>> LoadCallers(const Settings& settings) {
  std::filesystem::path path = settings.callers_path;
  if (path.empty()) {
    auto fallback = auth::DefaultCallerStorePath();
    if (!fallback.ok()) return std::unique_ptr<auth::StoreAuthenticator>();
    std::error_code error;
    if (!std::filesystem::exists(*fallback, error)) {
      return std::unique_ptr<auth::StoreAuthenticator>();
    }
    path = *fallback;
  }
  auto store = auth::OpenStoreAuthenticator(path);
  if (!store.ok()) return store.error().WithContext("The caller store " + path.string());
  return std::move(*store);
}

void WaitForStopSignal(Log& log) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  int received = 0;
  sigwait(&signals, &received);
  log.Info(std::string("received ") + (received == SIGTERM ? "SIGTERM" : "SIGINT") + "; draining.");
}

void WarnAboutCleartext(const Settings& settings, Log& log) {
  for (const std::string& listener : CleartextListeners(settings)) {
    log.Warning(listener +
                " is not a loopback address and TLS is off: bearer tokens, code and outputs "
                "cross the network in cleartext. Set --tls-cert and --tls-key, or terminate TLS "
                "in front of plimsolld.");
  }
}

// What hardened mode judges before the startup evidence: the provider's
// claim, the authentication in force, and the active callers' limits.
Expected<HardenedFacts> FactsBeforeEvidence(const auth::StoreAuthenticator* callers,
                                            int64_t active_callers, Tier claim) {
  HardenedFacts facts{.tier = claim, .caller_store = callers != nullptr && active_callers > 0};
  if (!facts.caller_store) return facts;
  auto listed = callers->store().List();
  if (!listed.ok()) return listed.error().WithContext("Listing callers");
  for (auth::Caller& caller : *listed) {
    if (!caller.revoked()) facts.active_callers.push_back(std::move(caller));
  }
  return facts;
}

std::string ServingLine(const Settings& settings, const Server& server) {
  std::string line = "plimsolld: serving api=" + http::FormatEndpoint(server.api_endpoint());
  if (!settings.unix_socket.empty()) line += " unix=" + settings.unix_socket;
  auto metrics = server.metrics_endpoint();
  line += " metrics=" + (metrics ? http::FormatEndpoint(*metrics) : std::string("off"));
  return line;
}

}  // namespace

void BlockStopSignals() {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);
}

int DaemonMain(const std::vector<std::string>& args, const Environment& environment,
               std::ostream& out, std::ostream& err) {
  Log log(err);
  auto settings = ParseSettings(args, environment);
  if (!settings.ok()) {
    log.Error(settings.error().message());
    return kExitBadSettings;
  }
  if (settings->show_help) {
    out << settings->help;
    return 0;
  }
  WarnAboutEnvironment(environment, log);
  std::unique_ptr<auth::StoreAuthenticator> callers;
  int64_t active_callers = 0;
  if (!settings->dev) {
    auto loaded = LoadCallers(*settings);
    if (!loaded.ok()) {
      log.Error(loaded.error().message());
      return kExitBadSettings;
    }
    callers = std::move(*loaded);
    if (callers) {
      auto count = callers->store().CountActive();
      if (!count.ok()) {
        log.Error(count.error().WithContext("Counting callers").message());
        return kExitStartFailed;
      }
      active_callers = *count;
      log.Info("caller store " + callers->store().path().string() + ": " +
               std::to_string(active_callers) + " active caller(s).");
    }
  }
  Status rules = CheckStartupRules(*settings, /*has_callers=*/active_callers > 0);
  // Hardened mode lists every violation at once, below, once the provider's
  // claim is known; its rules cover these.
  if (!rules.ok() && !settings->hardened) {
    log.Error(rules.error().message());
    return kExitBadSettings;
  }
  if (!settings->hardened) {  // hardened mode refuses both, below
    if (settings->dev) log.Warning(kDevBanner);
    WarnAboutCleartext(*settings, log);
  }

  std::unique_ptr<AuditLog> audit;
  if (!settings->audit_log.empty()) {
    auto opened = AuditLog::OpenFile(settings->audit_log);
    if (!opened.ok()) {
      log.Error(opened.error().WithContext("--audit-log / PLIMSOLL_AUDIT_LOG").message());
      return kExitBadSettings;
    }
    audit = std::move(*opened);
  }

  std::optional<broker::Broker> broker;
  if (!settings->grants_path.empty()) {
    std::vector<std::string> warnings;
    auto opened_broker =
        broker::OpenBrokerFile(settings->grants_path, broker::ProcessEnvironment(), warnings);
    if (!opened_broker.ok()) {
      log.Error(opened_broker.error().WithContext("--grants / PLIMSOLL_GRANTS").message());
      return kExitBadSettings;
    }
    for (const std::string& warning : warnings) log.Warning(warning);
    broker.emplace(std::move(*opened_broker));
  }

  Limits limits = ApplyRunLimits(settings->run_limits, Limits{});
  limits.run_ceiling_ms = settings->run_ceiling.count();
  auto opened = OpenImages(*settings, limits);
  if (!opened.ok()) {
    log.Error(opened.error().message());
    return kExitBadSettings;
  }
  const std::vector<ImageToServe>& images = opened->images;
  Sandbox& sandbox = *images.front().sandbox;  // the default image's: every image has its provider
  HardenedFacts hardened;
  if (settings->hardened) {
    auto facts = FactsBeforeEvidence(callers.get(), active_callers, sandbox.Describe().tier);
    if (!facts.ok()) {
      log.Error(facts.error().message());
      return kExitStartFailed;
    }
    hardened = std::move(*facts);
    // Sessions are always bounded (lifetime at most 12 h, idle timeout,
    // 1 GiB of disk built in; per caller, per owner and per daemon by flags
    // that take only positive values): none can be switched off.
    hardened.sessions_enabled = sandbox.Describe().capabilities.sessions;
    hardened.session_caps_set = true;
    std::vector<std::string> violations = HardenedViolations(*settings, hardened);
    if (!violations.empty()) {
      log.Error(HardenedReport(violations));
      return kExitBadSettings;
    }
    if (!rules.ok()) {  // not reached while hardened mode's rules cover CheckStartupRules'
      log.Error(rules.error().message());
      return kExitBadSettings;
    }
  }
  std::unique_ptr<Authenticator> authenticator;
  if (settings->dev) {
    authenticator = MakeDevAuthenticator();
  } else if (active_callers > 0) {
    authenticator = std::move(callers);
  } else {
    authenticator = MakeNoCallersAuthenticator();
  }
  if (broker && !sandbox.Describe().capabilities.grants) {
    log.Warning("The " + std::string(sandbox.provider().name()) +
                " provider does not serve grants yet: runs naming a grant profile are refused "
                "`unsupported`.");
  }
  Server server(*settings, images, *authenticator, log, audit.get(), broker ? &*broker : nullptr);
  Status started = server.Bind();
  if (!started.ok() && started.error().code() == ErrorCode::kInvalidArgument) {
    log.Error(started.error().message());  // unusable TLS files: bad settings
    return kExitBadSettings;
  }
  if (started.ok()) started = ConfirmImages(*settings, images, log);
  if (started.ok() && settings->hardened) {
    hardened.tier = WeakestProvenTier(images);
    hardened.tier_proven = true;
    std::vector<std::string> violations = HardenedViolations(*settings, hardened);
    if (!violations.empty()) {
      log.Error(HardenedReport(violations));
      return kExitBadSettings;
    }
    log.Info("hardened mode: every safeguard is in place.");
  }
  if (started.ok()) started = server.Start();
  if (!started.ok()) {
    log.Error(started.error().message());
    return kExitStartFailed;
  }
  out << ServingLine(*settings, server) << std::endl;

  WaitForStopSignal(log);
  if (!server.Drain(settings->drain_timeout)) {
    log.Warning("exiting with requests still in flight.");
    out.flush();
    err.flush();
    std::_Exit(0);
  }
  log.Info("drained; exiting.");
  return 0;
}

}  // namespace plimsoll::daemon
