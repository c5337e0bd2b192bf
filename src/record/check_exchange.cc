// CheckExchange: what every client checks on an answer before believing it
// (SPEC §5, §11). Every mismatch is kDataLoss and carries no "nothing ran"
// mark: the call may well have run.
#include <limits>
#include <string>

#include "plimsoll/record.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"

namespace plimsoll {
namespace {

Error Lost(std::string message) {
  return Failure(ErrorCode::kDataLoss, "The answer does not match its run record: " + message);
}

bool IsLowerHexDigest(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

Status CheckChain(const Record& record, ChainState& chain) {
  if (!record.session) {
    return Lost("a session call's record carries no session fields.");
  }
  const SessionLink& link = *record.session;
  if (!IsLowerHexDigest(link.session_sha256)) {
    return Lost("the record's session digest is not 64 lowercase hex digits.");
  }
  if (chain.session_sha256.empty()) {
    // Learned from the first record only; callers that know the session ID
    // should set chain.session_sha256 = SessionIdDigest(id) up front.
    if (chain.last_sequence != 0) return Lost("the chain state has calls but no session.");
  } else if (link.session_sha256 != chain.session_sha256) {
    return Lost("the record belongs to another session.");
  }
  if (chain.last_sequence == std::numeric_limits<int64_t>::max()) {
    return Lost("the session's sequence cannot advance any further.");
  }
  int64_t expected = chain.last_sequence + 1;
  if (link.sequence != expected) {
    return Lost("the record's sequence is " + std::to_string(link.sequence) + "; expected " +
                std::to_string(expected) + ".");
  }
  std::string previous = expected == 1 ? std::string() : chain.last_record_sha256;
  if (link.previous_sha256 != previous) {
    return Lost("the record's previous_sha256 does not link to the previous call's record.");
  }
  return Status::Ok();
}

}  // namespace

Status CheckExchange(const Request& sent, const Result& received, ChainState* chain) {
  const Record& record = received.record;
  if (record.version != kRecordVersion) {
    return Lost("record version " + std::to_string(record.version) + " is not " +
                std::to_string(kRecordVersion) + ".");
  }
  if (record.request_sha256 != RequestDigest(sent)) {
    return Lost("request_sha256 differs from the digest of the request this client sent.");
  }
  if (record.result_sha256 != ResultDigest(received)) {
    return Lost("result_sha256 differs from the digest of the result received.");
  }
  if (record.provider != received.provider) return Lost("the record names another provider.");
  if (record.isolation != received.isolation) return Lost("the record states another tier.");
  if (record.environment != received.environment) {
    return Lost("the record names another environment.");
  }
  if (!sent.minimum_isolation.empty()) {
    std::optional<Tier> floor = ParseTier(sent.minimum_isolation);
    // A request with an unparseable floor must have been refused; an answer
    // to it cannot be believed.
    if (!floor || !MeetsFloor(received.isolation, *floor)) {
      return Lost("the run's tier " + std::string(TierName(received.isolation)) +
                  " does not meet the requested floor \"" + sent.minimum_isolation + "\".");
    }
  }
  if (!sent.environment.empty() && received.environment != sent.environment) {
    return Lost("the run's environment is not the one the request required.");
  }
  if (record.ended_unix_ms < record.started_unix_ms)
    return Lost("the record ends before it starts.");
  if (record.record_sha256 != RecordDigest(record)) {
    return Lost("record_sha256 differs from the digest of the record's fields.");
  }
  if (chain == nullptr && record.session) {
    // A single run's record must not carry a session link: if it does, the
    // daemon answered a session call (or another call's record) to a
    // single-run request, and the chain it claims goes unchecked.
    return Lost(
        "a single run's record carries session fields (session, sequence, "
        "previous_sha256).");
  }
  if (chain != nullptr) {
    PLIMSOLL_RETURN_IF_ERROR(CheckChain(record, *chain));
    chain->session_sha256 = record.session->session_sha256;
    chain->last_sequence = record.session->sequence;
    chain->last_record_sha256 = record.record_sha256;
  }
  return Status::Ok();
}

}  // namespace plimsoll
