// The embedded provider's side of a granted run (SPEC §8): the engine's
// host_call import (JavaScript's host.call / host.get / host.post) turned
// into GrantedCalls::Call, and the answer turned back into what the script
// receives.
//
// The request and answer JSON are engine/host_call_json.h's, the same as
// the image's qjs sends through the relay's socket.
//
// Usage:
//
//   engine::Limits limits;
//   limits.host_call = HostCallBridge(calls, deadline);
#ifndef PLIMSOLL_PROVIDERS_EMBEDDED_HOST_CALL_BRIDGE_H_
#define PLIMSOLL_PROVIDERS_EMBEDDED_HOST_CALL_BRIDGE_H_

#include <chrono>

#include "engine/engine.h"
#include "plimsoll/granted_calls.h"

namespace plimsoll {

// A handler that forwards each host call to `calls`, bounded by `deadline`.
// `calls` must outlive the handler.
engine::HostCallHandler HostCallBridge(GrantedCalls& calls,
                                       std::chrono::steady_clock::time_point deadline);

}  // namespace plimsoll

#endif  // PLIMSOLL_PROVIDERS_EMBEDDED_HOST_CALL_BRIDGE_H_
