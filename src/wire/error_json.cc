// ErrorToJson / ParseErrorJson: the error answer of SPEC §4.
#include <string>

#include "plimsoll/wire.h"
#include "wire/json_reader.h"
#include "wire/json_writer.h"

namespace plimsoll {
namespace {

using wire::FieldReader;
using wire::Json;
using wire::OrderedJson;
using wire::Problem;

Error Unreadable(const std::string& message) {
  return Failure(ErrorCode::kDataLoss, "The error answer is not well-formed: " + message);
}

Expected<ErrorAnswer> ReadError(std::string_view body) {
  Problem problem;
  std::optional<Json> root = wire::ParseJsonBody(body, problem);
  if (!root) return Unreadable(*problem.message);
  if (!root->is_object())
    return Unreadable("the body is " + std::string(wire::DescribeType(*root)) + ".");
  FieldReader top(*root, "", problem, /*null_is_absent=*/false);
  const Json* object = top.Object("error", wire::kRequired);
  if (object == nullptr) return Unreadable(*problem.message);

  FieldReader fields(*object, "error", problem, /*null_is_absent=*/false);
  std::string code_name = fields.String("code", wire::kRequired);
  std::string message = fields.String("message", wire::kRequired);
  std::string reason_name = fields.String("not_dispatched", wire::kOptional);
  bool has_reason = fields.Find("not_dispatched") != nullptr;
  std::string id = fields.String("request_id", wire::kOptional);
  if (problem) return Unreadable(*problem.message);

  std::optional<ErrorCode> code = ParseErrorCode(code_name);
  if (!code) return Unreadable("error.code \"" + code_name + "\" is not a known code.");
  std::optional<NotDispatched> reason;
  if (has_reason) {
    reason = ParseNotDispatched(reason_name);
    if (!reason) {
      return Unreadable("error.not_dispatched \"" + reason_name + "\" is not a known reason.");
    }
  }
  return ErrorAnswer{Error(*code, std::move(message), reason), std::move(id)};
}

}  // namespace

std::string ErrorToJson(const Error& error, std::string_view request_id) {
  OrderedJson inner = OrderedJson::object();
  inner["code"] = ErrorCodeName(error.code());
  inner["message"] = error.message();
  if (error.not_dispatched()) inner["not_dispatched"] = NotDispatchedName(*error.not_dispatched());
  if (!request_id.empty()) inner["request_id"] = std::string(request_id);
  OrderedJson out = OrderedJson::object();
  out["error"] = std::move(inner);
  return wire::Dump(out);
}

Expected<ErrorAnswer> ParseErrorJson(std::string_view body) {
  try {
    return ReadError(body);
  } catch (const std::exception& error) {
    return Failure(ErrorCode::kDataLoss,
                   std::string("The error answer could not be read: ") + error.what() + ".");
  }
}

}  // namespace plimsoll
