// Writing wire values: byte fields, floats, and the final dump.
//
// Objects are nlohmann::ordered_json so keys come out in the order SPEC §4
// shows them, which keeps `plimsoll run --json` readable.
#ifndef PLIMSOLL_WIRE_JSON_WRITER_H_
#define PLIMSOLL_WIRE_JSON_WRITER_H_

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "plimsoll/limits.h"

namespace plimsoll::wire {

using OrderedJson = nlohmann::ordered_json;

// A byte field: the string itself when valid UTF-8, else {"base64": "..."}.
OrderedJson WriteBytes(std::string_view bytes);

// A float: a JSON number when finite; "NaN", "Infinity" or "-Infinity".
OrderedJson WriteFloat(double value);

// The limits object of describe and of a session's open answer.
OrderedJson WriteLimits(const Limits& limits);

// Compact JSON text. Never throws: invalid UTF-8 in a non-byte string field
// is replaced by U+FFFD (see wire.h).
std::string Dump(const OrderedJson& value);

}  // namespace plimsoll::wire

#endif  // PLIMSOLL_WIRE_JSON_WRITER_H_
