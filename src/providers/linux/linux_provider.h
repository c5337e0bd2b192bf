// The `linux` provider: plimsoll's own namespace sandbox (tier container).
// See docs/linux-provider.md for the wall, the evidence and the leftovers.
#ifndef PLIMSOLL_PROVIDERS_LINUX_LINUX_PROVIDER_H_
#define PLIMSOLL_PROVIDERS_LINUX_LINUX_PROVIDER_H_

#include <memory>
#include <string>

#include "plimsoll/provider.h"

namespace plimsoll {

// Cheap: nothing is touched until Reconcile/Preflight/SmokeTest/Run.
// `image_directory`: the guest image to run ("" = image::LocateDefaultImage()).
std::unique_ptr<Provider> MakeLinuxProvider(const Limits& limits,
                                            std::string image_directory = {});

}  // namespace plimsoll

#endif  // PLIMSOLL_PROVIDERS_LINUX_LINUX_PROVIDER_H_
