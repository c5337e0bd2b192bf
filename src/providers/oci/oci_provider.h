// The `oci` provider: plimsoll's agent in containers started by runc or
// crun (tier container) or runsc, gVisor (tier kernel), from bundles we write,
// with a warm pool. See docs/oci-provider.md.
//
// Configuration (environment, read once at construction):
//   SANDBOX_OCI_RUNTIME         runc | crun | runsc (default runc); the
//                               provider name "oci:<runtime>" overrides it
//   SANDBOX_OCI_POOL_SIZE       sandboxes started ahead (default 2; 0: off)
//   SANDBOX_OCI_RUNTIME_BINARY  the runtime's binary, by absolute path
//                               (default: looked up, runtime.h)
//   SANDBOX_OCI_RUNSC_PLATFORM  ptrace | systrap | kvm (default: systrap when
//                               the runsc version has it, else ptrace)
//   SANDBOX_OCI_STATE_DIR       runtime state roots and bundles (default
//                               /run/plimsoll/oci)
#ifndef PLIMSOLL_PROVIDERS_OCI_OCI_PROVIDER_H_
#define PLIMSOLL_PROVIDERS_OCI_OCI_PROVIDER_H_

#include <memory>
#include <string>
#include <string_view>

#include "plimsoll/provider.h"
#include "providers/oci/bundle.h"
#include "providers/oci/runtime.h"

namespace plimsoll {

struct OciSettings {
  oci::RuntimeKind runtime = oci::RuntimeKind::kRunc;
  oci::RuntimeOptions runtime_options;
  size_t pool_size = 2;
  std::string image_directory;  // the guest image; "" = image::LocateDefaultImage()
};

// The settings from the environment; `variant` ("runc", "crun", "runsc"; ""
// for none) overrides SANDBOX_OCI_RUNTIME. Bad values are refusals
// (kEnvironment) naming the variable.
Expected<OciSettings> OciSettingsFromEnvironment(std::string_view variant);

// Cheap: nothing is touched until Reconcile/Preflight/SmokeTest/Run.
std::unique_ptr<Provider> MakeOciProvider(const Limits& limits, const OciSettings& settings);

}  // namespace plimsoll

#endif  // PLIMSOLL_PROVIDERS_OCI_OCI_PROVIDER_H_
