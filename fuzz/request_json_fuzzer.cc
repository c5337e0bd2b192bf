// libFuzzer target: the body of POST /v1/runs, and the answer bodies a client
// decodes, as arbitrary bytes.
//
//   request   ParseRequestJson with protocol-first marks, the round trip
//             through RequestToJson, ValidateRequest (request_checks.h)
//   answers   ParseErrorJson / ParseResultJson (what the C++ client reads
//             from a daemon it does not trust): never a crash; a refused
//             answer is data_loss without a mark; an accepted one is written
//             back and read again to the same text
//   base64    the byte-field codec: an accepted text is canonical (encoding
//             the decoded bytes gives the text back)
//
// Seeds: fuzz/corpus/request_json/. fuzz/run runs it for a bounded time.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "plimsoll/wire.h"
#include "request_checks.h"
#include "wire/base64.h"

namespace {

using plimsoll::ErrorCode;
using plimsoll::Expected;

void CheckAnswerDecoders(std::string_view body) {
  Expected<plimsoll::ErrorAnswer> error = plimsoll::ParseErrorJson(body);
  if (!error.ok()) {
    FUZZ_CHECK(
        error.error().code() == ErrorCode::kDataLoss && !error.error().not_dispatched().has_value(),
        "an unreadable error answer must be data_loss without a mark: " + error.error().ToString());
  } else {
    plimsoll::fuzz::CheckErrorRoundTrip(error->error, error->request_id);
  }

  Expected<plimsoll::Result> result = plimsoll::ParseResultJson(body);
  if (!result.ok()) {
    FUZZ_CHECK(
        result.error().code() == ErrorCode::kDataLoss &&
            !result.error().not_dispatched().has_value(),
        "an unreadable result must be data_loss without a mark: " + result.error().ToString());
    return;
  }
  // Compared as text: a NaN float is never == itself.
  std::string written = plimsoll::ResultToJson(*result);
  Expected<plimsoll::Result> again = plimsoll::ParseResultJson(written);
  FUZZ_CHECK(again.ok(), "ParseResultJson refuses what ResultToJson wrote: " + written);
  FUZZ_CHECK(plimsoll::ResultToJson(*again) == written,
             "a result changed in a round trip through " + written);
}

void CheckBase64(std::string_view text) {
  auto decoded = plimsoll::wire::DecodeBase64(text);
  if (!decoded) return;
  FUZZ_CHECK(plimsoll::wire::EncodeBase64(*decoded) == text,
             "DecodeBase64 accepted a non-canonical text: " + std::string(text));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view body(reinterpret_cast<const char*>(data), size);
  (void)plimsoll::fuzz::CheckRequestBody(body);
  CheckAnswerDecoders(body);
  CheckBase64(body);
  return 0;
}
