// Python snippets (SPEC §2, §7) on every provider that accepts them (others
// skip, like javascript_test.cc): outputs, exit codes, deadlines, memory and
// output caps, in the same shapes as the JavaScript tests.
#include <chrono>

#include "common/providers_under_test.h"
#include "conformance/conformance.h"

namespace plimsoll::conformance {
namespace {

class PythonTest : public ConformanceTest {
 protected:
  void SetUp() override {
    ConformanceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!Accepts(PayloadKind::kPython)) GTEST_SKIP() << "skipped: no python payloads";
  }

  Result RunPython(const std::string& code, int64_t timeout_ms = 0) {
    Request request;
    request.timeout_ms = timeout_ms;
    request.python = PythonPayload{code};
    auto result = sandbox().Run(request);
    if (!result.ok()) {
      ADD_FAILURE() << "the run was refused or failed: " << result.error().ToString();
      return Result{};
    }
    EXPECT_TRUE(CheckExchange(request, *result).ok()) << "the record does not match the exchange";
    EXPECT_EQ(result->kind, PayloadKind::kPython);
    return *result;
  }
};

TEST_P(PythonTest, SuccessIsExitZeroWithStdout) {
  Result result = RunPython("print(6*7)");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "42\n");
  EXPECT_EQ(result.stderr_bytes, "");
  EXPECT_FALSE(result.timed_out);
  EXPECT_FALSE(result.stdout_truncated);
  EXPECT_FALSE(result.stderr_truncated);
  EXPECT_EQ(result.provider, testing::ProviderNameOf(GetParam()));
  EXPECT_EQ(result.isolation, sandbox().evidence()->tier);
  EXPECT_FALSE(result.environment.empty());
}

TEST_P(PythonTest, StdoutAndStderrAreSeparateStreams) {
  Result result = RunPython(
      "import sys\nprint('out', 1)\nprint('err', 2, file=sys.stderr)\n"
      "sys.stdout.write('more out\\n')\nsys.stderr.write('more err\\n')\n");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "out 1\nmore out\n");
  EXPECT_EQ(result.stderr_bytes, "err 2\nmore err\n");
}

TEST_P(PythonTest, ExitCodesAreReported) {
  EXPECT_EQ(RunPython("import sys; sys.exit(3)").exit_code, 3);
  EXPECT_EQ(RunPython("import os; os._exit(7)").exit_code, 7);
  Result result = RunPython("raise SystemExit('a message')");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.stderr_bytes, "a message\n");
}

TEST_P(PythonTest, AnUncaughtExceptionIsExitOneWithItsTraceback) {
  Result result = RunPython(
      "def inner():\n    raise ValueError('bad thing')\n"
      "def outer():\n    inner()\n"
      "print('before', flush=True)\nouter()\n");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.stdout_bytes, "before\n");
  EXPECT_NE(result.stderr_bytes.find("Traceback (most recent call last):"), std::string::npos)
      << result.stderr_bytes;
  EXPECT_NE(result.stderr_bytes.find("ValueError: bad thing"), std::string::npos)
      << result.stderr_bytes;
  EXPECT_NE(result.stderr_bytes.find("in inner"), std::string::npos)
      << "no stack: " << result.stderr_bytes;
}

TEST_P(PythonTest, ASyntaxErrorIsExitOne) {
  Result result = RunPython("print('never'\n");
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_EQ(result.stdout_bytes, "");
  EXPECT_NE(result.stderr_bytes.find("SyntaxError"), std::string::npos) << result.stderr_bytes;
}

TEST_P(PythonTest, TheStandardLibraryIsThere) {
  Result result = RunPython(R"py(
import collections, csv, dataclasses, datetime, decimal, fractions, hashlib, io, itertools
import json, math, re, statistics, textwrap
@dataclasses.dataclass
class Point:
    x: int
    y: int
rows = list(csv.reader(io.StringIO("a,b\n1,2\n")))
print(json.dumps({"rows": rows, "point": dataclasses.asdict(Point(1, 2))}, sort_keys=True))
print(hashlib.sha256(b"abc").hexdigest()[:16], decimal.Decimal("0.1") + decimal.Decimal("0.2"),
      fractions.Fraction(1, 3) * 3, statistics.median([3, 1, 2]), math.comb(10, 3),
      re.sub(r"b+", "B", "abbbc"), collections.Counter("aab").most_common(1)[0][0],
      datetime.date(2024, 2, 29).isoformat())
)py");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes,
            "{\"point\": {\"x\": 1, \"y\": 2}, \"rows\": [[\"a\", \"b\"], [\"1\", \"2\"]]}\n"
            "ba7816bf8f01cfea 0.3 1 2 120 aBc a 2024-02-29\n");
}

