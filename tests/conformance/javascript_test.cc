// The JavaScript language surface every provider offers for snippets
// (SPEC §2, §7): the same QuickJS build answers on every tier.
#include "conformance/conformance.h"

namespace plimsoll::conformance {
namespace {

// Math results of the embedded engine (wasi-libc's libm inside the wasm
// module), as float64 bit patterns. Every tier runs the same module, so every
// tier must print exactly these. (They are not the host's: glibc's tanh(0.3)
// ends in ...4fa, the module's in ...4f9; that is why every tier carries the
// same engine build rather than a native QuickJS.)
constexpr const char* kMathGolden =
    "bfd6664b2568d867 3ffa61298e1e069c 40026bb1bbb55516 40caea4e6126bb95 3fd4978fa3269ee1 "
    "3ff428a2f98d728b 3fd2a4dda7d914f9\n";

class JavascriptTest : public ConformanceTest {
 protected:
  void SetUp() override {
    ConformanceTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!Accepts(PayloadKind::kJavascript)) GTEST_SKIP() << "skipped: no javascript payloads";
  }
};

TEST_P(JavascriptTest, ConsoleRoutesLogAndInfoToStdoutWarnAndErrorToStderr) {
  Result result = RunJavascript(
      "console.log('log', 1); console.info('info'); console.warn('warn'); console.error('error');");
  EXPECT_EQ(result.exit_code, 0);
  EXPECT_EQ(result.stdout_bytes, "log 1\ninfo\n");
  EXPECT_EQ(result.stderr_bytes, "warn\nerror\n");
  EXPECT_FALSE(result.timed_out);
}

TEST_P(JavascriptTest, Json) {
  Result result = RunJavascript(
      "const v = JSON.parse('{\"a\":[1,2,{\"b\":null}],\"c\":\"\\\\u00e9\"}');"
      "console.log(JSON.stringify(v)); console.log(JSON.stringify({x: 1.5, y: [true]}, null, 1));");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(
      result.stdout_bytes,
      "{\"a\":[1,2,{\"b\":null}],\"c\":\"\xC3\xA9\"}\n{\n \"x\": 1.5,\n \"y\": [\n  true\n ]\n}\n");
}

TEST_P(JavascriptTest, PromisesAndAsyncAwaitDrainWithinTheRun) {
  Result result = RunJavascript(R"js(
    const order = [];
    async function step(n) { await null; order.push(n); return n * 2; }
    Promise.resolve().then(() => order.push('then'));
    (async () => {
      const values = await Promise.all([step(1), step(2)]);
      order.push('all:' + values.join(','));
      console.log(order.join(' '));
    })();
    order.push('sync');
  )js");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "sync then 1 2 all:2,4\n");
}

TEST_P(JavascriptTest, TimersRunInOrderWithinTheBudget) {
  Result result = RunJavascript(R"js(
    setTimeout(() => console.log('late'), 30);
    const cancelled = setTimeout(() => console.log('cancelled'), 5);
    setTimeout(() => console.log('early'), 10);
    setTimeout((a, b) => console.log('args', a, b), 20, 'x', 'y');
    clearTimeout(cancelled);
    console.log('now');
  )js");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "now\nearly\nargs x y\nlate\n");
}

TEST_P(JavascriptTest, BigIntAndModernSyntax) {
  Result result = RunJavascript(R"js(
    console.log((2n ** 100n).toString());
    class Counter { #n = 0; static of(k) { const c = new Counter(); c.#n = k; return c; } get n() { return this.#n; } }
    const {a, ...rest} = {a: 1, b: 2, c: 3};
    console.log(Counter.of(7).n, a, Object.keys(rest).join(''), null ?? 'dflt', ({}).x?.y);
    console.log([1, [2, [3, [4]]]].flat(Infinity).at(-1), 'abc'.replaceAll('b', 'B'), 2 ** 10);
  )js");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes,
            "1267650600228229401496703205376\n7 1 bc dflt undefined\n4 aBc 1024\n");
}

TEST_P(JavascriptTest, NumberFormattingIsCorrectlyRounded) {
  Result result = RunJavascript(
      "console.log((2.5).toFixed(0), (1.005).toFixed(2), (0.1 + 0.2), (1e21).toString(),"
      " (123.456).toPrecision(4), (-1.5).toFixed(0), 5e-324, 2**53 + 1);");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes,
            "3 1.00 0.30000000000000004 1e+21 123.5 -2 5e-324 9007199254740992\n");
}

