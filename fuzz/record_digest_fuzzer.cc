// libFuzzer target: the run-record digests (src/record/, SPEC §5) of
// arbitrary decoded requests and results.
//
// The input is a request body and a result body separated by the first NUL
// byte (without one, the whole input is tried as both). Whatever decodes
// (ParseRequestJson, ParseResultJson; validation is not required, since a
// client digests what it sent and what it received, valid or not) is
// digested, and:
//   - RequestDigest, ResultDigest and RecordDigest are 64 lowercase hex
//     digits, the same on every call, and the same after a round trip through
//     the wire (the digest covers raw bytes, not their JSON spelling);
//   - changing one covered field (each cheap one in turn: protocol,
//     timeout_ms, floor, grant, code, a file, a step argument, an artifact;
//     exit code, flags, outputs, a step, an artifact, the outcome, an advice
//     float) changes the digest; changing what SPEC §5 leaves out (trace_id,
//     environment of a request; the record of a result) does not;
//   - MakeRecord's record passes CheckExchange exactly when the tier meets
//     the floor and the environment is the one required, and any covered change to the result
//     afterwards fails it (data_loss).
//
// Seeds: fuzz/corpus/record_digest/. fuzz/run runs it.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "plimsoll/record.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"
#include "plimsoll/wire.h"
#include "record/digest_builder.h"
#include "request_checks.h"