TEST_P(PythonTest, OutputIsUtf8AndBytesSurvive) {
  Result result = RunPython(
      "import sys\nprint('\\u00e9 \\u2713')\nsys.stdout.flush()\n"
      "sys.stdout.buffer.write(bytes([0, 255, 254, 10]))\n");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes,
            std::string("\xC3\xA9 \xE2\x9C\x93\n") + std::string("\0\xFF\xFE\n", 4));
}

TEST_P(PythonTest, StdinIsEmpty) {
  Result result = RunPython("import sys; print(repr(sys.stdin.read()))");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "''\n");
}

TEST_P(PythonTest, AnEndlessLoopTimesOutWith124) {
  AwaitWarmSandbox();
  // Under software emulation python3 takes most of 500 ms just to start.
  const int64_t timeout_ms = EmulationScaledMs(500);
  auto start = std::chrono::steady_clock::now();
  Result result =
      RunPython("print('started', flush=True)\nwhile True:\n    pass\n", timeout_ms);
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(result.exit_code, kExitTimedOut);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.stdout_bytes, "started\n");  // output before the deadline is kept
  EXPECT_LT(elapsed, std::chrono::milliseconds(timeout_ms + 4'500));
}

TEST_P(PythonTest, SleepingPastTheDeadlineTimesOut) {
  AwaitWarmSandbox();
  auto start = std::chrono::steady_clock::now();
  Result result = RunPython("import time\ntime.sleep(60)\nprint('never')\n", 500);
  EXPECT_EQ(result.exit_code, kExitTimedOut);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.stdout_bytes, "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The provider is still healthy afterwards.
  EXPECT_EQ(RunPython("print('alive')").stdout_bytes, "alive\n");
}

TEST_P(PythonTest, DeepRecursionIsARecursionErrorNotACrash) {
  Result result = RunPython(
      "import sys\ndef f(n):\n    return f(n + 1) + 1\n"
      "try:\n    f(0)\nexcept RecursionError as e:\n    print('RecursionError', "
      "type(e).__name__)\n");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "RecursionError RecursionError\n");
}

TEST_P(PythonTest, RunningOutOfMemoryIsExit137AndTheHostSurvives) {
  Result result =
      RunPython("hoard = []\nwhile True:\n    hoard.append(b'x' * (8 << 20))\n", 10'000);
  EXPECT_EQ(result.exit_code, kExitOutOfMemory) << result.stderr_bytes;
  EXPECT_FALSE(result.timed_out);
  EXPECT_EQ(RunPython("print('alive')").stdout_bytes, "alive\n");
}

TEST_P(PythonTest, OutputBeyondTheCapIsTruncatedPerStream) {
  const int64_t cap = description().limits.output_cap_bytes;
  const std::string lines = std::to_string(cap / 1024 * 2);
  Result result = RunPython("import sys\nline = 'x' * 1023\nfor _ in range(" + lines +
                            "):\n    print(line)\nprint('small', file=sys.stderr)\n");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_TRUE(result.stdout_truncated);
  EXPECT_EQ(static_cast<int64_t>(result.stdout_bytes.size()), cap);
  EXPECT_EQ(result.stdout_bytes.substr(0, 1024), std::string(1023, 'x') + "\n");
  EXPECT_FALSE(result.stderr_truncated);
  EXPECT_EQ(result.stderr_bytes, "small\n");

  result = RunPython("import sys\nline = 'y' * 1023\nfor _ in range(" + lines +
                     "):\n    print(line, file=sys.stderr)\nprint('small')\n");
  EXPECT_TRUE(result.stderr_truncated);
  EXPECT_EQ(static_cast<int64_t>(result.stderr_bytes.size()), cap);
  EXPECT_FALSE(result.stdout_truncated);
  EXPECT_EQ(result.stdout_bytes, "small\n");
}

TEST_P(PythonTest, EachSnippetStartsFresh) {
  Result first = RunPython(
      "import os\nopen('/tmp/left-behind', 'w').write('x')\nopen('left-behind', 'w').write('x')\n"
      "print('wrote')\n");
  ASSERT_EQ(first.stdout_bytes, "wrote\n") << first.stderr_bytes;
  Result second = RunPython(
      "import os\nprint(os.path.exists('/tmp/left-behind'), os.path.exists('left-behind'))\n");
  EXPECT_EQ(second.stdout_bytes, "False False\n") << second.stderr_bytes;
}

INSTANTIATE_TEST_SUITE_P(Providers, PythonTest, ::testing::ValuesIn(ProvidersUnderTest()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(PythonTest);

}  // namespace
}  // namespace plimsoll::conformance
