// The JSON wire format of the HTTP API (SPEC §4).
//
// One place turns Request, Result and Error into JSON and back, so the
// daemon, the CLI (`plimsoll run --json`) and the C++ client print and read
// exactly the same objects. docs/run-records.md and api/openapi.yaml describe
// the same shapes for other languages.
//
// Decisions this file fixes (docs/wire-format.md explains them for clients):
//   - Bytes. Outputs (stdout, stderr, per-step outputs), project file and
//     artifact contents, and snippet/cell `code` travel as a JSON string when
//     the bytes are valid UTF-8 and otherwise as {"base64": "<RFC 4648>"}
//     (padded, standard alphabet). Readers accept either form for these
//     fields. Digests always cover the raw bytes.
//   - Other strings (paths, argv elements, names) must be JSON strings. A
//     C++ value holding invalid UTF-8 there is written with U+FFFD in place
//     of each bad byte: such a request cannot travel intact, and the record
//     check of the answer fails loudly rather than silently.
//   - Floats (advice.added_latency_ms): a finite value is a JSON number (the
//     shortest text that reads back to the same double, so -0.0 stays
//     "-0.0"); NaN, +inf and -inf travel as the strings "NaN", "Infinity"
//     and "-Infinity". Readers accept any JSON number or those strings.
//   - Integers are JSON integers in the int64 range; 5000.0 is not an
//     integer. (JavaScript readers lose precision above 2^53; no field
//     plimsoll writes gets near it.)
//   - Optional fields are omitted when absent. In requests, `null` is
//     accepted as "absent" for every field except `protocol`.
//   - Requests are strict: unknown fields (at any level), duplicate keys and
//     nesting deeper than 64 are refused (`request`), so a misspelt
//     `minimum_isolaton` can never silently drop a floor. Results and error
//     bodies are read strictly for the fields this build knows (types,
//     required fields, duplicate keys) and ignore fields it does not know, so
//     a newer daemon may add fields; a field that changes a digest comes
//     with a new digest domain, which the record check catches.
//
// Usage (daemon):
//
//   plimsoll::Expected<plimsoll::Request> request = plimsoll::ParseRequestJson(body);
//   if (!request.ok()) return Answer(plimsoll::ErrorToJson(request.error(), request_id));
//   ... run ...
//   return Answer(plimsoll::ResultToJson(*result));
//
// Usage (client):
//
//   std::string body = plimsoll::RequestToJson(request);
//   ... POST, read `answer` ...
//   auto result = plimsoll::ParseResultJson(answer);
//   if (!result.ok()) { /* data_loss, no "nothing ran" mark */ }
//   auto refusal = plimsoll::ParseErrorJson(error_answer);
//   if (refusal.ok() && refusal->request_id == sent_id) return refusal->error;
//
// All functions are thread-safe and never throw; malformed input of any kind
// yields an Error, never a crash.
#ifndef PLIMSOLL_WIRE_H_
#define PLIMSOLL_WIRE_H_

#include <optional>
#include <string>
#include <string_view>

#include "plimsoll/error.h"
#include "plimsoll/image_info.h"
#include "plimsoll/provider.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"
#include "plimsoll/session.h"

