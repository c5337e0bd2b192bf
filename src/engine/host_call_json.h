// The JSON of JavaScript's host.call on every tier (SPEC §8): what a script
// asks for and what it gets back, read and written in one place so the
// embedded engine (the broker in process, providers/embedded/
// host_call_bridge.h) and the image's qjs (the relay's socket,
// socket_host_call.h) behave the same.
//
// The request is the JSON of the object the script passed:
//   {"method": "GET", "path": "/items/42"}
//   {"method": "POST", "path": "/items", "body": {"name": "x"}}
//   {"method": "POST", "path": "/notes", "body": "text", "content_type": "text/plain"}
// `body` is a string sent as it is, or any other JSON value sent as its JSON
// text with content type application/json unless `content_type` says
// otherwise. Another key, a repeated key, nesting deeper than
// wire::kMaxJsonDepth (the request is guest input the daemon parses), or a
// missing or mistyped method or path, is refused before anything is sent.
//
// An answer the upstream gave (any status) reaches the script as
//   {"status": 200, "content_type": "application/json", "body": "...",
//    "truncated": false}
// with `body_base64` instead of `body` when the bytes are not UTF-8. A call
// the broker refused or could not complete throws Error with code
// "refused" and the broker's message.
//
// Thread-safety: pure functions.
#ifndef PLIMSOLL_ENGINE_HOST_CALL_JSON_H_
#define PLIMSOLL_ENGINE_HOST_CALL_JSON_H_

#include <string>
#include <string_view>

#include "engine/engine.h"
#include "plimsoll/error.h"
#include "plimsoll/granted_calls.h"

namespace plimsoll::engine {

struct HostCallRequest {
  std::string method;
  std::string path;
  std::string body;
  std::string content_type;  // "" for none
};

// Errors: Refusal(kRequest, a whole sentence naming the problem).
Expected<HostCallRequest> ParseHostCallRequest(std::string_view json);

// What the script's call returns or throws for `answer`.
HostAnswer ScriptAnswer(const HostCallAnswer& answer);

}  // namespace plimsoll::engine

#endif  // PLIMSOLL_ENGINE_HOST_CALL_JSON_H_
