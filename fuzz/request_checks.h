// Properties every fuzz target checks on a run-request body, whichever way
// the body arrived (fuzz/request_json_fuzzer.cc directly, or inside an HTTP
// request in fuzz/http_request_fuzzer.cc).
//
// A violated property calls FuzzFail, which prints what was expected and
// aborts, so libFuzzer saves the input as a crash.
//
// Usage:
//   plimsoll::Expected<plimsoll::Request> request = fuzz::CheckRequestBody(body);
//   if (!request.ok()) ... request.error() is a marked refusal ...
#ifndef PLIMSOLL_FUZZ_REQUEST_CHECKS_H_
#define PLIMSOLL_FUZZ_REQUEST_CHECKS_H_

#include <string_view>

#include "plimsoll/error.h"
#include "plimsoll/request.h"

namespace plimsoll::fuzz {

[[noreturn]] void FuzzFail(std::string_view what, std::string_view detail = {});

#define FUZZ_CHECK(condition, detail)                                   \
  do {                                                                  \
    if (!(condition)) ::plimsoll::fuzz::FuzzFail(#condition, (detail)); \
  } while (false)

// Decodes `body` with ParseRequestJson and checks:
//   - a failure is a refusal marked `request` or `protocol` (never unmarked);
//   - protocol first: when the body is a JSON object the strict reader
//     accepts, the refusal is `protocol` exactly when "protocol" is not the
//     integer kProtocol, whatever else the body holds;
//   - the refusal's error body (ErrorToJson) reads back (ParseErrorJson) with
//     the same code, mark, message and request ID;
//   - a decoded request round-trips: ParseRequestJson(RequestToJson(r)) == r,
//     and writing it again gives the same text;
//   - ValidateRequest never crashes, refuses only with a mark, and what it
//     returns validates again to itself and round-trips too.
Expected<Request> CheckRequestBody(std::string_view body);

// Checks that an error answer round-trips faithfully: ErrorToJson then
// ParseErrorJson gives back the same code, mark, message (invalid UTF-8 comes
// back as valid UTF-8) and `request_id`, and writing it again gives the same
// text. Nothing more: this is the property of an answer a client READ from a
// daemon it does not trust, whose message may well be empty (an empty message
// must not cost the caller a genuine "nothing ran" mark).
void CheckErrorRoundTrip(const Error& error, std::string_view request_id);

// Checks one of OUR refusals (what our decoders and validators produce):
// a non-empty message, then CheckErrorRoundTrip.
void CheckRefusal(const Error& error, std::string_view request_id);

}  // namespace plimsoll::fuzz

#endif  // PLIMSOLL_FUZZ_REQUEST_CHECKS_H_
