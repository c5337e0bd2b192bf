// A Sandbox: one provider plus everything every caller needs around it.
//
// Sandbox::Run validates the request against the provider's limits, refuses
// floors the provider cannot meet (before and after collecting evidence),
// checks the required environment identity, runs the request with a
// deadline, reports the tier honestly (never above the evidence), and binds
// the answer to the request with a run record (SPEC §5). The CLI, the daemon
// and the conformance suite all run code through this class.
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

namespace plimsoll {

class Sandbox {
 public:
  // Takes ownership of `provider`. Precondition: provider != nullptr.
  explicit Sandbox(std::unique_ptr<Provider> provider);
  ~Sandbox();
  Sandbox(Sandbox&&) noexcept;
  Sandbox& operator=(Sandbox&&) noexcept;

  // MakeProvider(name, limits) wrapped in a Sandbox.
  static Expected<Sandbox> Open(std::string_view provider_name, const Limits& limits = Limits{});

  Provider& provider() { return *provider_; }
  Description Describe() const;

  // Runs Preflight then SmokeTest (bounded by `budget`) and keeps the
  // evidence. Run() calls this itself the first time it needs evidence.
  Expected<Evidence> CollectEvidence(std::chrono::milliseconds budget = kDefaultEvidenceBudget);

  // The evidence collected last, if any.
  std::optional<Evidence> evidence() const;

  // Runs one request (see the file comment). Refusals carry NotDispatched.
  Expected<Result> Run(const Request& request);

  static constexpr std::chrono::milliseconds kDefaultEvidenceBudget{30'000};

 private:
  // What every run needs from the provider's description, taken once when
  // evidence is confirmed so the run path does not rebuild it per request.
  struct DispatchFacts {
    Limits limits;
    Tier claimed = Tier::kUnknown;
    std::string environment;
    std::string policy;  // PolicyDigest(limits)
  };
  static DispatchFacts FactsFrom(const Description& description);
  DispatchFacts CurrentFacts() const;

  std::unique_ptr<Provider> provider_;
  mutable std::unique_ptr<std::mutex>
      mutex_;  // guards evidence_ and facts_; boxed so Sandbox can move
  std::optional<Evidence> evidence_;
  std::optional<DispatchFacts> facts_;  // set with confirmed evidence
};

}  // namespace plimsoll

#endif  // PLIMSOLL_SANDBOX_H_
