#include "daemon/log.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace plimsoll::daemon {
namespace {

using namespace std::string_literals;

// Every byte of `text` a terminal or a line-based reader could act on.
bool HasControlBytes(const std::string& text) {
  for (unsigned char byte : text) {
    if (byte < 0x20 || byte == 0x7f) return true;
  }
  return false;
}

TEST(Log, OneLinePerEventWhateverTheMessageHolds) {
  const std::string hostile =
      "runtime said: line one\nplimsolld: info: forged\r\x1b[31mred\x1b[0m tab\tnul"s + '\0' +
      "end \xff\xfe bad utf-8 \xc3 cut, C1 \xc2\x9b csi, sep \xe2\x80\xa8 done"s;
  std::ostringstream out;
  Log log(out);
  log.Error(hostile);
  log.Warning(hostile);
  log.Info(hostile);
  log.Audit(hostile);

  std::string text = out.str();
  size_t lines = 0;
  std::istringstream reader(text);
  for (std::string line; std::getline(reader, line);) {
    ++lines;
    EXPECT_FALSE(HasControlBytes(line)) << line;
    EXPECT_EQ(line.find("\xc2\x9b"), std::string::npos) << "a C1 control passed";
    EXPECT_EQ(line.find("\xe2\x80\xa8"), std::string::npos) << "U+2028 passed";
    EXPECT_TRUE(line.starts_with("plimsolld: ")) << line;
  }
  EXPECT_EQ(lines, 4u);
  EXPECT_EQ(text.back(), '\n');
}

TEST(Log, EscapesAreVisibleAndPrintableTextIsKept) {
  EXPECT_EQ(EscapeLogText("plain text, a \\ backslash"), "plain text, a \\ backslash");
  EXPECT_EQ(EscapeLogText("a\nb\rc\td"), "a\\nb\\rc\\td");
  EXPECT_EQ(EscapeLogText("\x1b[2J"), "\\x1b[2J");
  EXPECT_EQ(EscapeLogText("nul"s + '\0' + "x"), "nul\\x00x");
  EXPECT_EQ(EscapeLogText("del\x7f"), "del\\x7f");
  EXPECT_EQ(EscapeLogText("bad \xff \xc3"), "bad \\xff \\xc3");
  EXPECT_EQ(EscapeLogText("overlong \xc0\xaf"), "overlong \\xc0\\xaf");
  EXPECT_EQ(EscapeLogText("surrogate \xed\xa0\x80"), "surrogate \\xed\\xa0\\x80");
  EXPECT_EQ(EscapeLogText("csi \xc2\x9b sep \xe2\x80\xa9"), "csi \\u{009b} sep \\u{2029}");
  // Valid UTF-8 other than controls and separators is kept as written.
  EXPECT_EQ(EscapeLogText("caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x90\x8d"),
            "caf\xc3\xa9 \xe2\x9c\x93 \xf0\x9f\x90\x8d");
}

}  // namespace
}  // namespace plimsoll::daemon
