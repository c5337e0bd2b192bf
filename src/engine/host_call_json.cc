#include "engine/host_call_json.h"

#include <nlohmann/json.hpp>

#include "base/utf8.h"
#include "wire/base64.h"
#include "wire/json_reader.h"

namespace plimsoll::engine {
namespace {

using Json = nlohmann::json;

Error Unreadable(std::string message) {
  return Refusal(NotDispatched::kRequest, std::move(message));
}

}  // namespace

Expected<HostCallRequest> ParseHostCallRequest(std::string_view text) {
  // Guest input, read in the daemon's process: nesting bounded and keys
  // unique (wire/json_reader.h), so the body dumped below is shallow.
  wire::Problem problem;
  std::optional<Json> read = wire::ParseJsonBody(text, problem);
  if (!read) {
    return Unreadable("The host call is not JSON the host reads: " + *problem.message);
  }
  const Json& parsed = *read;
  if (!parsed.is_object()) {
    return Unreadable("A host call takes an object: {method, path, body?, content_type?}.");
  }
  for (const auto& [key, value] : parsed.items()) {
    if (key == "method" || key == "path" || key == "content_type") {
      if (!value.is_string()) return Unreadable("The host call's " + key + " must be a string.");
    } else if (key != "body") {
      return Unreadable(
          "The host call has a key it does not take (it takes method, path, body and "
          "content_type).");
    }
  }
  if (!parsed.contains("method")) return Unreadable("The host call needs a method (e.g. \"GET\").");
  if (!parsed.contains("path")) {
    return Unreadable("The host call needs a path (e.g. \"/items/42\").");
  }
  HostCallRequest request;
  request.method = parsed.at("method").get<std::string>();
  request.path = parsed.at("path").get<std::string>();
  if (parsed.contains("content_type")) {
    request.content_type = parsed.at("content_type").get<std::string>();
  }
  if (auto body = parsed.find("body"); body != parsed.end() && !body->is_null()) {
    if (body->is_string()) {
      request.body = body->get<std::string>();
    } else {
      request.body = body->dump();
      if (request.content_type.empty()) request.content_type = "application/json";
    }
  }
  return request;
}

HostAnswer ScriptAnswer(const HostCallAnswer& answer) {
  if (!answer.refused.empty()) return HostAnswer{.ok = false, .body = answer.message};
  Json out = Json::object();
  out["status"] = answer.status;
  out["content_type"] = base::IsValidUtf8(answer.content_type) ? answer.content_type : "";
  if (base::IsValidUtf8(answer.body)) {
    out["body"] = answer.body;
  } else {
    out["body_base64"] = wire::EncodeBase64(answer.body);
  }
  out["truncated"] = answer.truncated;
  return HostAnswer{.ok = true, .body = out.dump()};
}

}  // namespace plimsoll::engine
