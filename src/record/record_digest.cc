// RecordDigest, SessionIdDigest and MakeRecord (SPEC §5).
#include "plimsoll/record.h"
#include "plimsoll/result.h"
#include "record/digest_builder.h"

namespace plimsoll {

std::string RecordDigest(const Record& record) {
  record::DigestBuilder digest(kRecordDomain);
  digest.Integer("version", record.version);
  digest.Bytes("request_sha256", record.request_sha256);
  digest.Bytes("result_sha256", record.result_sha256);
  digest.Bytes("provider", record.provider);
  digest.Bytes("isolation", TierName(record.isolation));
  digest.Bytes("environment", record.environment);
  digest.Bytes("policy", record.policy);
  digest.Integer("started_unix_ms", record.started_unix_ms);
  digest.Integer("ended_unix_ms", record.ended_unix_ms);
  // Session fields are present together or not at all.
  if (record.session) {
    digest.Bytes("session", record.session->session_sha256);
    digest.Integer("sequence", record.session->sequence);
    digest.Bytes("previous_sha256", record.session->previous_sha256);
  }
  return std::move(digest).Finish();
}

std::string SessionIdDigest(std::string_view session_id) {
  return record::Sha256Hex(session_id);
}

Record MakeRecord(const Request& request, const Result& result, std::string policy,
                  RecordClock::Span span, std::optional<SessionLink> session) {
  Record out;
  out.version = kRecordVersion;
  out.request_sha256 = RequestDigest(request);
  out.result_sha256 = ResultDigest(result);
  out.provider = result.provider;
  out.isolation = result.isolation;
  out.environment = result.environment;
  out.policy = std::move(policy);
  out.started_unix_ms = span.started_unix_ms;
  out.ended_unix_ms =
      span.ended_unix_ms < span.started_unix_ms ? span.started_unix_ms : span.ended_unix_ms;
  out.session = std::move(session);
  out.record_sha256 = RecordDigest(out);
  return out;
}

}  // namespace plimsoll
