// The `embedded` provider: QuickJS behind a WebAssembly wall, inside this
// process (tier `process`, SPEC §1).
//
// JavaScript snippets, and of projects only exams with JavaScript controllers
// (docs/exams.md); `python`, other `project`s and `cell` payloads are refused
// as `unsupported` (nothing ran). Every run gets a fresh engine
// instance (src/engine/engine.h). The wall is the bounds-checked linear
// memory of the wasm module; there is no operating-system wall, so `process`
// is no wall for hostile code and the provider says so in its evidence.
//
// Usage (links plimsoll_sandbox and plimsoll_embedded_provider only, no
// OS-level provider; examples/minimal):
//   plimsoll::Sandbox sandbox(plimsoll::MakeEmbeddedProvider(plimsoll::Limits{}));
//   // or plimsoll::Sandbox::Open("embedded"), which links every provider
#ifndef PLIMSOLL_EMBEDDED_PROVIDER_H_
#define PLIMSOLL_EMBEDDED_PROVIDER_H_

#include <memory>
#include <string>

#include "plimsoll/provider.h"

namespace plimsoll {

std::unique_ptr<Provider> MakeEmbeddedProvider(const Limits& limits);

// The environment identity of the embedded engine build:
// "sha256:" + the SHA-256 of the wasm module.
std::string EmbeddedEnvironment();

}  // namespace plimsoll

#endif  // PLIMSOLL_EMBEDDED_PROVIDER_H_