namespace {

using plimsoll::Expected;
using plimsoll::Request;
using plimsoll::Result;

bool IsLowerHex64(std::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

// A different value for a string field, whatever it held.
std::string Other(const std::string& text) {
  return text + "x";
}

int64_t OtherInteger(int64_t value) {
  return value == INT64_MAX ? value - 1 : value + 1;
}

template <typename Mutate>
void ExpectRequestChange(const Request& request, const std::string& digest, std::string_view what,
                         Mutate mutate) {
  Request changed = request;
  mutate(changed);
  FUZZ_CHECK(plimsoll::RequestDigest(changed) != digest,
             "changing the request's " + std::string(what) + " left its digest unchanged");
}

template <typename Mutate>
void ExpectResultChange(const Result& result, const std::string& digest, std::string_view what,
                        Mutate mutate) {
  Result changed = result;
  mutate(changed);
  FUZZ_CHECK(plimsoll::ResultDigest(changed) != digest,
             "changing the result's " + std::string(what) + " left its digest unchanged");
}

std::string CheckRequest(const Request& request) {
  std::string digest = plimsoll::RequestDigest(request);
  FUZZ_CHECK(IsLowerHex64(digest), "RequestDigest is not 64 lowercase hex digits: " + digest);
  FUZZ_CHECK(plimsoll::RequestDigest(request) == digest, "RequestDigest is not deterministic");

  Expected<Request> again = plimsoll::ParseRequestJson(plimsoll::RequestToJson(request));
  FUZZ_CHECK(again.ok() && plimsoll::RequestDigest(*again) == digest,
             "the request's digest changed in a round trip through the wire");

  // Not covered (SPEC §5): observability and the separately checked image.
  Request uncovered = request;
  uncovered.trace_id = Other(request.trace_id);
  uncovered.environment = Other(request.environment);
  FUZZ_CHECK(plimsoll::RequestDigest(uncovered) == digest,
             "trace_id or environment changed the request digest (SPEC §5 leaves them out)");

  ExpectRequestChange(request, digest, "protocol",
                      [](Request& r) { r.protocol = OtherInteger(r.protocol); });
  ExpectRequestChange(request, digest, "timeout_ms",
                      [](Request& r) { r.timeout_ms = OtherInteger(r.timeout_ms); });
  ExpectRequestChange(request, digest, "minimum_isolation",
                      [](Request& r) { r.minimum_isolation = Other(r.minimum_isolation); });
  ExpectRequestChange(request, digest, "grant_profile",
                      [](Request& r) { r.grant_profile = Other(r.grant_profile); });
  // Moving bytes between two adjacent fields must change the digest too (the
  // encoding is length-prefixed): floor "ab" + grant "" vs "a" + "b".
  if (!request.minimum_isolation.empty()) {
    ExpectRequestChange(request, digest, "floor/grant boundary", [](Request& r) {
      r.grant_profile = r.minimum_isolation.back() + r.grant_profile;
      r.minimum_isolation.pop_back();
    });
  }
  if (request.javascript) {
    ExpectRequestChange(request, digest, "javascript code",
                        [](Request& r) { r.javascript->code = Other(r.javascript->code); });
    ExpectRequestChange(request, digest, "payload kind (javascript to python)", [](Request& r) {
      r.python = plimsoll::PythonPayload{r.javascript->code};
      r.javascript.reset();
    });
  }
  if (request.python) {
    ExpectRequestChange(request, digest, "python code",
                        [](Request& r) { r.python->code = Other(r.python->code); });
  }
  if (request.cell) {
    ExpectRequestChange(request, digest, "cell language",
                        [](Request& r) { r.cell->language = Other(r.cell->language); });
    ExpectRequestChange(request, digest, "cell code",
                        [](Request& r) { r.cell->code = Other(r.cell->code); });
  }
  if (request.project) {
    const plimsoll::ProjectPayload& project = *request.project;
    ExpectRequestChange(request, digest, "project file list", [](Request& r) {
      r.project->files.push_back({"added", ""});
    });
    if (!project.files.empty()) {
      ExpectRequestChange(request, digest, "project file path", [](Request& r) {
        r.project->files.back().path = Other(r.project->files.back().path);
      });
      ExpectRequestChange(request, digest, "project file content", [](Request& r) {
        r.project->files.back().content = Other(r.project->files.back().content);
      });
    }
    ExpectRequestChange(request, digest, "project step list",
                        [](Request& r) { r.project->steps.push_back({}); });
    if (!project.steps.empty()) {
      ExpectRequestChange(request, digest, "project step argv",
                          [](Request& r) { r.project->steps.back().push_back(""); });
      if (!project.steps.back().empty()) {
        ExpectRequestChange(request, digest, "project step argument", [](Request& r) {
          r.project->steps.back().back() = Other(r.project->steps.back().back());
        });
      }
    }
    ExpectRequestChange(request, digest, "project artifacts",
                        [](Request& r) { r.project->artifacts.push_back("added"); });
  }
  return digest;
}

std::string CheckResult(const Result& result) {
  std::string digest = plimsoll::ResultDigest(result);
  FUZZ_CHECK(IsLowerHex64(digest), "ResultDigest is not 64 lowercase hex digits: " + digest);
  FUZZ_CHECK(plimsoll::ResultDigest(result) == digest, "ResultDigest is not deterministic");

  Expected<Result> again = plimsoll::ParseResultJson(plimsoll::ResultToJson(result));
  FUZZ_CHECK(again.ok() && plimsoll::ResultDigest(*again) == digest,
             "the result's digest changed in a round trip through the wire");

  // The record carries the digest, so it is not part of it.
  Result recorded = result;
  recorded.record.provider = Other(result.record.provider);
  recorded.record.result_sha256 = Other(result.record.result_sha256);
  FUZZ_CHECK(plimsoll::ResultDigest(recorded) == digest, "the record changed the result digest");

  ExpectResultChange(result, digest, "provider", [](Result& r) { r.provider = Other(r.provider); });
  ExpectResultChange(result, digest, "environment",
                     [](Result& r) { r.environment = Other(r.environment); });
  ExpectResultChange(result, digest, "exit_code",
                     [](Result& r) { r.exit_code = OtherInteger(r.exit_code); });
  ExpectResultChange(result, digest, "timed_out", [](Result& r) { r.timed_out = !r.timed_out; });
  ExpectResultChange(result, digest, "stdout",
                     [](Result& r) { r.stdout_bytes = Other(r.stdout_bytes); });
  ExpectResultChange(result, digest, "stderr",
                     [](Result& r) { r.stderr_bytes = Other(r.stderr_bytes); });
  ExpectResultChange(result, digest, "stdout_truncated",
                     [](Result& r) { r.stdout_truncated = !r.stdout_truncated; });
  ExpectResultChange(result, digest, "duration_ms",
                     [](Result& r) { r.duration_ms = OtherInteger(r.duration_ms); });
  ExpectResultChange(result, digest, "outcome", [](Result& r) {
    r.outcome = r.outcome == plimsoll::ProjectOutcome::kCompleted
                    ? plimsoll::ProjectOutcome::kTimedOut
                    : plimsoll::ProjectOutcome::kCompleted;
  });
  ExpectResultChange(result, digest, "step list", [](Result& r) { r.steps.emplace_back(); });
  if (!result.steps.empty()) {
    ExpectResultChange(result, digest, "a step's stdout", [](Result& r) {
      r.steps.back().stdout_bytes = Other(r.steps.back().stdout_bytes);
    });
    ExpectResultChange(result, digest, "a step's exit code", [](Result& r) {
      r.steps.back().exit_code = OtherInteger(r.steps.back().exit_code);
    });
  }
  ExpectResultChange(result, digest, "artifact list",
                     [](Result& r) { r.artifacts.emplace_back(); });
  if (!result.artifacts.empty()) {
    ExpectResultChange(result, digest, "an artifact's truncated flag", [](Result& r) {
      r.artifacts.back().truncated = !r.artifacts.back().truncated;
    });
    ExpectResultChange(result, digest, "an artifact's content", [](Result& r) {
      r.artifacts.back().content = Other(r.artifacts.back().content);
    });
  }
  if (!result.advice.empty()) {
    // A float changes the digest exactly when its 8 encoded bytes change
    // (every NaN is one NaN).
    double before = result.advice.back().added_latency_ms;
    double after = before == 0 ? 1.5 : before * 2;
    Result changed = result;
    changed.advice.back().added_latency_ms = after;
    bool bytes_differ =
        plimsoll::record::EncodeFloat(before) != plimsoll::record::EncodeFloat(after);
    FUZZ_CHECK((plimsoll::ResultDigest(changed) != digest) == bytes_differ,
               "an advice float changed the digest without changing its encoding, or not at all");
  }
  return digest;
}

void CheckRecord(const Request& request, const Result& result) {
  plimsoll::RecordClock::Span span{1'700'000'000'000, 1'700'000'000'250};
  plimsoll::Record record = plimsoll::MakeRecord(request, result, "policy", span);
  FUZZ_CHECK(IsLowerHex64(record.record_sha256), "record_sha256 is not 64 lowercase hex digits");
  FUZZ_CHECK(plimsoll::RecordDigest(record) == record.record_sha256,
             "RecordDigest is not deterministic");
  plimsoll::Record later = record;
  later.ended_unix_ms += 1;
  FUZZ_CHECK(plimsoll::RecordDigest(later) != record.record_sha256,
             "the record digest ignores ended_unix_ms");

  Result answered = result;
  answered.record = record;
  plimsoll::Status checked = plimsoll::CheckExchange(request, answered);
  bool floor_met = true;
  if (!request.minimum_isolation.empty()) {
    std::optional<plimsoll::Tier> floor = plimsoll::ParseTier(request.minimum_isolation);
    floor_met = floor && plimsoll::MeetsFloor(result.isolation, *floor);
  }
  bool environment_met = request.environment.empty() || request.environment == result.environment;
  FUZZ_CHECK(checked.ok() == (floor_met && environment_met),
             "CheckExchange on an honest record: " +
                 (checked.ok() ? std::string("accepted below the floor or in another environment")
                               : checked.error().ToString()));
  if (!checked.ok()) {
    FUZZ_CHECK(checked.error().code() == plimsoll::ErrorCode::kDataLoss,
               "a CheckExchange failure that is not data_loss");
    return;
  }
  Result tampered = answered;
  tampered.stdout_bytes = Other(tampered.stdout_bytes);
  plimsoll::Status caught = plimsoll::CheckExchange(request, tampered);
  FUZZ_CHECK(!caught.ok() && caught.error().code() == plimsoll::ErrorCode::kDataLoss,
             "CheckExchange accepted an answer whose stdout changed after its record was made");
  Request other = request;
  other.timeout_ms = OtherInteger(other.timeout_ms);
  FUZZ_CHECK(!plimsoll::CheckExchange(other, answered).ok(),
             "CheckExchange accepted the record of another request");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  std::string_view request_body = input;
  std::string_view result_body = input;
  if (size_t nul = input.find('\0'); nul != std::string_view::npos) {
    request_body = input.substr(0, nul);
    result_body = input.substr(nul + 1);
  }
  Expected<Request> request = plimsoll::ParseRequestJson(request_body);
  Expected<Result> result = plimsoll::ParseResultJson(result_body);
  if (request.ok()) CheckRequest(*request);
  if (result.ok()) CheckResult(*result);
  if (request.ok() && result.ok()) CheckRecord(*request, *result);
  return 0;
}