// display() reaches the result by each provider's own path (the embedded
// engine's host; qjs, the displays directory and the agent's sealed report
// behind an OS wall), and the host measures the PNG.
TEST_P(JavascriptTest, DisplayReturnsRichOutputsTheHostMeasures) {
  Result result = RunJavascript(
      "display('<b>hi</b>', 'text/html');\n"
      "display(new Uint8Array([137, 80, 78, 71, 13, 10, 26, 10, 0, 0, 0, 13, 73, 72, 68, 82,\n"
      "                        0, 0, 2, 128, 0, 0, 1, 224]), 'image/png');\n"
      "display([1, 'two']);\n"
      "console.log('done');");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "done\n");
  ASSERT_EQ(result.displays.size(), 3u);
  EXPECT_EQ(result.displays[0].mime, "text/html");
  EXPECT_EQ(result.displays[0].data, "<b>hi</b>");
  EXPECT_EQ(result.displays[0].width, 0);
  EXPECT_EQ(result.displays[1].mime, "image/png");
  EXPECT_EQ(result.displays[1].width, 640);
  EXPECT_EQ(result.displays[1].height, 480);
  EXPECT_EQ(result.displays[2].mime, "text/plain");
  EXPECT_EQ(result.displays[2].data, "[ 1, 'two' ]");
  EXPECT_FALSE(result.displays_truncated);
}

TEST_P(JavascriptTest, MathResultsAreTheSameBitsOnEveryTier) {
  // These strings were produced by the embedded engine; every tier runs the
  // same wasm module, so every tier must print the same bits.
  Result result = RunJavascript(R"js(
    const bits = x => { const b = new DataView(new ArrayBuffer(8)); b.setFloat64(0, x);
                        return b.getBigUint64(0).toString(16); };
    console.log([Math.sin(1e6), Math.exp(0.5), Math.log(10), Math.pow(1.1, 100), Math.atan2(1, 3),
                 Math.cbrt(2), Math.tanh(0.3)].map(bits).join(' '));
  )js");
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, kMathGolden);
}

// Nothing a snippet changes reaches the next one, on any tier; on embedded
// both runs start from the same snapshot of a prepared instance
// (src/engine/snapshot.h), which must not make them share anything. Math.random
// is each run's own (QuickJS seeds it from the clock when a context is made,
// which a snapshot would replay).
TEST_P(JavascriptTest, EachSnippetStartsFresh) {
  Result first = RunJavascript(
      "globalThis.leftBehind = 1; Object.prototype.polluted = true; Array.prototype.map = null;"
      "JSON.stringify = () => 'forged'; console.log(Math.random());");
  ASSERT_EQ(first.exit_code, 0) << first.stderr_bytes;
  Result second = RunJavascript(
      "console.log(typeof leftBehind, ({}).polluted, typeof [].map, JSON.stringify([1]));"
      "console.log(Math.random());");
  ASSERT_EQ(second.exit_code, 0) << second.stderr_bytes;
  const size_t newline = second.stdout_bytes.find('\n');
  ASSERT_NE(newline, std::string::npos) << second.stdout_bytes;
  EXPECT_EQ(second.stdout_bytes.substr(0, newline + 1), "undefined undefined function [1]\n");
  EXPECT_NE(second.stdout_bytes.substr(newline + 1), first.stdout_bytes);  // 2^-53 of a false alarm
}

INSTANTIATE_TEST_SUITE_P(Providers, JavascriptTest, ::testing::ValuesIn(ProvidersUnderTest()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(JavascriptTest);

}  // namespace
}  // namespace plimsoll::conformance
