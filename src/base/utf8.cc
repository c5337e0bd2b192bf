#include "base/utf8.h"

#include <cstddef>

namespace plimsoll::base {

// Table 3-7 of the Unicode Standard ("Well-Formed UTF-8 Byte Sequences"):
// the second byte's range depends on the first byte; later bytes are 80..BF.
bool IsValidUtf8(std::string_view bytes) {
  size_t i = 0;
  const size_t n = bytes.size();
  while (i < n) {
    auto b0 = static_cast<unsigned char>(bytes[i]);
    if (b0 < 0x80) {
      ++i;
      continue;
    }
    size_t length = 0;
    unsigned char low = 0x80, high = 0xBF;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      length = 2;
    } else if (b0 == 0xE0) {
      length = 3, low = 0xA0;  // no overlongs
    } else if ((b0 >= 0xE1 && b0 <= 0xEC) || b0 == 0xEE || b0 == 0xEF) {
      length = 3;
    } else if (b0 == 0xED) {
      length = 3, high = 0x9F;  // no surrogates
    } else if (b0 == 0xF0) {
      length = 4, low = 0x90;  // no overlongs
    } else if (b0 >= 0xF1 && b0 <= 0xF3) {
      length = 4;
    } else if (b0 == 0xF4) {
      length = 4, high = 0x8F;  // nothing above U+10FFFF
    } else {
      return false;  // 80..C1 (continuation or overlong lead), F5..FF
    }
    if (n - i < length) return false;
    auto b1 = static_cast<unsigned char>(bytes[i + 1]);
    if (b1 < low || b1 > high) return false;
    for (size_t k = 2; k < length; ++k) {
      auto b = static_cast<unsigned char>(bytes[i + k]);
      if (b < 0x80 || b > 0xBF) return false;
    }
    i += length;
  }
  return true;
}

}  // namespace plimsoll::base
