#include "engine/controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace plimsoll::engine {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

constexpr char kAccepted[] =
    "function control(x, v, theta, omega) { return 40 * theta + 5 * omega + x + v; }\n";

std::unique_ptr<JavascriptController> Load(const std::string& script) {
  auto controller = JavascriptController::Load(script, SessionLimits{}, Clock::now() + 10s);
  EXPECT_TRUE(controller.ok()) << controller.error().ToString();
  return controller.ok() ? std::move(*controller) : nullptr;
}

std::string Answer(JavascriptController& controller, std::vector<double> state,
                   std::string* printed = nullptr) {
  std::string ignored;
  auto answer = controller.Answer(state, Clock::now() + 5s, printed ? printed : &ignored);
  return answer.ok() ? *answer : "error: " + answer.error().message();
}

TEST(JavascriptController, AnswersWithTheShortestRoundTripSpelling) {
  auto controller = Load(kAccepted);
  ASSERT_NE(controller, nullptr);
  EXPECT_EQ(Answer(*controller, {0, 0, 0.05, 0}), "2");
  // 40·0.3 + 5·0.7 + 0.1 + 0.2 in doubles, left to right (Python's repr agrees).
  EXPECT_EQ(Answer(*controller, {0.1, 0.2, 0.3, 0.7}), "15.799999999999999");
}

TEST(JavascriptController, TheStateArrivesWithTheSameBits) {
  auto controller = Load("function control(...s) { return s; }");
  ASSERT_NE(controller, nullptr);
  const double tricky[] = {0.1 + 0.2, 5e-324, -0.0, 1.7976931348623157e308, 1e-7, 123456789.0};
  EXPECT_EQ(Answer(*controller, {tricky, tricky + 6}),
            "0.30000000000000004 5e-324 0 1.7976931348623157e+308 1e-7 123456789");
  // -0 is spelt "0" by String(); Object.is tells it arrived as -0.
  auto sign = Load("function control(z) { return Object.is(z, -0) ? 1 : 0; }");
  ASSERT_NE(sign, nullptr);
  EXPECT_EQ(Answer(*sign, {-0.0}), "1");
}

TEST(JavascriptController, StateLivesFromTickToTickAndPrintsAreKeptApart) {
  auto controller = Load(
      "let ticks = 0;\nfunction control(x) { ticks++; console.log('tick', ticks); return [ticks, "
      "-x]; }");
  ASSERT_NE(controller, nullptr);
  std::string printed;
  EXPECT_EQ(Answer(*controller, {1.5}, &printed), "1 -1.5");
  EXPECT_EQ(Answer(*controller, {2}, &printed), "2 -2");
  EXPECT_EQ(printed, "tick 1\ntick 2\n");
}

TEST(JavascriptController, AnswersThatAreNotNumbersPassAsSpelt) {
  auto controller =
      Load("function control(x) { return x > 0 ? NaN : x < 0 ? undefined : 'a\\nb'; }");
  ASSERT_NE(controller, nullptr);
  EXPECT_EQ(Answer(*controller, {1}), "NaN");
  EXPECT_EQ(Answer(*controller, {-1}), "undefined");
  // A string answer cannot add a line: the newline stays escaped.
  EXPECT_EQ(Answer(*controller, {0}), "a\\nb");
}

TEST(JavascriptController, RefusesScriptsWithoutControl) {
  for (const char* script :
       {"let x = 1;", "var control = 3;", "throw new Error('boom')", "while (true) {}"}) {
    auto controller = JavascriptController::Load(script, SessionLimits{}, Clock::now() + 300ms);
    ASSERT_FALSE(controller.ok()) << script;
    EXPECT_EQ(controller.error().code(), ErrorCode::kInvalidArgument) << script;
  }
  auto thrown =
      JavascriptController::Load("throw new Error('boom')", SessionLimits{}, Clock::now() + 5s);
  ASSERT_FALSE(thrown.ok());
  EXPECT_THAT(thrown.error().message(), HasSubstr("boom"));
}

TEST(JavascriptController, AThrowOrAnOverrunSpendsTheController) {
  auto thrower = Load("function control(x) { if (x > 0) throw new Error('no ' + x); return 0; }");
  ASSERT_NE(thrower, nullptr);
  EXPECT_EQ(Answer(*thrower, {0}), "0");
  EXPECT_THAT(Answer(*thrower, {2}), HasSubstr("no 2"));
  EXPECT_THAT(Answer(*thrower, {0}), HasSubstr("no 2")) << "spent after the throw";

  auto spinner = Load("function control(x) { while (x > 0) {} return 0; }");
  ASSERT_NE(spinner, nullptr);
  std::string printed;
  auto answer = spinner->Answer(std::vector<double>{1}, Clock::now() + 200ms, &printed);
  ASSERT_FALSE(answer.ok());
  EXPECT_EQ(answer.error().code(), ErrorCode::kDeadlineExceeded);
}

// qjs --controller: the same, as the line protocol's child process.
TEST(QjsController, AnswersEachStateLineAtOnce) {
  char directory[] = "/tmp/plimsoll-qjs-controller-XXXXXX";
  ASSERT_NE(mkdtemp(directory), nullptr);
  const std::string script = std::string(directory) + "/controller.js";
  std::ofstream(script) << kAccepted << "console.log('loaded');\n";
  int to_child[2], from_child[2];
  ASSERT_EQ(pipe(to_child), 0);
  ASSERT_EQ(pipe(from_child), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    dup2(to_child[0], 0);
    dup2(from_child[1], 1);
    close(to_child[1]);
    close(from_child[0]);
    execl(PLIMSOLL_QJS_BINARY, "qjs", "--controller", script.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(to_child[0]);
  close(from_child[1]);
  // One line in, one line out, before the next line is written: nothing
  // waits for the end of the run.
  auto exchange = [&](const std::string& state) {
    EXPECT_EQ(write(to_child[1], state.data(), state.size()), static_cast<ssize_t>(state.size()));
    std::string line;
    char c;
    while (read(from_child[0], &c, 1) == 1 && c != '\n') line += c;
    return line;
  };
  EXPECT_EQ(exchange("0 0 0.05 0\n"), "2");
  EXPECT_EQ(exchange("0.1 0.2 0.3 0.7\n"), "15.799999999999999");
  close(to_child[1]);
  int status = 0;
  waitpid(child, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  char rest;
  EXPECT_EQ(read(from_child[0], &rest, 1), 0) << "'loaded' went to stderr, not stdout";
  close(from_child[0]);
  std::system(("rm -rf " + std::string(directory)).c_str());
}

}  // namespace
}  // namespace plimsoll::engine
