#include "plimsoll/sandbox.h"

#include <algorithm>

#include "base/javascript_globals.h"
#include "core/module_project.h"
#include "plimsoll/record.h"

namespace plimsoll {
namespace {

Error BelowFloor(Tier actual, Tier floor, std::string_view what) {
  return Refusal(NotDispatched::kIsolation,
                 "The request needs isolation " + std::string(TierName(floor)) + " or stronger; " +
                     std::string(what) + " is " + std::string(TierName(actual)) + ".");
}

// "name (detail); ..." of the checks that failed.
std::string FailedChecks(const Evidence& evidence) {
  std::string failed;
  for (const EvidenceCheck& check : evidence.checks) {
    if (check.passed) continue;
    failed += failed.empty() ? "" : "; ";
    failed += check.name + " (" + check.detail + ")";
  }
  return failed;
}

// A refusal when `required` is set and is not `actual`.
std::optional<Error> WrongEnvironment(const std::string& required, const std::string& actual) {
  if (required.empty() || required == actual) return std::nullopt;
  return Refusal(NotDispatched::kEnvironment,
                 "The request requires environment " + required + "; this provider has " +
                     (actual.empty() ? std::string("none") : actual) + ".");
}

}  // namespace

Sandbox::Sandbox(std::unique_ptr<Provider> provider)
    : provider_(std::move(provider)),
      mutex_(std::make_unique<std::mutex>()),
      collecting_(std::make_unique<std::mutex>()) {}
Sandbox::~Sandbox() = default;
Sandbox::Sandbox(Sandbox&&) noexcept = default;
Sandbox& Sandbox::operator=(Sandbox&&) noexcept = default;

Description Sandbox::Describe() const {
  Description description = provider_->Describe();
  // Every provider that runs JavaScript runs one engine build (embedded
  // in-process, the image's qjs elsewhere), so one list serves them all
  // (base/javascript_globals.h: the core links no engine).
  const auto& payloads = description.capabilities.payloads;
  if (std::find(payloads.begin(), payloads.end(), PayloadKind::kJavascript) != payloads.end()) {
    description.details.emplace_back("javascript_globals", base::JavascriptGlobalsList());
  }
  description.image = image_name();
  return description;
}

Sandbox::DispatchFacts Sandbox::FactsFrom(const Description& description,
                                          const Evidence* evidence) {
  std::string environment = evidence != nullptr && !evidence->environment.empty()
                                ? evidence->environment
                                : description.environment;
  return DispatchFacts{description.limits, description.tier, std::move(environment),
                       PolicyDigest(description.limits), description.capabilities.grants};
}

void Sandbox::PinEnvironment(std::string identity) {
  std::lock_guard lock(*mutex_);
  pinned_ = std::move(identity);
}

void Sandbox::NameImage(std::string name) {
  std::lock_guard lock(*mutex_);
  image_name_ = std::move(name);
}

std::string Sandbox::image_name() const {
  std::lock_guard lock(*mutex_);
  return image_name_;
}

std::string Sandbox::pinned() const {
  std::lock_guard lock(*mutex_);
  return pinned_;
}

Expected<Evidence> Sandbox::CollectEvidence(std::chrono::milliseconds budget) {
  // One collection at a time: what is kept is always the answer of the one
  // that started last (a slow older check cannot overwrite a newer failure).
  std::lock_guard collecting(*collecting_);
  auto finished = [this] {
    std::lock_guard lock(*mutex_);
    ++collections_;
  };
  // Whatever goes wrong, the stored evidence stops proving a tier: a wall
  // that could not be confirmed now is not vouched for by an older check.
  auto unconfirmed = [this, &finished](Evidence observed, std::string why) -> Error {
    observed.tier = Tier::kUnknown;
    {
      std::lock_guard lock(*mutex_);
      evidence_ = std::move(observed);
      facts_.reset();
    }
    finished();
    return Refusal(NotDispatched::kEnvironment, std::move(why));
  };
  const std::string name(provider_->name());
  auto failed_check = [](std::string check, std::string detail) {
    Evidence failed;
    failed.checks.push_back({std::move(check), false, std::move(detail)});
    return failed;
  };

  Status preflight = provider_->Preflight();
  if (!preflight.ok()) {
    return unconfirmed(
        failed_check("preflight", preflight.error().message()),
        "The " + name + " provider failed its preflight: " + preflight.error().message());
  }
  auto evidence = provider_->SmokeTest(std::chrono::steady_clock::now() + budget);
  if (!evidence.ok()) {
    return unconfirmed(failed_check("smoke_test", evidence.error().message()),
                       "The " + name + " provider's sandbox could not be confirmed: " +
                           evidence.error().message());
  }
  // A provider never claims more than it describes, and failed checks mean
  // the wall was not confirmed.
  Evidence confirmed = *evidence;
  Description description = provider_->Describe();
  Tier claimed = description.tier;
  if (CompareTiers(confirmed.tier, claimed) > 0) confirmed.tier = claimed;
  DispatchFacts facts = FactsFrom(description, &confirmed);
  if (std::string pin = pinned(); !pin.empty()) {
    bool held = facts.environment == pin;
    confirmed.checks.push_back(
        {"environment_pin", held,
         held ? "the environment is the pinned " + pin
              : "the environment is " +
                    (facts.environment.empty() ? std::string("none") : facts.environment) +
                    ", not the pinned " + pin});
  }
  if (!confirmed.AllChecksPassed()) {
    std::string failed = FailedChecks(confirmed);
    return unconfirmed(std::move(confirmed),
                       "The " + name + " provider's smoke test failed: " + failed + ".");
  }
  {
    std::lock_guard lock(*mutex_);
    evidence_ = confirmed;
    facts_ = std::move(facts);
  }
  finished();
  return confirmed;
}

Sandbox::DispatchFacts Sandbox::CurrentFacts() const {
  {
    std::lock_guard lock(*mutex_);
    if (facts_) return *facts_;
  }
  return FactsFrom(provider_->Describe(), nullptr);
}

std::optional<Evidence> Sandbox::evidence() const {
  std::lock_guard lock(*mutex_);
  return evidence_;
}

Expected<Evidence> Sandbox::ConfirmedEvidence() {
  uint64_t seen = 0;
  {
    std::lock_guard lock(*mutex_);
    if (evidence_ && evidence_->AllChecksPassed()) return *evidence_;
    seen = collections_;
  }
  // Evidence that failed a check proves nothing: collect it again (the wall
  // may have recovered) and refuse if it still fails. A collection that
  // finished while this run waited for its turn answers for it.
  std::unique_lock collecting(*collecting_);
  {
    std::lock_guard lock(*mutex_);
    if (collections_ != seen && evidence_) {
      if (evidence_->AllChecksPassed()) return *evidence_;
      return Refusal(NotDispatched::kEnvironment,
                     "The " + std::string(provider_->name()) +
                         " provider's sandbox is not confirmed: " + FailedChecks(*evidence_) + ".");
    }
  }
  collecting.unlock();
  return CollectEvidence();
}

Expected<Result> Sandbox::Run(const Request& request, GrantedCalls* grant) {
  DispatchFacts facts = CurrentFacts();
  auto validated = ValidateRequest(request, facts.limits);
  if (!validated.ok()) return validated.error();
  if (validated->grant_profile.empty()) {
    grant = nullptr;
  } else if (grant == nullptr) {
    PLIMSOLL_RETURN_IF_ERROR(RefuseUnservedGrant(*validated));
  } else if (!facts.grants) {
    return Refusal(NotDispatched::kUnsupported,
                   "The " + std::string(provider_->name()) +
                       " provider does not serve grants yet, so a run naming a grant profile is "
                       "refused and nothing ran.");
  }
  PLIMSOLL_RETURN_IF_ERROR(CheckImageServed(validated->image, image_name()));

  std::optional<Tier> floor;
  if (!validated->minimum_isolation.empty()) floor = ParseTier(validated->minimum_isolation);
  // Cheap refusal first: a provider that could never meet the floor.
  if (floor && !MeetsFloor(facts.claimed, *floor)) {
    return BelowFloor(facts.claimed, *floor,
                      "this " + std::string(provider_->name()) + " provider");
  }
  auto required = RequiredEnvironment(validated->environment);
  if (!required.ok()) return required.error();
  validated->environment = *required;
  if (auto refusal = WrongEnvironment(validated->environment, facts.environment)) return *refusal;

  Expected<Evidence> confirmed = ConfirmedEvidence();
  if (!confirmed.ok()) return confirmed.error();
  const Evidence& current = *confirmed;
  // The evidence may be a new configuration's: its facts are the ones that hold.
  facts = CurrentFacts();
  if (auto refusal = WrongEnvironment(validated->environment, facts.environment)) return *refusal;
  // The floor is checked against the current evidence immediately before dispatch.
  if (floor && !MeetsFloor(current.tier, *floor)) {
    return BelowFloor(current.tier, *floor, "the current evidence");
  }

  RecordClock clock = RecordClock::Start();
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(validated->timeout_ms);
  // A module run is dispatched as its project (core/module_project.h), in
  // place: no copy of the request on any run. The record is made from
  // `request`, the module the client sent; the result keeps its kind.
  const PayloadKind kind = *validated->kind();
  if (validated->module) {
    validated->project = ModuleProject(*validated->module);
    validated->module.reset();
  }
  auto result = grant != nullptr ? provider_->RunGranted(*validated, deadline, *grant)
                                 : provider_->Run(*validated, deadline);
  if (!result.ok()) return result.error();
  RecordClock::Span span = clock.Stop();
  if (grant != nullptr) {
    result->broker = grant->Summary();
    result->advice = grant->Advice();
  }

  result->provider = std::string(provider_->name());
  result->kind = kind;
  // Honesty: the tier reported is the lesser of what the provider says this
  // run got and what the evidence proves. A run the provider could not place
  // (unknown, unset, none) stays unknown, which meets no floor.
  if (!IsRunnableTier(result->isolation)) {
    result->isolation = Tier::kUnknown;
  } else if (CompareTiers(result->isolation, current.tier) > 0) {
    result->isolation = current.tier;
  }
  if (floor && !MeetsFloor(result->isolation, *floor)) {
    // Code ran, so this is no refusal (no mark), and the request's floor
    // forbids handing back a result from below it (docs/run-records.md).
    return Failure(ErrorCode::kInternal,
                   "The run's tier is " + std::string(TierName(result->isolation)) +
                       ", below the request's floor " + std::string(TierName(*floor)) + " (the " +
                       std::string(provider_->name()) +
                       " provider's evidence said otherwise); the result is withheld. Code may "
                       "have run: do not retry automatically.");
  }
  if (result->environment.empty()) result->environment = facts.environment;
  result->record = MakeRecord(request, *result, facts.policy, span);
  return result;
}

Expected<std::string> Sandbox::RequiredEnvironment(const std::string& requested) const {
  // A pinned daemon dispatches everything requiring its pin: the provider
  // checks it together with choosing the configuration that runs.
  std::string pin = pinned();
  if (pin.empty()) return requested;
  if (!requested.empty() && requested != pin) {
    return Refusal(NotDispatched::kEnvironment, "The request requires environment " + requested +
                                                    "; this daemon is pinned to " + pin + ".");
  }
  return pin;
}

Status Sandbox::CheckSessionOptions(const SessionOptions& options) {
  if (options.lifetime_ms > kMaximumSessionLifetimeMs) {
    return Refusal(NotDispatched::kRequest,
                   "lifetime_ms is above the maximum of 43200000 (12 hours).");
  }
  const int64_t lifetime =
      options.lifetime_ms > 0 ? options.lifetime_ms : kDefaultSessionLifetimeMs;
  const int64_t idle =
      options.idle_timeout_ms > 0 ? options.idle_timeout_ms : kDefaultSessionIdleTimeoutMs;
  if (idle > lifetime) {
    return Refusal(NotDispatched::kRequest, "idle_timeout_ms is above the session's lifetime.");
  }
  if (!options.image.empty() && !IsWellFormedImageName(options.image)) {
    return Refusal(NotDispatched::kRequest,
                   "image must be 1-64 characters of lowercase letters, digits or '-' (not "
                   "starting with '-'): the name of an image the daemon serves.");
  }
  if (!options.minimum_isolation.empty()) {
    std::optional<Tier> floor = ParseTier(options.minimum_isolation);
    if (!floor || !IsRunnableTier(*floor)) {
      return Refusal(NotDispatched::kRequest, "minimum_isolation \"" + options.minimum_isolation +
                                                  "\" is not a tier (process, container, "
                                                  "kernel, vm).");
    }
  }
  return Status::Ok();
}

Expected<std::unique_ptr<Session>> Sandbox::OpenSession(const SessionOptions& options) {
  PLIMSOLL_RETURN_IF_ERROR(CheckSessionOptions(options));
  const std::string image = image_name();
  PLIMSOLL_RETURN_IF_ERROR(CheckImageServed(options.image, image));
  std::optional<Tier> floor;
  if (!options.minimum_isolation.empty()) floor = ParseTier(options.minimum_isolation);
  const std::string name(provider_->name());
  if (!provider_->Describe().capabilities.sessions) {
    return Refusal(NotDispatched::kUnsupported,
                   "The " + name + " provider does not keep sessions.");
  }
  DispatchFacts facts = CurrentFacts();
  if (floor && !MeetsFloor(facts.claimed, *floor)) {
    return BelowFloor(facts.claimed, *floor, "this " + name + " provider");
  }
  auto required = RequiredEnvironment(options.environment);
  if (!required.ok()) return required.error();
  if (auto refusal = WrongEnvironment(*required, facts.environment)) return *refusal;

  Expected<Evidence> confirmed = ConfirmedEvidence();
  if (!confirmed.ok()) return confirmed.error();
  facts = CurrentFacts();
  if (auto refusal = WrongEnvironment(*required, facts.environment)) return *refusal;
  if (floor && !MeetsFloor(confirmed->tier, *floor)) {
    return BelowFloor(confirmed->tier, *floor, "the current evidence");
  }
  auto id = Session::NewId();
  if (!id.ok()) return id.error();

  SessionSpec spec;
  spec.environment = *required;
  spec.disk_bytes = options.disk_bytes > 0 ? options.disk_bytes : kDefaultSessionDiskBytes;
  auto made =
      provider_->OpenSession(spec, std::chrono::steady_clock::now() + kDefaultEvidenceBudget);
  if (!made.ok()) return made.error();
  Session::Facts session_facts;
  session_facts.provider = name;
  session_facts.limits = facts.limits;
  session_facts.policy = facts.policy;
  session_facts.image = image;
  // The session's tier: the lesser of what its sandbox says and what the
  // evidence proves.
  Tier tier = (*made)->tier();
  if (!IsRunnableTier(tier)) tier = Tier::kUnknown;
  if (CompareTiers(tier, confirmed->tier) > 0) tier = confirmed->tier;
  if (floor && !MeetsFloor(tier, *floor)) {
    return BelowFloor(tier, *floor, "the session's sandbox");  // `made` is destroyed
  }
  session_facts.tier = tier;
  session_facts.environment = (*made)->environment();
  if (session_facts.environment.empty()) session_facts.environment = facts.environment;
  return std::unique_ptr<Session>(
      new Session(std::move(*id), std::move(session_facts), options, std::move(*made)));
}

}  // namespace plimsoll
