#include "request_checks.h"

#include <cstdio>
#include <cstdlib>
#include <string>

#include "base/utf8.h"
#include "plimsoll/wire.h"
#include "wire/json_reader.h"

namespace plimsoll::fuzz {
namespace {

std::string Describe(const Error& error) {
  return error.ToString();
}

// An independent reading of the protocol rule (SPEC §4): the integer 1,
// whether the JSON reader stored it signed or unsigned.
bool SaysOurProtocol(const wire::Json& root) {
  auto it = root.find("protocol");
  if (it == root.end() || !it->is_number_integer()) return false;
  if (it->is_number_unsigned()) return it->get<uint64_t>() == static_cast<uint64_t>(kProtocol);
  return it->get<int64_t>() == kProtocol;
}

void CheckRequestRoundTrip(const Request& request, std::string_view stage) {
  std::string written = RequestToJson(request);
  Expected<Request> again = ParseRequestJson(written);
  FUZZ_CHECK(again.ok(), std::string(stage) + ": RequestToJson wrote a body ParseRequestJson " +
                             "refuses: " + (again.ok() ? "" : Describe(again.error())) +
                             "\nbody: " + written);
  FUZZ_CHECK(*again == request,
             std::string(stage) + ": the request changed in a round trip " + "through " + written);
  FUZZ_CHECK(RequestToJson(*again) == written,
             std::string(stage) + ": writing the request twice gave different text");
}

void CheckValidation(const Request& request) {
  const Limits limits;
  bool in_session = request.cell.has_value();
  Expected<Request> validated = ValidateRequest(request, limits, in_session);
  if (!validated.ok()) {
    FUZZ_CHECK(
        validated.error().not_dispatched().has_value(),
        "ValidateRequest refused without a nothing-ran mark: " + Describe(validated.error()));
    CheckRefusal(validated.error(), "0123456789abcdef0123456789abcdef");
    return;
  }
  FUZZ_CHECK(validated->PayloadCount() == 1, "ValidateRequest accepted a request with " +
                                                 std::to_string(validated->PayloadCount()) +
                                                 " payloads");
  FUZZ_CHECK(validated->timeout_ms > 0, "ValidateRequest left timeout_ms unresolved");
  Expected<Request> twice = ValidateRequest(*validated, limits, in_session);
  FUZZ_CHECK(twice.ok(), "a validated request fails validation: " +
                             (twice.ok() ? std::string() : Describe(twice.error())));
  FUZZ_CHECK(*twice == *validated, "validation is not idempotent");
  CheckRequestRoundTrip(*validated, "validated");
}

}  // namespace

void FuzzFail(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "\nfuzz check failed: %.*s\n%.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(detail.size()), detail.data());
  std::abort();
}

void CheckErrorRoundTrip(const Error& error, std::string_view request_id) {
  std::string body = ErrorToJson(error, request_id);
  Expected<ErrorAnswer> read = ParseErrorJson(body);
  FUZZ_CHECK(read.ok(), "ParseErrorJson refuses what ErrorToJson wrote: " + body);
  FUZZ_CHECK(read->error.code() == error.code(), "the error code changed: " + body);
  FUZZ_CHECK(read->error.not_dispatched() == error.not_dispatched(),
             "the nothing-ran mark changed: " + body);
  FUZZ_CHECK(read->request_id == request_id, "the request ID changed: " + body);
  if (base::IsValidUtf8(error.message())) {
    FUZZ_CHECK(read->error.message() == error.message(), "the message changed: " + body);
  } else {
    // Invalid UTF-8 is written as U+FFFD (wire.h): the body stays JSON.
    FUZZ_CHECK(base::IsValidUtf8(read->error.message()), "a message came back as bad UTF-8");
  }
  FUZZ_CHECK(ErrorToJson(read->error, read->request_id) == body,
             "writing the error answer again gave different text: " + body);
}

void CheckRefusal(const Error& error, std::string_view request_id) {
  // A refusal we send must say why; an empty message is our bug.
  FUZZ_CHECK(!error.message().empty(), "a refusal without a message: " + error.ToString());
  CheckErrorRoundTrip(error, request_id);
}

Expected<Request> CheckRequestBody(std::string_view body) {
  Expected<Request> request = ParseRequestJson(body);

  // What the strict reader makes of the body, to predict the mark.
  wire::Problem problem;
  std::optional<wire::Json> root = wire::ParseJsonBody(body, problem);
  bool object = root.has_value() && root->is_object();

  if (!request.ok()) {
    const Error& error = request.error();
    FUZZ_CHECK(error.not_dispatched().has_value(),
               "ParseRequestJson failed without a nothing-ran mark: " + Describe(error));
    NotDispatched reason = *error.not_dispatched();
    FUZZ_CHECK(reason == NotDispatched::kRequest || reason == NotDispatched::kProtocol,
               "ParseRequestJson refused with an unexpected mark: " + Describe(error));
    FUZZ_CHECK(
        error.code() == DefaultCodeFor(reason) || error.code() == ErrorCode::kResourceExhausted,
        "unexpected code: " + Describe(error));
    if (!object) {
      FUZZ_CHECK(
          reason == NotDispatched::kRequest,
          "a body that is not a JSON object must be a `request` refusal: " + Describe(error));
    } else if (!SaysOurProtocol(*root)) {
      FUZZ_CHECK(reason == NotDispatched::kProtocol,
                 "protocol first: a wrong or missing protocol must be refused as `protocol`, "
                 "before anything else: " +
                     Describe(error));
    } else {
      FUZZ_CHECK(reason == NotDispatched::kRequest,
                 "the protocol is right, so the refusal must be `request`: " + Describe(error));
    }
    CheckRefusal(error, "");
    CheckRefusal(error, "ffffffffffffffffffffffffffffffff");
    return request;
  }

  FUZZ_CHECK(object, "ParseRequestJson accepted a body the strict reader refuses");
  FUZZ_CHECK(SaysOurProtocol(*root), "ParseRequestJson accepted a wrong protocol");
  FUZZ_CHECK(request->protocol == kProtocol, "the decoded protocol is not kProtocol");
  CheckRequestRoundTrip(*request, "decoded");
  CheckValidation(*request);
  return request;
}

}  // namespace plimsoll::fuzz
