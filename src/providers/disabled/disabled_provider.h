// The `disabled` provider: runs nothing (tier `none`).
//
// It is what the library, the CLI and the daemon use when no provider is
// configured, so code execution is never on by accident (SPEC §1). Every run
// is refused as `unsupported`, and the refusal says how to choose a provider.
//
// Usage:
//   auto provider = plimsoll::MakeDisabledProvider(plimsoll::Limits{});
//   provider->Run(request, deadline);  // Refusal(kUnsupported, ...)
#ifndef PLIMSOLL_PROVIDERS_DISABLED_DISABLED_PROVIDER_H_
#define PLIMSOLL_PROVIDERS_DISABLED_DISABLED_PROVIDER_H_

#include <memory>

#include "plimsoll/provider.h"

namespace plimsoll {

std::unique_ptr<Provider> MakeDisabledProvider(const Limits& limits);

}  // namespace plimsoll

#endif  // PLIMSOLL_PROVIDERS_DISABLED_DISABLED_PROVIDER_H_
