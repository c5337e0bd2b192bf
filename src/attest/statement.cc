#include "attest/statement.h"

#include <nlohmann/json.hpp>

#include "plimsoll/tier.h"

namespace plimsoll::attest {
namespace {

using Json = nlohmann::ordered_json;

Json Subject(std::string_view name, std::string_view sha256) {
  Json digest = Json::object();
  digest["sha256"] = sha256;
  Json subject = Json::object();
  subject["name"] = name;
  subject["digest"] = std::move(digest);
  return Json::array({std::move(subject)});
}

std::string StatementJson(std::string_view subject_name, std::string_view subject_sha256,
                          std::string_view predicate_type, Json predicate, const BundleLink& link) {
  Json bundle = Json::object();
  bundle["index"] = link.index;
  bundle["previous_line_sha256"] = link.previous_line_sha256;
  predicate["bundle"] = std::move(bundle);
  Json statement = Json::object();
  statement["_type"] = kStatementType;
  statement["subject"] = Subject(subject_name, subject_sha256);
  statement["predicateType"] = predicate_type;
  statement["predicate"] = std::move(predicate);
  return statement.dump();
}

}  // namespace

std::string RunStatement(const Record& record, const BundleLink& link) {
  Json predicate = Json::object();
  predicate["request_sha256"] = record.request_sha256;
  predicate["result_sha256"] = record.result_sha256;
  predicate["provider"] = record.provider;
  predicate["tier"] = TierName(record.isolation);
  predicate["environment"] = record.environment;
  predicate["policy"] = record.policy;
  predicate["started_unix_ms"] = record.started_unix_ms;
  predicate["ended_unix_ms"] = record.ended_unix_ms;
  if (record.session) {
    Json session = Json::object();
    session["session_sha256"] = record.session->session_sha256;
    session["sequence"] = record.session->sequence;
    session["previous_sha256"] = record.session->previous_sha256;
    predicate["session"] = std::move(session);
  }
  return StatementJson("plimsoll-run", record.record_sha256, kRunPredicateType,
                       std::move(predicate), link);
}

std::string CloseStatement(std::string_view session_sha256, const SessionClose& close,
                           const BundleLink& link) {
  Json predicate = Json::object();
  predicate["ended"] = SessionEndReasonName(close.ended);
  predicate["calls"] = close.calls;
  predicate["last_record_sha256"] = close.last_record_sha256;
  return StatementJson("plimsoll-session", session_sha256, kClosePredicateType,
                       std::move(predicate), link);
}

}  // namespace plimsoll::attest
