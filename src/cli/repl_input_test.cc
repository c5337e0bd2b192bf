#include "cli/repl_input.h"

#include <gtest/gtest.h>

namespace plimsoll::cli {
namespace {

TEST(ReplInputTest, OpenBracketsAskForMoreOutsideStringsAndComments) {
  EXPECT_TRUE(CellNeedsMoreInput("function f() {", "javascript"));
  EXPECT_FALSE(CellNeedsMoreInput("function f() {\n  return 1\n}", "javascript"));
  EXPECT_FALSE(CellNeedsMoreInput("'{'", "javascript"));
  EXPECT_FALSE(CellNeedsMoreInput("x // {", "javascript"));
  EXPECT_TRUE(CellNeedsMoreInput("/* still", "javascript"));
  EXPECT_TRUE(CellNeedsMoreInput("`a template\nover lines", "javascript"));
  EXPECT_TRUE(CellNeedsMoreInput("f(1,", "python"));
  EXPECT_FALSE(CellNeedsMoreInput("s = '('  # (", "python"));
  EXPECT_TRUE(CellNeedsMoreInput("s = '''open", "python"));
  EXPECT_FALSE(CellNeedsMoreInput("s = '''a\nb'''", "python"));
}

TEST(ReplInputTest, PythonBlocksEndAtAnEmptyLine) {
  EXPECT_TRUE(CellNeedsMoreInput("for i in range(3):", "python"));
  EXPECT_TRUE(CellNeedsMoreInput("for i in range(3):\n    print(i)", "python"));
  EXPECT_FALSE(CellNeedsMoreInput("for i in range(3):\n    print(i)\n", "python"));
  EXPECT_TRUE(CellNeedsMoreInput("a = 1\nif a:\n    print(a)", "python"));
  EXPECT_FALSE(CellNeedsMoreInput("x = 41", "python"));
  EXPECT_FALSE(CellNeedsMoreInput("d = {'a': 1}", "python"));
}

TEST(ReplInputTest, ABackslashContinuesTheLine) {
  EXPECT_TRUE(CellNeedsMoreInput("1 + \\", "python"));
  EXPECT_TRUE(CellNeedsMoreInput("1 + \\", "javascript"));
}

}  // namespace
}  // namespace plimsoll::cli
