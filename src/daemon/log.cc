#include "daemon/log.h"

#include <array>
#include <cstdint>
#include <cstdio>

namespace plimsoll::daemon {
namespace {

bool IsPrintableAscii(unsigned char byte) {
  return byte >= 0x20 && byte < 0x7f;
}

void AppendHexByte(std::string& out, unsigned char byte) {
  std::array<char, 5> text{};
  std::snprintf(text.data(), text.size(), "\\x%02x", byte);
  out += text.data();
}

// The length of the valid UTF-8 sequence at the start of `text` and its code
// point, or 0 when it is not one (overlong forms, surrogates and code points
// above U+10FFFF are invalid).
size_t DecodeUtf8(std::string_view text, uint32_t& code_point) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  unsigned char lead = byte(0);
  size_t length = 0;
  uint32_t minimum = 0;
  if (lead >= 0xc2 && lead <= 0xdf) {
    length = 2, minimum = 0x80, code_point = lead & 0x1f;
  } else if (lead >= 0xe0 && lead <= 0xef) {
    length = 3, minimum = 0x800, code_point = lead & 0x0f;
  } else if (lead >= 0xf0 && lead <= 0xf4) {
    length = 4, minimum = 0x10000, code_point = lead & 0x07;
  } else {
    return 0;
  }
  if (text.size() < length) return 0;
  for (size_t i = 1; i < length; ++i) {
    if ((byte(i) & 0xc0) != 0x80) return 0;
    code_point = (code_point << 6) | (byte(i) & 0x3f);
  }
  if (code_point < minimum || code_point > 0x10ffff) return 0;
  if (code_point >= 0xd800 && code_point <= 0xdfff) return 0;
  return length;
}

// C1 controls and the separators some readers take as line breaks.
bool IsInvisibleCodePoint(uint32_t code_point) {
  return (code_point >= 0x80 && code_point <= 0x9f) || code_point == 0x2028 || code_point == 0x2029;
}

}  // namespace

std::string EscapeLogText(std::string_view text) {
  bool plain = true;
  for (char c : text) plain = plain && IsPrintableAscii(static_cast<unsigned char>(c));
  if (plain) return std::string(text);
  std::string out;
  out.reserve(text.size() + 16);
  size_t i = 0;
  while (i < text.size()) {
    unsigned char byte = static_cast<unsigned char>(text[i]);
    if (IsPrintableAscii(byte)) {
      out += static_cast<char>(byte);
      ++i;
      continue;
    }
    if (byte == '\n' || byte == '\r' || byte == '\t') {
      out += byte == '\n' ? "\\n" : byte == '\r' ? "\\r" : "\\t";
      ++i;
      continue;
    }
    uint32_t code_point = 0;
    size_t length = byte >= 0x80 ? DecodeUtf8(text.substr(i), code_point) : 0;
    if (length == 0) {
      AppendHexByte(out, byte);
      ++i;
      continue;
    }
    if (IsInvisibleCodePoint(code_point)) {
      std::array<char, 12> escape{};
      std::snprintf(escape.data(), escape.size(), "\\u{%04x}", static_cast<unsigned>(code_point));
      out += escape.data();
    } else {
      out.append(text.substr(i, length));
    }
    i += length;
  }
  return out;
}

void Log::Write(std::string_view level, std::string_view message) {
  std::string line = EscapeLogText(message);
  std::lock_guard lock(mutex_);
  out_ << "plimsolld: " << level << ": " << line << '\n';
  out_.flush();
}

}  // namespace plimsoll::daemon