namespace plimsoll {

// Reads a run request body. The `protocol` field is checked first, before
// any payload is looked at: a missing, non-integer or other protocol number
// is Refusal(kProtocol). Any other problem (not JSON, not an object, a wrong
// type, an unknown field, a duplicate key, bad base64) is Refusal(kRequest)
// with a message naming the field, e.g. "project.files[2].content".
// Limits (sizes, tiers, paths) are ValidateRequest's job, not this one's.
Expected<Request> ParseRequestJson(std::string_view body);

// Writes a request; ParseRequestJson(RequestToJson(r)) == r for every r whose
// non-byte strings are valid UTF-8.
std::string RequestToJson(const Request& request);

// The body of POST /v1/sessions (SPEC §9).
struct SessionOpenRequest {
  int64_t protocol = kProtocol;
  SessionOptions options;  // minimum_isolation, environment, lifetime_ms, idle_timeout_ms
  // "" or the end user the session belongs to, as lowercase hex of an HMAC
  // the client computed (16..64 bytes): the daemon never sees a raw name.
  std::string owner;
  friend bool operator==(const SessionOpenRequest&, const SessionOpenRequest&) = default;
};

// Reads a session-open body: `protocol` first (as ParseRequestJson), then
// the fields above; unknown fields, wrong types and a malformed owner are
// Refusal(kRequest). Bounds are Sandbox::OpenSession's job.
Expected<SessionOpenRequest> ParseSessionOpenJson(std::string_view body);
std::string SessionOpenToJson(const SessionOpenRequest& request);

// The open answer: {session_id, provider, isolation, environment,
// created_unix_ms, expires_unix_ms, idle_timeout_ms, limits}.
std::string SessionOpenedToJson(const SessionInfo& info, const Limits& limits);
// GET /v1/sessions/{id}: the open answer's identity plus calls, busy,
// queued, last_used_unix_ms, disk_used_bytes, disk_bytes, interpreters and
// last_record_sha256.
std::string SessionStateToJson(const SessionInfo& info);
// DELETE /v1/sessions/{id}: {ended, calls, last_record_sha256}.
std::string SessionCloseToJson(const SessionClose& close);

// Clients read the open and close answers back (kDataLoss when malformed):
// the open answer fills id, provider, isolation, environment,
// created_unix_ms, expires_unix_ms and idle_timeout_ms.
Expected<SessionInfo> ParseSessionOpenedJson(std::string_view body);
Expected<SessionClose> ParseSessionCloseJson(std::string_view body);

// Writes a result as the one flat object of SPEC §4, with "record": {...}.
// `outcome`, `steps` and `artifacts` appear for projects (steps and
// artifacts also whenever non-empty), `broker` when set, `advice` when
// non-empty; session fields of the record only for session calls.
std::string ResultToJson(const Result& result);

// Reads a result body (client side). Any problem is Failure(kDataLoss):
// an answer that cannot be read carries no "nothing ran" mark.
Expected<Result> ParseResultJson(std::string_view body);

// Writes {"error": {"code", "message", "not_dispatched"?, "request_id"?}};
// request_id is omitted when empty. The message is written as given: the
// daemon replaces internal errors' messages before calling this.
std::string ErrorToJson(const Error& error, std::string_view request_id);

// A parsed error answer. (Not Expected<Error>: Expected<T> cannot hold an
// Error as its value.)
struct ErrorAnswer {
  Error error;
  std::string request_id;  // "" when the body carries none
  friend bool operator==(const ErrorAnswer&, const ErrorAnswer&) = default;
};

// Reads an error body (client side). An unknown code or not-dispatched
// reason, or any other problem, is Failure(kDataLoss), so an unreadable
// refusal never reads as "nothing ran". Checking request_id against the ID
// the client sent is the caller's job (SPEC §3).
Expected<ErrorAnswer> ParseErrorJson(std::string_view body);

// Writes the body of `GET /v1/describe` (SPEC §4, api/openapi.yaml
// `Description`): {"protocol", "provider", "tier", "claimed_tier",
// "environment", "evidence" (null when none was collected yet), "capabilities",
// "limits", "sessions", "details"}. "tier" is the tier a run would get now:
// the evidence's tier (never above the claim), or "unknown" without evidence.
// Facts and details are arrays of {"name", "value"} so a repeated name is
// never lost. With `images` (a daemon's, SPEC §7), also "images": one
// {"name", "default", "environment", "tier", "confirmed", "languages",
// "packages": [{"name", "version", "source"}]} per image, the default first.
std::string DescriptionToJson(const Description& description,
                              const std::optional<Evidence>& evidence,
                              const std::vector<ImageInfo>& images = {});

}  // namespace plimsoll

#endif  // PLIMSOLL_WIRE_H_
