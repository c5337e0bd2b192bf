// Exit codes, deadlines, memory and output caps (SPEC §2, §6): the guest
// cannot outrun its budget, and the host survives whatever the guest does.
#include <algorithm>
#include <chrono>

#include "conformance/conformance.h"

namespace plimsoll::conformance {
namespace {

class LimitsTest : public ConformanceTest {
 protected:
  void SetUp() override {
    ConformanceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!Accepts(PayloadKind::kJavascript)) GTEST_SKIP() << "skipped: no javascript payloads";
  }
};

TEST_P(LimitsTest, SuccessIsExitZero) {
  Result result = RunJavascript("console.log(6*7)");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.stdout_bytes, "42\n");
  EXPECT_FALSE(result.timed_out);
  EXPECT_FALSE(result.stdout_truncated);
  EXPECT_FALSE(result.stderr_truncated);
}

TEST_P(LimitsTest, AnUncaughtExceptionIsExitOneWithMessageAndStack) {
  Result result = RunJavascript(
      "function inner() { throw new TypeError('bad thing'); }\nfunction outer() { inner(); }\n"
      "console.log('before'); outer();");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.stdout_bytes, "before\n");
  EXPECT_NE(result.stderr_bytes.find("TypeError: bad thing"), std::string::npos)
      << result.stderr_bytes;
  EXPECT_NE(result.stderr_bytes.find("inner"), std::string::npos)
      << "no stack: " << result.stderr_bytes;
}

TEST_P(LimitsTest, AnUnhandledRejectionIsExitOne) {
  Result result = RunJavascript("Promise.reject(new Error('nobody caught me'));");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.stderr_bytes.find("nobody caught me"), std::string::npos) << result.stderr_bytes;
  result = RunJavascript("(async () => { await null; throw new RangeError('async boom'); })();");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.stderr_bytes.find("async boom"), std::string::npos) << result.stderr_bytes;
}

TEST_P(LimitsTest, AnEndlessLoopTimesOutWith124) {
  AwaitWarmSandbox();
  auto start = std::chrono::steady_clock::now();
  Result result = RunJavascript("console.log('started'); for (;;) {}", /*timeout_ms=*/300);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(result.exit_code, kExitTimedOut);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.stdout_bytes, "started\n");  // output before the deadline is kept
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST_P(LimitsTest, TimersBeyondTheDeadlineTimeOut) {
  Result result = RunJavascript("setTimeout(() => console.log('never'), 60000);", 300);
  EXPECT_EQ(result.exit_code, kExitTimedOut);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.stdout_bytes, "");
}

TEST_P(LimitsTest, ACatastrophicRegexStopsAtTheHardDeadline) {
  AwaitWarmSandbox();
  auto start = std::chrono::steady_clock::now();
  Result result =
      RunJavascript("console.log(/^(a+)+$/.test('a'.repeat(40) + '!'));", /*timeout_ms=*/500);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(result.exit_code, kExitTimedOut);
  EXPECT_TRUE(result.timed_out);
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  // The provider is still healthy afterwards.
  EXPECT_EQ(RunJavascript("console.log('alive')").stdout_bytes, "alive\n");
}

TEST_P(LimitsTest, DeepRecursionIsARangeErrorNotACrash) {
  Result result = RunJavascript(
      "function f(n) { return f(n + 1) + 1; }\n"
      "try { f(0); } catch (e) { console.log(e instanceof RangeError, e.message); }");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes.rfind("true ", 0), 0u) << result.stdout_bytes;
}

TEST_P(LimitsTest, RunningOutOfMemoryIsExit137AndTheHostSurvives) {
  // Under software emulation filling the VM's memory takes most of 10 s on a
  // busy host (measured: timed out at 10 s while the hostile suite ran).
  Result result = RunJavascript(
      "const hoard = []; for (;;) hoard.push(new Array(1 << 20).fill(hoard.length));",
      std::min<int64_t>(EmulationScaledMs(10'000), 30'000));
  EXPECT_EQ(result.exit_code, kExitOutOfMemory) << result.stderr_bytes;
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(RunJavascript("console.log('alive')").stdout_bytes, "alive\n");
}

TEST_P(LimitsTest, OutputBeyondTheCapIsTruncatedPerStream) {
  const int64_t cap = description().limits.output_cap_bytes;
  Result result = RunJavascript(
      "const line = 'x'.repeat(1023);"
      "for (let i = 0; i < " +
      std::to_string(cap / 1024 * 2) + "; i++) console.log(line); console.error('small');");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_TRUE(result.stdout_truncated);
  EXPECT_EQ(static_cast<int64_t>(result.stdout_bytes.size()), cap);
  EXPECT_FALSE(result.stderr_truncated);
  EXPECT_EQ(result.stderr_bytes, "small\n");

  result = RunJavascript(
      "const line = 'y'.repeat(1023);"
      "for (let i = 0; i < " +
      std::to_string(cap / 1024 * 2) + "; i++) console.error(line); console.log('small');");
  EXPECT_TRUE(result.stderr_truncated);
  EXPECT_FALSE(result.stdout_truncated);
  EXPECT_EQ(result.stdout_bytes, "small\n");
}

INSTANTIATE_TEST_SUITE_P(Providers, LimitsTest, ::testing::ValuesIn(ProvidersUnderTest()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(LimitsTest);

}  // namespace
}  // namespace plimsoll::conformance
