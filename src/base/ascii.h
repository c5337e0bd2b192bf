// ASCII-only text helpers for protocol text (HTTP header names, methods,
// media types): never locale-dependent, never touching bytes >= 0x80.
//
// Usage:
//   if (AsciiLower(name) == "content-type") value = TrimSpaces(value);
#ifndef PLIMSOLL_BASE_ASCII_H_
#define PLIMSOLL_BASE_ASCII_H_

#include <string>
#include <string_view>

namespace plimsoll::base {

inline std::string AsciiLower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

inline std::string AsciiUpper(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

// `text` without leading and trailing spaces and tabs (HTTP's OWS).
inline std::string_view TrimSpaces(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace plimsoll::base

#endif  // PLIMSOLL_BASE_ASCII_H_
