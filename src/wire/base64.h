// RFC 4648 base64 (standard alphabet, '=' padding), as byte fields travel on
// the wire ({"base64": "..."}).
#ifndef PLIMSOLL_WIRE_BASE64_H_
#define PLIMSOLL_WIRE_BASE64_H_

#include <optional>
#include <string>
#include <string_view>

namespace plimsoll::wire {

std::string EncodeBase64(std::string_view bytes);

// Strict: the length is a multiple of 4, padding only at the end, no
// whitespace or other characters, and the unused bits of the last symbol
// are zero, so every byte string has exactly one accepted encoding.
// Returns nullopt on any violation.
std::optional<std::string> DecodeBase64(std::string_view text);

}  // namespace plimsoll::wire

#endif  // PLIMSOLL_WIRE_BASE64_H_
