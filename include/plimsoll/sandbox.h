// A Sandbox: one provider plus everything every caller needs around it.
//
// Sandbox::Run validates the request against the provider's limits, refuses
// floors the provider cannot meet (before and after collecting evidence),
// checks the required environment identity, runs the request with a
// deadline, reports the tier honestly (never above the evidence), and binds
// the answer to the request with a run record (SPEC §5). The CLI, the daemon
// and the conformance suite all run code through this class.
//
// Evidence collections (preflight + smoke test) run one at a time, so the
// evidence kept is always that of the collection that started last: a slow
// older check cannot overwrite a newer failure. A run that finds the
// evidence unconfirmed while a collection is under way waits for it and
// takes its answer instead of starting another.
//
// Thread-safety: all methods may be called from several threads at once.
//
// Usage:
//
//   auto sandbox = plimsoll::Sandbox::Open("embedded");
//   if (!sandbox.ok()) { ... }              // unknown provider name
//   plimsoll::Request request;
//   request.javascript = plimsoll::JavascriptPayload{"console.log(6*7)"};
//   plimsoll::Expected<plimsoll::Result> result = sandbox->Run(request);
//   if (!result.ok() && plimsoll::NotDispatchedReason(result.error())) {
//     // nothing ran
//   }
#ifndef PLIMSOLL_SANDBOX_H_
#define PLIMSOLL_SANDBOX_H_

#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include "plimsoll/provider.h"
#include "plimsoll/session.h"

namespace plimsoll {

class Sandbox {
 public:
  // Takes ownership of `provider`. Precondition: provider != nullptr.
  explicit Sandbox(std::unique_ptr<Provider> provider);
  ~Sandbox();
  Sandbox(Sandbox&&) noexcept;
  Sandbox& operator=(Sandbox&&) noexcept;

  // MakeProvider(name, limits, options) wrapped in a Sandbox. Defined in
  // libplimsoll, which links every provider; a program that links only the
  // Sandbox (plimsoll_sandbox) and one provider's library builds that provider
  // itself (e.g. MakeEmbeddedProvider, plimsoll/embedded_provider.h) and
  // hands it to the constructor.
  static Expected<Sandbox> Open(std::string_view provider_name, const Limits& limits = Limits{},
                                const ProviderOptions& options = {});

  Provider& provider() { return *provider_; }
  Description Describe() const;

  // Runs Preflight then SmokeTest (bounded by `budget`) and keeps the
  // evidence. Run() calls this itself the first time it needs evidence.
  // With a pinned environment, evidence of any other environment is a
  // failed check (the pin is re-checked at every collection).
  Expected<Evidence> CollectEvidence(std::chrono::milliseconds budget = kDefaultEvidenceBudget);

  // Pins the environment identity (`--pin-environment`): evidence of another
  // one is not confirmed, and every run is dispatched requiring it, so the
  // provider refuses (`environment`) rather than run anything else. "" unpins.
  // Takes effect at the next evidence collection and the next run.
  void PinEnvironment(std::string identity);

  // Names the image this sandbox serves (a daemon's `--image NAME=PATH`;
  // IsWellFormedImageName): a request or session naming another image is
  // refused `request` (nothing ran); one naming this one or none runs. An
  // unnamed sandbox (the default) refuses every named image. Call before
  // serving; Describe().image reports it.
  void NameImage(std::string name);
  std::string image_name() const;

  // The evidence collected last, if any.
  std::optional<Evidence> evidence() const;

  // Runs one request (see the file comment). Refusals carry NotDispatched.
  //
  // A request naming a grant profile runs only with `grant`, the broker's
  // grant of that profile to this run (the daemon and the CLI open it): with
  // none it is refused `permission`, on a provider without grants
  // `unsupported` (nothing ran either way). The result then carries
  // grant->Summary() and grant->Advice(), covered by its record. A `grant`
  // for a request naming no profile is not used.
  Expected<Result> Run(const Request& request, GrantedCalls* grant = nullptr);

  // Opens a session (plimsoll/session.h): checks the options (refusing
  // `request` for bad bounds or tier names), the provider's capability
  // (`unsupported`), the floor and the environment against the confirmed
  // evidence as Run does, then has the provider make the kept sandbox and
  // checks the floor against that sandbox's own tier. A session keeps the
  // image it was opened on: a call naming another one is refused `request`.
  Expected<std::unique_ptr<Session>> OpenSession(const SessionOptions& options);

  // The checks of `options` alone that OpenSession makes first (bounds, tier
  // names): Refusal(kRequest), or ok.
  static Status CheckSessionOptions(const SessionOptions& options);

  static constexpr std::chrono::milliseconds kDefaultEvidenceBudget{30'000};

 private:
  // What every run needs from the provider's description, taken once when
  // evidence is confirmed so the run path does not rebuild it per request.
  struct DispatchFacts {
    Limits limits;
    Tier claimed = Tier::kUnknown;
    std::string environment;
    std::string policy;   // PolicyDigest(limits)
    bool grants = false;  // Capabilities::grants
  };
  static DispatchFacts FactsFrom(const Description& description, const Evidence* evidence);
  DispatchFacts CurrentFacts() const;
  std::string pinned() const;
  // Confirmed evidence for a run: the kept one, else the answer of the
  // collection under way (waited for), else a new collection's.
  Expected<Evidence> ConfirmedEvidence();
  // The environment a dispatch requires: `requested`, or the pin (a request
  // for anything else than the pin is refused).
  Expected<std::string> RequiredEnvironment(const std::string& requested) const;

  std::unique_ptr<Provider> provider_;
  // Guards evidence_, facts_, pinned_, image_name_ and collections_; boxed so Sandbox can move.
  mutable std::unique_ptr<std::mutex> mutex_;
  // Held for a whole collection, so collections run one at a time.
  std::unique_ptr<std::mutex> collecting_;
  std::optional<Evidence> evidence_;
  std::optional<DispatchFacts> facts_;  // set with confirmed evidence
  std::string pinned_;
  std::string image_name_;
  uint64_t collections_ = 0;  // finished collections, for ConfirmedEvidence
};

}  // namespace plimsoll

#endif  // PLIMSOLL_SANDBOX_H_
