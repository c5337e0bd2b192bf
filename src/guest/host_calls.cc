#include "guest/host_calls.h"

#include <limits>

#include "guest/protocol.h"
#include "wire/json_reader.h"
#include "wire/json_writer.h"

namespace plimsoll::guest {
namespace {

using wire::FieldReader;
using wire::Json;
using wire::OrderedJson;
using wire::Problem;

// The JSON after `prefix`, parsed strictly, or the problem.
std::optional<Json> Body(std::string_view frame, std::string_view prefix, std::string_view what,
                         Problem& problem) {
  if (!frame.starts_with(prefix)) {
    problem.Set(std::string(what) + " does not start as one.");
    return std::nullopt;
  }
  std::optional<Json> root = wire::ParseJsonBody(frame.substr(prefix.size()), problem);
  if (root && !root->is_object()) {
    problem.Set(std::string(what) + " is not a JSON object.");
    return std::nullopt;
  }
  return root;
}

std::string Bounded(FieldReader& fields, std::string_view key, size_t most, Problem& problem) {
  std::string value = fields.Bytes(key, wire::kRequired);
  if (!problem && value.size() > most) {
    problem.Set(fields.PathOf(key) + " is longer than " + std::to_string(most) + " bytes.");
  }
  return value;
}

Error Malformed(std::string_view what, const Problem& problem) {
  return Failure(ErrorCode::kDataLoss,
                 std::string(what) + " is malformed: " + problem.message.value_or("?"));
}

}  // namespace

bool IsHostCallFrame(std::string_view frame) {
  return frame.starts_with(kHostCallPrefix);
}

std::string EncodeHostCall(const HostCall& call) {
  OrderedJson out = OrderedJson::object();
  out["id"] = call.id;
  out["method"] = wire::WriteBytes(call.method);
  out["path"] = wire::WriteBytes(call.path);
  out["content_type"] = wire::WriteBytes(call.content_type);
  out["body"] = wire::WriteBytes(call.body);
  return std::string(kHostCallPrefix) + wire::Dump(out);
}

Expected<HostCall> DecodeHostCall(std::string_view frame) {
  constexpr std::string_view kWhat = "A host call frame";
  Problem problem;
  std::optional<Json> root = Body(frame, kHostCallPrefix, kWhat, problem);
  if (!root) return Malformed(kWhat, problem);
  FieldReader fields(*root, "", problem, /*null_is_absent=*/false);
  fields.RejectUnknown({"id", "method", "path", "content_type", "body"});
  HostCall call;
  call.id = fields.Integer("id", wire::kRequired);
  call.method = Bounded(fields, "method", kMaxHostCallField, problem);
  call.path = Bounded(fields, "path", kMaxHostCallPath, problem);
  call.content_type = Bounded(fields, "content_type", kMaxHostCallField, problem);
  call.body = Bounded(fields, "body", kMaxHostCallBody, problem);
  if (!problem && call.id < 1) problem.Set("id must be at least 1.");
  if (problem) return Malformed(kWhat, problem);
  return call;
}

std::string EncodeHostAnswer(int64_t id, const HostCallAnswer& answer) {
  OrderedJson out = OrderedJson::object();
  out["id"] = id;
  out["status"] = answer.status;
  out["content_type"] = wire::WriteBytes(answer.content_type);
  out["body"] = wire::WriteBytes(answer.body);
  out["truncated"] = answer.truncated;
  out["refused"] = wire::WriteBytes(answer.refused);
  out["message"] = wire::WriteBytes(answer.message);
  return std::string(kHostAnswerPrefix) + wire::Dump(out);
}

Expected<HostCallAnswer> DecodeHostAnswer(std::string_view frame, int64_t id) {
  constexpr std::string_view kWhat = "A host answer frame";
  Problem problem;
  std::optional<Json> root = Body(frame, kHostAnswerPrefix, kWhat, problem);
  if (!root) return Malformed(kWhat, problem);
  FieldReader fields(*root, "", problem, /*null_is_absent=*/false);
  fields.RejectUnknown({"id", "status", "content_type", "body", "truncated", "refused", "message"});
  int64_t answered = fields.Integer("id", wire::kRequired);
  HostCallAnswer answer;
  int64_t status = fields.Integer("status", wire::kRequired);
  answer.content_type = Bounded(fields, "content_type", kMaxHostCallField, problem);
  answer.body = Bounded(fields, "body", kMaxHostAnswerBody, problem);
  answer.truncated = fields.Boolean("truncated", wire::kRequired);
  answer.refused = Bounded(fields, "refused", kMaxHostCallField, problem);
  answer.message = Bounded(fields, "message", kMaxHostAnswerMessage, problem);
  if (!problem && answered != id) {
    problem.Set("it answers call " + std::to_string(answered) + ", not call " + std::to_string(id) +
                ".");
  }
  if (!problem && (status < 0 || status > 999)) problem.Set("status is not an HTTP status.");
  if (problem) return Malformed(kWhat, problem);
  answer.status = static_cast<int>(status);
  return answer;
}

Expected<std::string> ReadFrameAnsweringHostCalls(int fd, GrantedCalls* calls,
                                                  std::chrono::steady_clock::time_point deadline) {
  auto frame = ReadFrame(fd, deadline);
  while (frame.ok() && IsHostCallFrame(*frame)) {
    if (calls == nullptr) {
      return Failure(ErrorCode::kDataLoss,
                     "The agent sent a host call, but this run has no grant.");
    }
    auto call = DecodeHostCall(*frame);
    if (!call.ok()) return call.error();
    HostCallAnswer answer =
        calls->Call(call->method, call->path, call->body, call->content_type, deadline);
    PLIMSOLL_RETURN_IF_ERROR(WriteFrame(fd, EncodeHostAnswer(call->id, answer), deadline));
    frame = ReadFrame(fd, deadline);
  }
  return frame;
}

}  // namespace plimsoll::guest
