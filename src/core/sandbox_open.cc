// Sandbox::Open: a Sandbox around the provider MakeProvider names. Apart from
// sandbox.cc so that the Sandbox itself (plimsoll_sandbox) links no provider;
// this file is in `plimsoll`, which links them all (src/CMakeLists.txt).
#include "plimsoll/sandbox.h"

namespace plimsoll {

Expected<Sandbox> Sandbox::Open(std::string_view provider_name, const Limits& limits,
                                const ProviderOptions& options) {
  auto provider = MakeProvider(provider_name, limits, options);
  if (!provider.ok()) return provider.error();
  return Sandbox(std::move(*provider));
}

}  // namespace plimsoll
