#include "base/utf8.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace plimsoll::base {
namespace {

// The generic encoder (no validity rules), to build every code point and
// the forms the validator must refuse.
std::string Encode(uint32_t cp, int length) {
  std::string out;
  switch (length) {
    case 1:
      out.push_back(static_cast<char>(cp));
      break;
    case 2:
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      break;
    case 3:
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      break;
    default:
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      break;
  }
  return out;
}

int ShortestLength(uint32_t cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

TEST(Utf8Test, AcceptsEveryScalarValueInShortestForm) {
  for (uint32_t cp = 0; cp <= 0x10FFFF; ++cp) {
    bool surrogate = cp >= 0xD800 && cp <= 0xDFFF;
    ASSERT_EQ(IsValidUtf8(Encode(cp, ShortestLength(cp))), !surrogate) << std::hex << cp;
  }
}

TEST(Utf8Test, RejectsOverlongForms) {
  for (uint32_t cp : {0x00u, 0x2Fu, 0x7Fu, 0x7FFu, 0xFFFFu}) {
    for (int length = ShortestLength(cp) + 1; length <= 4; ++length) {
      EXPECT_FALSE(IsValidUtf8(Encode(cp, length))) << std::hex << cp << " in " << length;
    }
  }
  EXPECT_FALSE(IsValidUtf8("\xC0\xAF"));  // overlong '/'
  EXPECT_FALSE(IsValidUtf8("\xC1\xBF"));
}

TEST(Utf8Test, RejectsSurrogatesAndOutOfRange) {
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\x80"));              // U+D800
  EXPECT_FALSE(IsValidUtf8("\xED\xBF\xBF"));              // U+DFFF
  EXPECT_FALSE(IsValidUtf8("\xED\xA0\xBD\xED\xB8\x80"));  // CESU-8 pair
  EXPECT_TRUE(IsValidUtf8("\xED\x9F\xBF"));               // U+D7FF
  EXPECT_TRUE(IsValidUtf8("\xF4\x8F\xBF\xBF"));           // U+10FFFF
  EXPECT_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));          // U+110000
  for (int lead = 0xF5; lead <= 0xFF; ++lead) {
    EXPECT_FALSE(IsValidUtf8(std::string(1, static_cast<char>(lead)) + "\x80\x80\x80")) << lead;
  }
}

TEST(Utf8Test, RejectsStrayAndTruncatedSequences) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8(std::string("a\0b", 3)));
  EXPECT_FALSE(IsValidUtf8("\x80"));
  EXPECT_FALSE(IsValidUtf8("a\xBF"));
  EXPECT_FALSE(IsValidUtf8("\xC3"));          // truncated 2-byte
  EXPECT_FALSE(IsValidUtf8("\xE2\x82"));      // truncated 3-byte
  EXPECT_FALSE(IsValidUtf8("\xF0\x9F\x9A"));  // truncated 4-byte
  EXPECT_FALSE(IsValidUtf8("\xE2\x28\xA1"));  // bad continuation
  EXPECT_FALSE(IsValidUtf8("\xC3\xA9\xFF"));
  EXPECT_TRUE(IsValidUtf8("h\xC3\xA9llo \xE4\xB8\x96 \xF0\x9F\x9A\x80"));
}

}  // namespace
}  // namespace plimsoll::base
