// Strict, non-throwing reading of JSON bodies for the wire format.
//
// ParseJsonBody parses with nlohmann-json but refuses duplicate keys and
// nesting deeper than kMaxJsonDepth. FieldReader reads typed members of one
// object and remembers the first problem as a sentence naming the field by
// its path ("project.files[2].content"), so callers read every field they
// want and check once.
//
// Usage:
//
//   Problem problem;
//   FieldReader fields(object, "project", problem);
//   std::vector<std::string> artifacts = ...fields.Array("artifacts", kOptional)...
//   if (problem) return Refusal(NotDispatched::kRequest, *problem.message);
#ifndef PLIMSOLL_WIRE_JSON_READER_H_
#define PLIMSOLL_WIRE_JSON_READER_H_

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "plimsoll/error.h"
#include "plimsoll/request.h"

namespace plimsoll::wire {

using Json = nlohmann::json;

inline constexpr int kMaxJsonDepth = 64;

// The first problem found while reading a body.
struct Problem {
  std::optional<std::string> message;
  void Set(std::string text) {
    if (!message) message = std::move(text);
  }
  explicit operator bool() const { return message.has_value(); }
};

// Parses `body` as one JSON value. On failure returns nullopt and sets
// `problem` ("The body is not valid JSON: ...", duplicate key, too deep).
std::optional<Json> ParseJsonBody(std::string_view body, Problem& problem);

enum Presence { kOptional, kRequired };

// "a.b" / "a[3]" style paths for messages.
std::string JoinPath(std::string_view base, std::string_view key);
std::string IndexPath(std::string_view base, size_t index);

// The JSON type of a value, for messages ("a number", "an object", ...).
std::string_view DescribeType(const Json& value);

class FieldReader {
 public:
  // Precondition: object.is_object(). `path` is "" for the top level.
  FieldReader(const Json& object, std::string path, Problem& problem, bool null_is_absent);

  // The member, or nullptr when absent (or null with null_is_absent).
  const Json* Find(std::string_view key) const;

  // Typed members. Absent optional members yield the default; a missing
  // required member or a wrong type records a problem and yields the default.
  std::string String(std::string_view key, Presence presence);
  int64_t Integer(std::string_view key, Presence presence);
  bool Boolean(std::string_view key, Presence presence);
  double Float(std::string_view key, Presence presence);
  // A byte field: a string, or {"base64": "..."}.
  std::string Bytes(std::string_view key, Presence presence);
  // Object / array members: nullptr when absent or of the wrong type (a
  // problem is recorded for the wrong type, or when required and absent).
  const Json* Object(std::string_view key, Presence presence);
  const Json* Array(std::string_view key, Presence presence);

  // Records a problem for the first member whose key is not in `known`.
  void RejectUnknown(std::initializer_list<std::string_view> known);

  std::string PathOf(std::string_view key) const { return JoinPath(path_, key); }

 private:
  const Json* Member(std::string_view key, Presence presence);

  const Json& object_;
  std::string path_;
  Problem& problem_;
  bool null_is_absent_;
};

// SPEC §4: the protocol number is checked before anything else is read, so
// a body from a newer or older client is refused as `protocol` however the
// rest looks. Precondition: root.is_object().
Status CheckProtocol(const Json& root);

// Element readers for arrays; same conventions as FieldReader.
std::string ReadString(const Json& value, std::string_view path, Problem& problem);
std::string ReadBytes(const Json& value, std::string_view path, Problem& problem);
int64_t ReadInteger(const Json& value, std::string_view path, Problem& problem);
double ReadFloat(const Json& value, std::string_view path, Problem& problem);

}  // namespace plimsoll::wire

#endif  // PLIMSOLL_WIRE_JSON_READER_H_
