#include "providers/disabled/disabled_provider.h"

namespace plimsoll {
namespace {

constexpr std::string_view kHowToChoose =
    "Code execution is disabled: no provider is configured. Choose one with --provider NAME or "
    "SANDBOX_PROVIDER=NAME (for a quick local try: --provider embedded, tier process, which is no "
    "wall for hostile code).";

class DisabledProvider final : public Provider {
 public:
  explicit DisabledProvider(const Limits& limits) : limits_(limits) {}

  std::string_view name() const override { return "disabled"; }

  Description Describe() const override {
    Description description;
    description.provider = "disabled";
    description.tier = Tier::kNone;
    description.limits = limits_;
    description.details.emplace_back("note", std::string(kHowToChoose));
    return description;
  }

  Status Reconcile() override { return Status::Ok(); }
  Status Preflight() override { return Status::Ok(); }

  Expected<Evidence> SmokeTest(Deadline /*deadline*/) override {
    Evidence evidence;
    evidence.tier = Tier::kNone;
    evidence.summary = "Execution is disabled; nothing runs.";
    return evidence;
  }

  Expected<Result> Run(const Request& /*request*/, Deadline /*deadline*/) override {
    return Refusal(NotDispatched::kUnsupported, std::string(kHowToChoose));
  }

 private:
  Limits limits_;
};

}  // namespace

std::unique_ptr<Provider> MakeDisabledProvider(const Limits& limits) {
  return std::make_unique<DisabledProvider>(limits);
}

}  // namespace plimsoll
