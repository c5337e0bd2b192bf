// MakeProvider and ProviderNames: the one place that knows every provider.
#include <cstdlib>
#include <string>

#include "plimsoll/provider.h"
#include "providers/disabled/disabled_provider.h"
#include "providers/embedded/embedded_provider.h"
#include "providers/linux/linux_provider.h"

namespace plimsoll {

std::vector<std::string_view> ProviderNames() {
  return {"disabled", "embedded", "linux"};
}

Expected<std::unique_ptr<Provider>> MakeProvider(std::string_view name, const Limits& limits) {
  if (name == "disabled") return MakeDisabledProvider(limits);
  if (name == "embedded") return MakeEmbeddedProvider(limits);
  if (name == "linux") return MakeLinuxProvider(limits);
  std::string valid;
  for (std::string_view known : ProviderNames()) {
    if (!valid.empty()) valid += ", ";
    valid += known;
  }
  return Refusal(
      NotDispatched::kUnsupported, ErrorCode::kInvalidArgument,
      "Unknown provider \"" + std::string(name) + "\"; valid providers are: " + valid + ".");
}

std::string ProviderNameFromEnvironment() {
  const char* value = std::getenv("SANDBOX_PROVIDER");
  if (value == nullptr || *value == '\0') return "disabled";
  return value;
}

}  // namespace plimsoll
