// The embedded provider's side of a granted run (SPEC §8): the engine's
// host_call import (JavaScript's host.call / host.get / host.post) turned
// into GrantedCalls::Call, and the answer turned back into what the script
// receives.
//
// The script's request is the JSON of the object it passed:
//   {"method": "GET", "path": "/items/42"}
//   {"method": "POST", "path": "/items", "body": {"name": "x"}}
//   {"method": "POST", "path": "/notes", "body": "text", "content_type": "text/plain"}
// `body` is a string sent as it is, or any other JSON value sent as its JSON
// text with content type application/json unless `content_type` says
// otherwise. A request the bridge cannot read (not an object, another key,
// a missing or mistyped method or path) never reaches the broker: the
// script's call throws Error with code "refused" and a message naming the
// problem. Anything it can read goes to the broker, which checks it and
// counts it, allowed or not.
//
// An answer the upstream gave (any status) reaches the script as
//   {"status": 200, "content_type": "application/json", "body": "...",
//    "truncated": false}
// with `body_base64` instead of `body` when the bytes are not UTF-8. A call
// the broker refused (or could not complete) throws Error with code
// "refused" and the broker's message.
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
