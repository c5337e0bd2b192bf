#include "wire/base64.h"

#include <array>
#include <cstdint>

namespace plimsoll::wire {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

constexpr std::array<int8_t, 256> MakeReverse() {
  std::array<int8_t, 256> table{};
  for (auto& entry : table) entry = -1;
  for (int i = 0; i < 64; ++i)
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  return table;
}
constexpr std::array<int8_t, 256> kReverse = MakeReverse();

}  // namespace

std::string EncodeBase64(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    uint32_t group = (uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                     (uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8) |
                     uint32_t{static_cast<unsigned char>(bytes[i + 2])};
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
    out.push_back(kAlphabet[(group >> 6) & 63]);
    out.push_back(kAlphabet[group & 63]);
  }
  size_t rest = bytes.size() - i;
  if (rest == 1) {
    uint32_t group = uint32_t{static_cast<unsigned char>(bytes[i])} << 16;
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
    out.append("==");
  } else if (rest == 2) {
    uint32_t group = (uint32_t{static_cast<unsigned char>(bytes[i])} << 16) |
                     (uint32_t{static_cast<unsigned char>(bytes[i + 1])} << 8);
    out.push_back(kAlphabet[(group >> 18) & 63]);
    out.push_back(kAlphabet[(group >> 12) & 63]);
    out.push_back(kAlphabet[(group >> 6) & 63]);
    out.push_back('=');
  }
  return out;
}

std::optional<std::string> DecodeBase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    bool last = i + 4 == text.size();
    size_t padding = 0;
    if (last) {
      if (text[i + 3] == '=') padding = text[i + 2] == '=' ? 2 : 1;
    }
    uint32_t group = 0;
    for (size_t k = 0; k < 4; ++k) {
      int8_t symbol = 0;
      if (k >= 4 - padding) {
        symbol = 0;  // a padding position, checked by `padding` above
      } else {
        symbol = kReverse[static_cast<unsigned char>(text[i + k])];
        if (symbol < 0) return std::nullopt;  // includes a misplaced '='
      }
      group = (group << 6) | static_cast<uint32_t>(symbol);
    }
    out.push_back(static_cast<char>((group >> 16) & 0xff));
    if (padding < 2) out.push_back(static_cast<char>((group >> 8) & 0xff));
    if (padding < 1) out.push_back(static_cast<char>(group & 0xff));
    // Canonical form: the bits the padding hides must be zero.
    if (padding == 1 && (group & 0xff) != 0) return std::nullopt;
    if (padding == 2 && (group & 0xffff) != 0) return std::nullopt;
  }
  return out;
}

}  // namespace plimsoll::wire
