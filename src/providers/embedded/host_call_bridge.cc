#include "providers/embedded/host_call_bridge.h"

#include <string_view>

#include "engine/host_call_json.h"

namespace plimsoll {

engine::HostCallHandler HostCallBridge(GrantedCalls& calls,
                                       std::chrono::steady_clock::time_point deadline) {
  return [&calls, deadline](std::string_view text) {
    auto request = engine::ParseHostCallRequest(text);
    if (!request.ok()) return engine::HostAnswer{.ok = false, .body = request.error().message()};
    return engine::ScriptAnswer(
        calls.Call(request->method, request->path, request->body, request->content_type, deadline));
  };
}

}  // namespace plimsoll
