#include "providers/embedded/host_call_bridge.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/utf8.h"
#include "wire/base64.h"

namespace plimsoll {
namespace {

using Json = nlohmann::json;

engine::HostAnswer Refuse(std::string message) {
  return engine::HostAnswer{.ok = false, .body = std::move(message)};
}

// The call the script asked for, or the reason it cannot be read.
struct GuestCall {
  std::string method;
  std::string path;
  std::string body;
  std::string content_type;
};

std::optional<std::string> ReadCall(std::string_view request, GuestCall& call) {
  Json parsed = Json::parse(request, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) {
    return "A host call takes an object: {method, path, body?, content_type?}.";
  }
  for (const auto& [key, value] : parsed.items()) {
    if (key == "method" || key == "path" || key == "content_type") {
      if (!value.is_string()) return "The host call's " + key + " must be a string.";
    } else if (key != "body") {
      return "The host call has a key it does not take (it takes method, path, body and "
             "content_type).";
    }
  }
  if (!parsed.contains("method")) return "The host call needs a method (e.g. \"GET\").";
  if (!parsed.contains("path")) return "The host call needs a path (e.g. \"/items/42\").";
  call.method = parsed["method"].get<std::string>();
  call.path = parsed["path"].get<std::string>();
  if (parsed.contains("content_type"))
    call.content_type = parsed["content_type"].get<std::string>();
  if (auto body = parsed.find("body"); body != parsed.end() && !body->is_null()) {
    if (body->is_string()) {
      call.body = body->get<std::string>();
    } else {
      call.body = body->dump();
      if (call.content_type.empty()) call.content_type = "application/json";
    }
  }
  return std::nullopt;
}

std::string AnswerJson(const HostCallAnswer& answer) {
  Json out = Json::object();
  out["status"] = answer.status;
  out["content_type"] = answer.content_type;
  if (base::IsValidUtf8(answer.body)) {
    out["body"] = answer.body;
  } else {
    out["body_base64"] = wire::EncodeBase64(answer.body);
  }
  out["truncated"] = answer.truncated;
  return out.dump();
}

}  // namespace

engine::HostCallHandler HostCallBridge(GrantedCalls& calls,
                                       std::chrono::steady_clock::time_point deadline) {
  return [&calls, deadline](std::string_view request) {
    GuestCall call;
    if (auto problem = ReadCall(request, call)) return Refuse(std::move(*problem));
    HostCallAnswer answer =
        calls.Call(call.method, call.path, call.body, call.content_type, deadline);
    if (!answer.refused.empty()) return Refuse(std::move(answer.message));
    return engine::HostAnswer{.ok = true, .body = AnswerJson(answer)};
  };
}

}  // namespace plimsoll
