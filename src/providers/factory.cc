// MakeProvider and ProviderNames: the one place that knows every provider.
#include <cstdlib>
#include <string>

#include "plimsoll/provider.h"
#include "providers/disabled/disabled_provider.h"
#include "plimsoll/embedded_provider.h"
#include "providers/linux/linux_provider.h"
#include "providers/microvm/microvm_provider.h"
#include "providers/oci/oci_provider.h"

namespace plimsoll {
std::vector<std::string_view> ProviderNames() {
  return {"disabled", "embedded", "linux", "oci", "microvm"};
}

Expected<std::unique_ptr<Provider>> MakeProvider(std::string_view name, const Limits& limits,
                                                 const ProviderOptions& options) {
  auto no_image = [&]() -> Status {
    if (options.image_directory.empty()) return Status::Ok();
    return Failure(ErrorCode::kInvalidArgument,
                   "The " + std::string(name) + " provider cannot run the guest image " +
                       options.image_directory +
                       (name == "microvm"
                            ? " (its artifacts are built from one image: docs/microvm.md)."
                            : " (it runs no guest image)."));
  };
  if (name == "disabled" || name == "embedded" || name == "microvm") {
    PLIMSOLL_RETURN_IF_ERROR(no_image());
  }
  if (name == "disabled") return MakeDisabledProvider(limits);
  if (name == "embedded") return MakeEmbeddedProvider(limits);
  if (name == "linux") return MakeLinuxProvider(limits, options.image_directory);
  // "oci" takes its runtime from SANDBOX_OCI_RUNTIME; "oci:runsc" names it.
  if (name == "oci" || name.rfind("oci:", 0) == 0) {
    auto settings = OciSettingsFromEnvironment(name.size() > 4 ? name.substr(4) : "");
    if (!settings.ok()) return settings.error();
    settings->image_directory = options.image_directory;
    return MakeOciProvider(limits, *settings);
  }
  // "microvm" takes its accelerator and pool size from SANDBOX_MICROVM_*.
  if (name == "microvm") return MakeMicrovmProvider(limits);
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
