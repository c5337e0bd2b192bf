#include "cli/argv_split.h"

#include <gtest/gtest.h>

namespace plimsoll::cli {
namespace {

using Argv = std::vector<std::string>;

TEST(SplitArgvTest, Words) {
  EXPECT_EQ(*SplitArgv("python3 main.py"), (Argv{"python3", "main.py"}));
  EXPECT_EQ(*SplitArgv("  node   a.js  "), (Argv{"node", "a.js"}));
}

TEST(SplitArgvTest, QuotesAndEscapes) {
  EXPECT_EQ(*SplitArgv("python3 -c 'print(\"a b\")'"), (Argv{"python3", "-c", "print(\"a b\")"}));
  EXPECT_EQ(*SplitArgv("echo \"a \\\"b\\\" c\""), (Argv{"echo", "a \"b\" c"}));
  EXPECT_EQ(*SplitArgv("echo a\\ b ''"), (Argv{"echo", "a b", ""}));
  EXPECT_EQ(*SplitArgv("echo $HOME *"), (Argv{"echo", "$HOME", "*"}));  // nothing expanded
}

TEST(SplitArgvTest, JsonArrays) {
  EXPECT_EQ(*SplitArgv(R"(["python3", "-m", "pytest"])"), (Argv{"python3", "-m", "pytest"}));
  EXPECT_FALSE(SplitArgv(R"(["python3", 1])").ok());
  EXPECT_FALSE(SplitArgv("[not json").ok());
}

TEST(SplitArgvTest, Errors) {
  EXPECT_FALSE(SplitArgv("").ok());
  EXPECT_FALSE(SplitArgv("   ").ok());
  EXPECT_FALSE(SplitArgv("echo 'open").ok());
  EXPECT_FALSE(SplitArgv("echo \\").ok());
}

}  // namespace
}  // namespace plimsoll::cli
