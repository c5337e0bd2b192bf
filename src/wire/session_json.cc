// The session bodies of SPEC §9: the open request, and the open, state and
// close answers.
#include <string>

#include "plimsoll/wire.h"
#include "wire/json_reader.h"
#include "wire/json_writer.h"

namespace plimsoll {
namespace {

using wire::FieldReader;
using wire::OrderedJson;
using wire::Problem;

// 16..64 bytes of HMAC as lowercase hex.
bool IsOwnerDigest(const std::string& owner) {
  if (owner.size() < 32 || owner.size() > 128 || owner.size() % 2 != 0) return false;
  return owner.find_first_not_of("0123456789abcdef") == std::string::npos;
}

OrderedJson Identity(const SessionInfo& info) {
  OrderedJson out = OrderedJson::object();
  out["session_id"] = info.id;
  out["provider"] = info.provider;
  out["isolation"] = TierName(info.isolation);
  out["environment"] = info.environment;
  if (!info.image.empty()) out["image"] = info.image;
  out["created_unix_ms"] = info.created_unix_ms;
  out["expires_unix_ms"] = info.expires_unix_ms;
  out["idle_timeout_ms"] = info.idle_timeout_ms;
  return out;
}

}  // namespace

Expected<SessionOpenRequest> ParseSessionOpenJson(std::string_view body) {
  Problem problem;
  std::optional<wire::Json> root = wire::ParseJsonBody(body, problem);
  if (!root) return Refusal(NotDispatched::kRequest, *problem.message);
  if (!root->is_object()) {
    return Refusal(NotDispatched::kRequest, "The body must be a JSON object, not " +
                                                std::string(wire::DescribeType(*root)) + ".");
  }
  PLIMSOLL_RETURN_IF_ERROR(wire::CheckProtocol(*root));
  FieldReader fields(*root, "", problem, /*null_is_absent=*/true);
  fields.RejectUnknown({"protocol", "minimum_isolation", "environment", "image", "owner",
                        "lifetime_ms", "idle_timeout_ms"});
  SessionOpenRequest request;
  request.protocol = fields.Integer("protocol", wire::kRequired);
  request.options.minimum_isolation = fields.String("minimum_isolation", wire::kOptional);
  request.options.environment = fields.String("environment", wire::kOptional);
  request.options.image = fields.String("image", wire::kOptional);
  request.owner = fields.String("owner", wire::kOptional);
  request.options.lifetime_ms = fields.Integer("lifetime_ms", wire::kOptional);
  request.options.idle_timeout_ms = fields.Integer("idle_timeout_ms", wire::kOptional);
  if (problem) return Refusal(NotDispatched::kRequest, *problem.message);
  // An empty string is not "no owner" (that is absent or null): the contract's
  // pattern refuses it, and so does the daemon, so a client whose HMAC came
  // out empty learns of its bug instead of opening an ownerless session.
  const bool owner_sent = root->contains("owner") && !(*root)["owner"].is_null();
  if ((owner_sent || !request.owner.empty()) && !IsOwnerDigest(request.owner)) {
    return Refusal(NotDispatched::kRequest,
                   "owner must be lowercase hex of an HMAC (32 to 128 hex digits) that the client "
                   "computed from the end user's name; the daemon never takes a raw name.");
  }
  return request;
}

std::string SessionOpenToJson(const SessionOpenRequest& request) {
  OrderedJson out = OrderedJson::object();
  out["protocol"] = request.protocol;
  if (!request.options.minimum_isolation.empty()) {
    out["minimum_isolation"] = request.options.minimum_isolation;
  }
  if (!request.options.environment.empty()) out["environment"] = request.options.environment;
  if (!request.options.image.empty()) out["image"] = request.options.image;
  if (!request.owner.empty()) out["owner"] = request.owner;
  if (request.options.lifetime_ms != 0) out["lifetime_ms"] = request.options.lifetime_ms;
  if (request.options.idle_timeout_ms != 0) {
    out["idle_timeout_ms"] = request.options.idle_timeout_ms;
  }
  return wire::Dump(out);
}

std::string SessionOpenedToJson(const SessionInfo& info, const Limits& limits) {
  OrderedJson out = Identity(info);
  out["limits"] = wire::WriteLimits(limits);
  return wire::Dump(out);
}

std::string SessionStateToJson(const SessionInfo& info) {
  OrderedJson out = Identity(info);
  out["calls"] = info.calls;
  out["busy"] = info.busy;
  out["queued"] = info.queued;
  out["last_used_unix_ms"] = info.last_used_unix_ms;
  out["disk_used_bytes"] = info.disk_used_bytes;
  out["disk_bytes"] = info.disk_bytes;
  OrderedJson interpreters = OrderedJson::array();
  for (const std::string& language : info.interpreters) interpreters.push_back(language);
  out["interpreters"] = std::move(interpreters);
  out["last_record_sha256"] = info.last_record_sha256;
  return wire::Dump(out);
}

std::string SessionCloseToJson(const SessionClose& close) {
  OrderedJson out = OrderedJson::object();
  out["ended"] = SessionEndReasonName(close.ended);
  out["calls"] = close.calls;
  out["last_record_sha256"] = close.last_record_sha256;
  return wire::Dump(out);
}

namespace {

Error Lost(const std::string& what, const std::string& message) {
  return Failure(ErrorCode::kDataLoss, "The " + what + " is not well formed: " + message);
}

}  // namespace

Expected<SessionInfo> ParseSessionOpenedJson(std::string_view body) {
  Problem problem;
  std::optional<wire::Json> root = wire::ParseJsonBody(body, problem);
  if (!root) return Lost("session's open answer", *problem.message);
  if (!root->is_object()) return Lost("session's open answer", "the body is not an object.");
  FieldReader fields(*root, "", problem, /*null_is_absent=*/false);
  SessionInfo info;
  info.id = fields.String("session_id", wire::kRequired);
  info.provider = fields.String("provider", wire::kRequired);
  std::string tier = fields.String("isolation", wire::kRequired);
  info.environment = fields.String("environment", wire::kRequired);
  info.image = fields.String("image", wire::kOptional);
  info.created_unix_ms = fields.Integer("created_unix_ms", wire::kRequired);
  info.expires_unix_ms = fields.Integer("expires_unix_ms", wire::kRequired);
  info.idle_timeout_ms = fields.Integer("idle_timeout_ms", wire::kRequired);
  if (problem) return Lost("session's open answer", *problem.message);
  std::optional<Tier> parsed = ParseTier(tier);
  if (!parsed) return Lost("session's open answer", "isolation \"" + tier + "\" is not a tier.");
  info.isolation = *parsed;
  if (info.id.size() != 32 || info.id.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return Lost("session's open answer", "session_id is not 32 lowercase hex digits.");
  }
  return info;
}

Expected<SessionClose> ParseSessionCloseJson(std::string_view body) {
  Problem problem;
  std::optional<wire::Json> root = wire::ParseJsonBody(body, problem);
  if (!root) return Lost("session's close answer", *problem.message);
  if (!root->is_object()) return Lost("session's close answer", "the body is not an object.");
  FieldReader fields(*root, "", problem, /*null_is_absent=*/false);
  std::string ended = fields.String("ended", wire::kRequired);
  SessionClose close;
  close.calls = fields.Integer("calls", wire::kRequired);
  close.last_record_sha256 = fields.String("last_record_sha256", wire::kRequired);
  if (problem) return Lost("session's close answer", *problem.message);
  std::optional<SessionEndReason> reason = ParseSessionEndReason(ended);
  if (!reason) return Lost("session's close answer", "ended \"" + ended + "\" is not a reason.");
  close.ended = *reason;
  return close;
}

}  // namespace plimsoll
