#include "plimsoll/sandbox.h"

#include "plimsoll/record.h"

namespace plimsoll {
namespace {

Error BelowFloor(Tier actual, Tier floor, std::string_view what) {
  return Refusal(NotDispatched::kIsolation,
                 "The request needs isolation " + std::string(TierName(floor)) + " or stronger; " +
                     std::string(what) + " is " + std::string(TierName(actual)) + ".");
}

}  // namespace

Sandbox::Sandbox(std::unique_ptr<Provider> provider)
    : provider_(std::move(provider)), mutex_(std::make_unique<std::mutex>()) {}
Sandbox::~Sandbox() = default;
Sandbox::Sandbox(Sandbox&&) noexcept = default;
Sandbox& Sandbox::operator=(Sandbox&&) noexcept = default;

Expected<Sandbox> Sandbox::Open(std::string_view provider_name, const Limits& limits) {
  auto provider = MakeProvider(provider_name, limits);
  if (!provider.ok()) return provider.error();
  return Sandbox(std::move(*provider));
}

Description Sandbox::Describe() const {
  return provider_->Describe();
}

Sandbox::DispatchFacts Sandbox::FactsFrom(const Description& description) {
  return DispatchFacts{description.limits, description.tier, description.environment,
                       PolicyDigest(description.limits)};
}

Expected<Evidence> Sandbox::CollectEvidence(std::chrono::milliseconds budget) {
  // Whatever goes wrong, the stored evidence stops proving a tier: a wall
  // that could not be confirmed now is not vouched for by an older check.
  auto unconfirmed = [this](Evidence observed, std::string why) -> Error {
    observed.tier = Tier::kUnknown;
    {
      std::lock_guard lock(*mutex_);
      evidence_ = std::move(observed);
      facts_.reset();
    }
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
  if (!confirmed.AllChecksPassed()) {
    std::string failed;
    for (const EvidenceCheck& check : confirmed.checks) {
      if (check.passed) continue;
      failed += failed.empty() ? "" : "; ";
      failed += check.name + " (" + check.detail + ")";
    }
    return unconfirmed(std::move(confirmed),
                       "The " + name + " provider's smoke test failed: " + failed + ".");
  }
  DispatchFacts facts = FactsFrom(description);
  std::lock_guard lock(*mutex_);
  evidence_ = confirmed;
  facts_ = std::move(facts);
  return confirmed;
}

Sandbox::DispatchFacts Sandbox::CurrentFacts() const {
  {
    std::lock_guard lock(*mutex_);
    if (facts_) return *facts_;
  }
  return FactsFrom(provider_->Describe());
}

std::optional<Evidence> Sandbox::evidence() const {
  std::lock_guard lock(*mutex_);
  return evidence_;
}

Expected<Result> Sandbox::Run(const Request& request) {
  DispatchFacts facts = CurrentFacts();
  auto validated = ValidateRequest(request, facts.limits);
  if (!validated.ok()) return validated.error();

  std::optional<Tier> floor;
  if (!validated->minimum_isolation.empty()) floor = ParseTier(validated->minimum_isolation);
  // Cheap refusal first: a provider that could never meet the floor.
  if (floor && !MeetsFloor(facts.claimed, *floor)) {
    return BelowFloor(facts.claimed, *floor,
                      "this " + std::string(provider_->name()) + " provider");
  }
  if (!validated->environment.empty() && validated->environment != facts.environment) {
    return Refusal(NotDispatched::kEnvironment,
                   "The request requires environment " + validated->environment +
                       "; this provider has " +
                       (facts.environment.empty() ? std::string("none") : facts.environment) + ".");
  }

  // Evidence that failed a check proves nothing: collect it again (the wall
  // may have recovered) and refuse if it still fails.
  std::optional<Evidence> current = evidence();
  if (!current || !current->AllChecksPassed()) {
    auto collected = CollectEvidence();
    if (!collected.ok()) return collected.error();
    current = *collected;
  }
  // The floor is checked against the current evidence immediately before dispatch.
  if (floor && !MeetsFloor(current->tier, *floor)) {
    return BelowFloor(current->tier, *floor, "the current evidence");
  }

  RecordClock clock = RecordClock::Start();
  auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(validated->timeout_ms);
  auto result = provider_->Run(*validated, deadline);
  if (!result.ok()) return result.error();
  RecordClock::Span span = clock.Stop();

  result->provider = std::string(provider_->name());
  result->kind = *validated->kind();
  // Honesty: never report more than the evidence supports.
  if (CompareTiers(result->isolation, current->tier) > 0 || !IsRunnableTier(result->isolation)) {
    result->isolation = current->tier;
  }
  if (result->environment.empty()) result->environment = facts.environment;
  result->record = MakeRecord(request, *result, facts.policy, span);
  return result;
}

}  // namespace plimsoll
