// `plimsoll repl` through cli::Main with its input from a string, on the
// embedded provider (the terminal test is tests/integration/cli_repl_test.sh).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "cli/cli.h"
#include "cli/exit_status.h"

namespace plimsoll::cli {
namespace {

using ::testing::HasSubstr;

struct Typed {
  int status;
  std::string out;
  std::string err;
};

Typed Type(std::vector<std::string> args, const std::string& input) {
  std::istringstream in(input);
  std::ostringstream out, err;
  args.insert(args.begin(), "plimsoll");
  int status = Main(args, in, out, err);
  return {status, out.str(), err.str()};
}

TEST(ReplCommandTest, StateIsKeptFromCellToCellAndCtrlDClosesTheSession) {
  Typed typed = Type({"repl", "--provider", "embedded"},
                     "let x = 41\nx + 1\nfunction twice(n) {\n  return 2 * n\n}\ntwice(x)\n");
  EXPECT_EQ(typed.status, kExitRanOk) << typed.err;
  EXPECT_EQ(typed.out, "42\n82\n");
  EXPECT_THAT(typed.err, HasSubstr("javascript on embedded, tier process"));
  EXPECT_THAT(typed.err, HasSubstr("... "));  // the function took a continuation line
  EXPECT_THAT(typed.err, HasSubstr("session closed after 4 call(s); last record "));
}

TEST(ReplCommandTest, AnExceptionIsShownAndTheStateSurvives) {
  Typed typed = Type({"repl", "--provider", "embedded"},
                     "var kept = 'yes'\nthrow new Error('on purpose')\nkept\n");
  EXPECT_EQ(typed.status, kExitRanOk);
  EXPECT_THAT(typed.err, HasSubstr("Error: on purpose"));
  EXPECT_EQ(typed.out, "'yes'\n");
}

TEST(ReplCommandTest, ADeadlineSaysTheInterpreterRestarted) {
  Typed typed =
      Type({"repl", "--provider", "embedded", "--timeout", "200"}, "var a = 1\nfor (;;) {}\ntypeof a\n");
  EXPECT_THAT(typed.err, HasSubstr("[timed out"));
  EXPECT_THAT(typed.err, HasSubstr("[a fresh interpreter ran this cell"));
  EXPECT_EQ(typed.out, "'undefined'\n");
}

TEST(ReplCommandTest, AProviderWithoutSessionsIsRefusedAndALanguageChecked) {
  Typed disabled = Type({"repl", "--provider", "disabled"}, "");
  EXPECT_EQ(disabled.status, kExitNothingRan) << disabled.err;
  Typed python = Type({"repl", "--provider", "embedded", "--lang", "cobol"}, "");
  EXPECT_EQ(python.status, kExitUsage);
}

}  // namespace
}  // namespace plimsoll::cli
