#include "engine/engine.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "engine/snapshot.h"

namespace plimsoll::engine {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using namespace std::chrono_literals;

Limits WithTimeout(std::chrono::milliseconds timeout) {
  Limits limits;
  limits.deadline = std::chrono::steady_clock::now() + timeout;
  return limits;
}

Outcome RunScript(std::string_view code, Limits limits = WithTimeout(5s)) {
  auto outcome = EvaluateJavascript(code, limits);
  EXPECT_TRUE(outcome.ok()) << outcome.error().ToString();
  return outcome.ok() ? *outcome : Outcome{};
}

TEST(EngineTest, ConsoleLogWritesToStdout) {
  Outcome outcome = RunScript("console.log(6*7)");
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.stdout_bytes, "42\n");
  EXPECT_EQ(outcome.stderr_bytes, "");
  EXPECT_FALSE(outcome.timed_out);
  EXPECT_FALSE(outcome.out_of_memory);
}

TEST(EngineTest, StreamsAreRoutedLikeNode) {
  Outcome outcome = RunScript(
      "console.log('a'); console.info('b'); console.debug('c');"
      "console.warn('d'); console.error('e'); console.assert(1 === 2, 'f');");
  EXPECT_EQ(outcome.stdout_bytes, "a\nb\nc\n");
  EXPECT_EQ(outcome.stderr_bytes, "d\ne\nAssertion failed: f\n");
}

TEST(EngineTest, FormatsValuesLikeNodeInspect) {
  Outcome outcome = RunScript(R"JS(
    console.log("str", 1.5, -0, 10n, true, null, undefined);
    console.log({ a: 1, 'b-c': "x", d: [1, [2, [3, [4]]]] });
    console.log([], {}, [ "it's" ], new Map([["k", 1]]), new Set([1, 2]));
    console.log(function named() {}, class K {}, Symbol("s"));
    const o = { self: null }; o.self = o; console.log(o);
    console.log("%s is %d years and %j", "Bob", 42.9, { x: 1 });
    console.log(new Uint8Array([1, 2]));
  )JS");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.stderr_bytes;
  EXPECT_EQ(outcome.stdout_bytes,
            "str 1.5 -0 10n true null undefined\n"
            "{ a: 1, 'b-c': 'x', d: [ 1, [ 2, [Array] ] ] }\n"
            "[] {} [ \"it's\" ] Map(1) { 'k' => 1 } Set(2) { 1, 2 }\n"
            "[Function: named] [class K] Symbol(s)\n"
            "{ self: [Circular *1] }\n"
            "Bob is 42.9 years and {\"x\":1}\n"
            "Uint8Array(2) [ 1, 2 ]\n");
}

TEST(EngineTest, JsonRoundTrips) {
  Outcome outcome = RunScript(
      "const v = JSON.parse('{\"a\":[1,2,{\"b\":null}],\"c\":\"\\\\u00e9\"}');"
      "console.log(JSON.stringify(v)); console.log(JSON.stringify({x:1},null,1));");
  EXPECT_EQ(outcome.stdout_bytes,
            "{\"a\":[1,2,{\"b\":null}],\"c\":\"\xC3\xA9\"}\n{\n \"x\": 1\n}\n");
}

TEST(EngineTest, PromisesAndAsyncAwaitRunToCompletion) {
  Outcome outcome = RunScript(R"JS(
    console.log("sync 1");
    Promise.resolve().then(() => console.log("micro"));
    queueMicrotask(() => console.log("queued"));
    async function f() { await null; return "async"; }
    f().then(console.log);
    const v = await new Promise(resolve => setTimeout(() => resolve("awaited"), 10));
    console.log(v);
    console.log("sync 2");
  )JS");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.stderr_bytes;
  EXPECT_EQ(outcome.stdout_bytes, "sync 1\nmicro\nqueued\nasync\nawaited\nsync 2\n");
}

// The due times are about 90 ms apart or more, and 180 ms where it matters:
// an interval's next tick is due an interval after the previous one fired,
// so a tick the loaded host fired late moves the later ones (with 60 ms
// between the second tick and "e", `make test`'s parallel suites once
// reordered them).
TEST(EngineTest, TimersFireInDueOrderInRealTime) {
  const auto start = std::chrono::steady_clock::now();
  Outcome outcome = RunScript(R"JS(
    setTimeout(() => console.log("c 990"), 990);
    setTimeout(() => console.log("a 0"), 0);
    setTimeout((x, y) => console.log("b 300", x, y), 300, 1, 2);
    const gone = setTimeout(() => console.log("cleared"), 150);
    clearTimeout(gone);
    setTimeout(() => { console.log("d 0 (second)"); setTimeout(() => console.log("e nested +900"), 900); }, 0);
    let n = 0;
    const every = setInterval(() => { console.log("tick", ++n); if (n === 3) clearInterval(every); }, 360);
  )JS");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.stderr_bytes;
  EXPECT_EQ(outcome.stdout_bytes,
            "a 0\nd 0 (second)\nb 300 1 2\ntick 1\ntick 2\ne nested +900\n"
            "c 990\ntick 3\n");
  // The third tick is due 1080 ms in: the run waited for it.
  EXPECT_GE(std::chrono::steady_clock::now() - start, 1075ms);
}

TEST(EngineTest, DateAndPerformanceNowAdvanceWithTheTimers) {
  Outcome outcome = RunScript(R"JS(
    const t = Date.now(), p = performance.now();
    await new Promise(r => setTimeout(r, 1500));
    const elapsed = Date.now() - t, perf = performance.now() - p;
    console.log(elapsed >= 1500 && elapsed <= 1600 ? "ok" : elapsed, perf >= 1499 && perf <= 1600 ? "ok" : perf);
  )JS");
  EXPECT_EQ(outcome.stdout_bytes, "ok ok\n") << outcome.stderr_bytes;
}

TEST(EngineTest, TimerDueAfterTheDeadlineTimesOutAtTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  Outcome outcome = RunScript("console.log('start'); setTimeout(() => console.log('late'), 60000);",
                              WithTimeout(500ms));
  EXPECT_EQ(outcome.exit_code, kExitTimeout);
  EXPECT_TRUE(outcome.timed_out);
  EXPECT_EQ(outcome.stdout_bytes, "start\n");
  // It slept until the deadline, as a host would have, and not beyond.
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_GE(elapsed, 490ms);
  EXPECT_LT(elapsed, 2s);
}

double ThreadCpuMs() {
  timespec now;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

TEST(EngineTest, AWaitingRunSleepsWithoutCpu) {
  RunScript("console.log(1)");
  const double before = ThreadCpuMs();
  Outcome outcome = RunScript("await new Promise(r => setTimeout(r, 2000)); console.log('woke')");
  const double used = ThreadCpuMs() - before;
  EXPECT_EQ(outcome.stdout_bytes, "woke\n");
  EXPECT_LT(used, 50.0) << "ms of CPU during a 2 s timer wait";
}

// The image's qjs is this engine: the same wait in that binary, as a child
// process, uses no CPU either.
TEST(EngineTest, QjsWaitingOnATimerUsesNoCpu) {
  const std::string command = std::string(
                                  "echo \"await new Promise(r => setTimeout(r, 2000)); "
                                  "console.log('woke')\" | ") +
                              PLIMSOLL_QJS_BINARY;
  rusage before{}, after{};
  getrusage(RUSAGE_CHILDREN, &before);
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string out;
  char buffer[256];
  size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0) out.append(buffer, got);
  pclose(pipe);
  getrusage(RUSAGE_CHILDREN, &after);
  auto ms = [](const rusage& u) {
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e3 +
           (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e3;
  };
  EXPECT_EQ(out, "woke\n");
  // The whole process (start-up included) and the shell around it.
  EXPECT_LT(ms(after) - ms(before), 50.0) << "ms of CPU for qjs waiting 2 s";
}

TEST(EngineTest, TheListedGlobalsAreTheOnesOnOffer) {
  // Everything on globalThis beyond ECMAScript's own globals (as QuickJS
  // 2025-04-26 defines them) must be in kJavascriptGlobals, and back.
  Outcome outcome = RunScript(R"JS(
    const ecmascript = new Set(["Object", "Function", "Array", "Number", "parseFloat", "parseInt",
      "Infinity", "NaN", "undefined", "Boolean", "String", "Symbol", "Date", "Promise", "RegExp",
      "Error", "AggregateError", "EvalError", "RangeError", "ReferenceError", "SyntaxError",
      "TypeError", "URIError", "InternalError", "globalThis", "JSON", "Math", "Reflect", "Proxy",
      "Map", "Set", "WeakMap", "WeakSet", "WeakRef", "FinalizationRegistry", "ArrayBuffer",
      "SharedArrayBuffer", "Uint8ClampedArray", "Int8Array", "Uint8Array", "Int16Array",
      "Uint16Array", "Int32Array", "Uint32Array", "BigInt64Array", "BigUint64Array", "Float16Array",
      "Float32Array", "Float64Array", "DataView", "Atomics", "BigInt", "eval", "isNaN", "isFinite",
      "decodeURI", "decodeURIComponent", "encodeURI", "encodeURIComponent", "escape", "unescape",
      "Iterator"]);
    const extra = Object.getOwnPropertyNames(globalThis).filter(n => !ecmascript.has(n));
    console.log(extra.sort().join(" "));
    console.log(extra.filter(n => typeof globalThis[n] === "undefined").join(" ") || "all defined");
  )JS");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.stderr_bytes;
  std::vector<std::string> listed(std::begin(kJavascriptGlobals), std::end(kJavascriptGlobals));
  std::sort(listed.begin(), listed.end());
  std::string expected;
  for (const std::string& name : listed) expected += (expected.empty() ? "" : " ") + name;
  EXPECT_EQ(outcome.stdout_bytes, expected + "\nall defined\n");
}

TEST(EngineTest, WithoutWebApisOnlyTheCoreGlobalsRemain) {
  Limits limits = WithTimeout(5s);
  limits.web_apis = false;
  Outcome outcome = RunScript(
      "console.log(typeof setTimeout, typeof URL, typeof fetch, typeof host, "
      "typeof display)",
      limits);
  EXPECT_EQ(outcome.stdout_bytes, "function undefined undefined object function\n")
      << outcome.stderr_bytes;
}

// A 24-byte PNG head (signature, IHDR of 3 x 2) as a JavaScript array literal.
constexpr const char* kPngHead = "[137,80,78,71,13,10,26,10,0,0,0,13,73,72,68,82,0,0,0,3,0,0,0,2]";

TEST(EngineTest, DisplayShowsTextBytesAndValuesInOrder) {
  Outcome outcome =
      RunScript(std::string("display('<b>hi</b>', 'text/html');\n"
                            "display({a: [1, 2]});\n"
                            "display('plain');\n"
                            "display(new Uint8Array(") +
                kPngHead +
                "), 'image/png');\n"
                "display(new Uint8Array([0, 1, 2, 3]).subarray(2, 4), "
                "'application/octet-stream');\n"
                "display(new Uint8Array([9, 8, 7]).buffer.slice(1), 'x-test/bytes');\n"
                "console.log(display('x') === undefined);");
  ASSERT_EQ(outcome.exit_code, 0) << outcome.stderr_bytes;
  EXPECT_EQ(outcome.stdout_bytes, "true\n");
  ASSERT_EQ(outcome.displays.size(), 7u);
  EXPECT_EQ(outcome.displays[0], (Display{"text/html", "<b>hi</b>"}));
  EXPECT_EQ(outcome.displays[1], (Display{"text/plain", "{ a: [ 1, 2 ] }"}));
  EXPECT_EQ(outcome.displays[2], (Display{"text/plain", "plain"}));
  EXPECT_EQ(outcome.displays[3].mime, "image/png");
  EXPECT_EQ(outcome.displays[3].data.size(), 24u);
  EXPECT_EQ(outcome.displays[3].width, 0) << "the engine does not measure: its caller does";
  // A typed array is its own bytes (not its whole buffer); an ArrayBuffer is all of it.
  EXPECT_EQ(outcome.displays[4], (Display{"application/octet-stream", std::string("\x02\x03", 2)}));
  EXPECT_EQ(outcome.displays[5], (Display{"x-test/bytes", std::string("\x08\x07", 2)}));
  EXPECT_EQ(outcome.displays[6], (Display{"text/plain", "x"}));
  EXPECT_FALSE(outcome.displays_truncated);
}

TEST(EngineTest, DisplayRefusesBytesWithoutATypeAndMalformedTypes) {
  for (const char* call : {"display(new Uint8Array([1]))", "display('x', 'Text/HTML')",
                           "display('x', 'text/html; a=b')", "display('x', 'text')"}) {
    Outcome outcome = RunScript(std::string("try { ") + call +
                                "; console.log('shown') } catch (e) { console.log(e.name) }");
    EXPECT_EQ(outcome.stdout_bytes, "TypeError\n") << call << ": " << outcome.stderr_bytes;
    EXPECT_TRUE(outcome.displays.empty()) << call;
  }
}

TEST(EngineTest, DisplaysAreCappedInCountAndBytes) {
  Outcome many = RunScript("for (let i = 0; i < 20; i++) display(String(i));");
  ASSERT_EQ(many.displays.size(), kMaxDisplays);
  EXPECT_EQ(many.displays.back().data, "15");
  EXPECT_TRUE(many.displays_truncated);

  Outcome big = RunScript(
      "display('first'); display('x'.repeat(4 * 1024 * 1024), 'text/plain'); display('later');");
  ASSERT_EQ(big.displays.size(), 2u) << "the one over the byte cap is dropped, not later ones";
  EXPECT_EQ(big.displays[0].data, "first");
  EXPECT_EQ(big.displays[1].data, "later");
  EXPECT_TRUE(big.displays_truncated);
}

TEST(EngineTest, WebApisLoadOnFirstUseAndCanBeReplaced) {
  Outcome outcome = RunScript(R"JS(
    const before = Object.getOwnPropertyDescriptor(globalThis, "URL");
    console.log(typeof before.get, before.enumerable);
    console.log(new URL("http://x.test/a").pathname);
    const after = Object.getOwnPropertyDescriptor(globalThis, "URL");
    console.log(typeof after.value, after.writable, after.enumerable, after.configurable);
    globalThis.atob = "mine";
    console.log(atob);
  )JS");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.stderr_bytes;
  EXPECT_EQ(outcome.stdout_bytes, "function false\n/a\nfunction true false true\nmine\n");
}

TEST(EngineTest, BigIntAndModernSyntax) {
  Outcome outcome = RunScript(R"JS(
    console.log((2n ** 64n).toString(), typeof 1n);
    class P { #x = 1; static s = 2; get x() { return this.#x; } }
    const o = { a: { b: null } };
    let u; u ??= "set";
    console.log(new P().x, P.s, o?.a?.b?.c, o.a.b ?? "dflt", u, [1, 2, 3].at(-1),
                Object.hasOwn(o, "a"), "a-b-c".replaceAll("-", "+"), 1_000);
    const { a, ...rest } = { a: 1, b: 2, c: 3 }; console.log(rest);
    label: for (const [i, v] of [[0, "x"]].entries()) console.log(i, v);
  )JS");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.stderr_bytes;
  EXPECT_EQ(outcome.stdout_bytes,
            "18446744073709551616 bigint\n"
            "1 2 undefined dflt set 3 true a+b+c 1000\n"
            "{ b: 2, c: 3 }\n"
            "0 [ 0, 'x' ]\n");
}

TEST(EngineTest, ToFixedRoundsHalfAwayFromZero) {
  Outcome outcome = RunScript(
      "console.log((2.5).toFixed(0), (0.5).toFixed(0), (1.5).toFixed(0),"
      " (-2.5).toFixed(0), (1.005).toFixed(2), (1.45).toFixed(1), 0.1 + 0.2,"
      " (123.456).toPrecision(4), (1e21).toString(), 5e-324)");
  EXPECT_EQ(outcome.stdout_bytes, "3 1 2 -3 1.00 1.4 0.30000000000000004 123.5 1e+21 5e-324\n");
}

TEST(EngineTest, UncaughtExceptionExitsOneWithStack) {
  Outcome outcome = RunScript("function thrower() { throw new Error('boom'); }\nthrower();");
  EXPECT_EQ(outcome.exit_code, kExitUncaught);
  EXPECT_THAT(outcome.stderr_bytes, StartsWith("Uncaught Error: boom\n"));
  EXPECT_THAT(outcome.stderr_bytes, HasSubstr("at thrower (<input>:1"));
  EXPECT_FALSE(outcome.timed_out);
}

TEST(EngineTest, SyntaxErrorExitsOne) {
  Outcome outcome = RunScript("let = = 1;");
  EXPECT_EQ(outcome.exit_code, kExitUncaught);
  EXPECT_THAT(outcome.stderr_bytes, StartsWith("Uncaught SyntaxError"));
}

TEST(EngineTest, UnhandledRejectionExitsOne) {
  Outcome outcome = RunScript("console.log('before'); Promise.reject(new TypeError('nope'));");
  EXPECT_EQ(outcome.exit_code, kExitUncaught);
  EXPECT_EQ(outcome.stdout_bytes, "before\n");
  EXPECT_THAT(outcome.stderr_bytes, StartsWith("Uncaught (in promise) TypeError: nope"));

  Outcome handled = RunScript(
      "const p = Promise.reject(new Error('x')); p.catch(e => console.log('caught', e.message));");
  EXPECT_EQ(handled.exit_code, 0) << handled.stderr_bytes;
  EXPECT_EQ(handled.stdout_bytes, "caught x\n");
}

TEST(EngineTest, InfiniteLoopTimesOut) {
  const auto start = std::chrono::steady_clock::now();
  Outcome outcome = RunScript("console.log('spin'); for (;;) {}", WithTimeout(200ms));
  EXPECT_EQ(outcome.exit_code, kExitTimeout);
  EXPECT_TRUE(outcome.timed_out);
  EXPECT_EQ(outcome.stdout_bytes, "spin\n");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(EngineTest, ADeadlineThatPassesDuringSetupIsATimeoutToo) {
  // Tiny budgets end at every stage of a run (instance setup, the globals,
  // parsing, running): each must read as a timeout, never as an error.
  for (int i = 0; i < 200; ++i) {
    Limits limits;
    limits.deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(i * 20);
    Outcome outcome =
        RunScript("let s = 0; for (let k = 0; k < 10; k++) s += k; for (;;) {}", limits);
    ASSERT_EQ(outcome.exit_code, kExitTimeout)
        << "budget " << i * 20 << " us: " << outcome.stderr_bytes;
    ASSERT_TRUE(outcome.timed_out);
  }
}

TEST(EngineTest, CatastrophicRegexStopsAtTheDeadline) {
  const auto start = std::chrono::steady_clock::now();
  Outcome outcome =
      RunScript("/(a+)+$/.test('a'.repeat(40) + '!'); console.log('never');", WithTimeout(200ms));
  EXPECT_EQ(outcome.exit_code, kExitTimeout);
  EXPECT_TRUE(outcome.timed_out);
  EXPECT_EQ(outcome.stdout_bytes, "");
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

TEST(EngineTest, HardDeadlineStopsNativeWorkThatNeverPolls) {
  // One native QuickJS call that never polls the interrupt handler and never
  // ends on any CPU: indexOf over an array-like of length 2^53 - 1 walks every
  // index in C (a plain object: no getter, so no JavaScript runs and nothing
  // polls), and allocates nothing. Only the hard deadline (soft +
  // hard_grace) can stop it, however fast or loaded the machine is. (It used
  // to convert a ~950 000-bit BigInt, which took ~2 s here: a CPU twice as
  // fast finished it before the hard deadline, printing "never".)
  Limits limits = WithTimeout(300ms);
  limits.hard_grace = 200ms;
  const auto start = std::chrono::steady_clock::now();
  Outcome outcome = RunScript(
      "console.log('start'); Array.prototype.indexOf.call({ length: 2 ** 53 - 1 }, 1);"
      " console.log('never');",
      limits);
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(outcome.exit_code, kExitTimeout);
  EXPECT_TRUE(outcome.timed_out);
  EXPECT_EQ(outcome.stdout_bytes, "start\n");
  EXPECT_GE(elapsed, 500ms);  // not the soft deadline: nothing polled
  EXPECT_LT(elapsed, 3s);
  // The thread is usable afterwards.
  EXPECT_EQ(RunScript("console.log(1)").stdout_bytes, "1\n");
}

TEST(EngineTest, MemoryBombIsOutOfMemory) {
  Limits limits = WithTimeout(5s);
  limits.memory_bytes = 16 << 20;
  Outcome outcome = RunScript("const a = []; for (;;) a.push(new Array(10000).fill(1.5));", limits);
  EXPECT_EQ(outcome.exit_code, kExitOutOfMemory);
  EXPECT_TRUE(outcome.out_of_memory);
  EXPECT_FALSE(outcome.timed_out);
  EXPECT_THAT(outcome.stderr_bytes, HasSubstr("out of memory"));

  Outcome strings =
      RunScript("const a = []; for (let i = 0;; i++) a.push('x'.repeat(100000) + i);", limits);
  EXPECT_EQ(strings.exit_code, kExitOutOfMemory) << strings.stderr_bytes;
}

TEST(EngineTest, CaughtOutOfMemoryIsTheScriptsBusiness) {
  Limits limits = WithTimeout(5s);
  limits.memory_bytes = 16 << 20;
  Outcome outcome =
      RunScript("try { new ArrayBuffer(64 << 20); } catch (e) { console.log(e.name); }", limits);
  EXPECT_EQ(outcome.exit_code, 0);
  EXPECT_EQ(outcome.stdout_bytes, "InternalError\n");  // QuickJS: "out of memory"
}

TEST(EngineTest, EachStreamIsCappedAndFlagged) {
  Limits limits = WithTimeout(5s);
  limits.output_cap_bytes = 100;
  Outcome out = RunScript(
      "for (let i = 0; i < 100; i++) console.log('0123456789'); console.error('e');", limits);
  EXPECT_EQ(out.exit_code, 0);
  EXPECT_EQ(out.stdout_bytes.size(), 100u);
  EXPECT_TRUE(out.stdout_truncated);
  EXPECT_EQ(out.stderr_bytes, "e\n");
  EXPECT_FALSE(out.stderr_truncated);

  Outcome err = RunScript("console.log('o'); console.error('x'.repeat(1000));", limits);
  EXPECT_EQ(err.stdout_bytes, "o\n");
  EXPECT_FALSE(err.stdout_truncated);
  EXPECT_EQ(err.stderr_bytes, std::string(100, 'x'));
  EXPECT_TRUE(err.stderr_truncated);
}

TEST(EngineTest, DeepRecursionIsARangeErrorNotACrash) {
  Outcome caught = RunScript(
      "function f(n) { return f(n + 1) + 1; }"
      "try { f(0); } catch (e) { console.log(e instanceof RangeError, e.message); }");
  EXPECT_EQ(caught.exit_code, 0) << caught.stderr_bytes;
  EXPECT_EQ(caught.stdout_bytes, "true Maximum call stack size exceeded\n");

  Outcome uncaught = RunScript("const g = () => [g()]; g();");
  EXPECT_EQ(uncaught.exit_code, kExitUncaught);
  EXPECT_THAT(uncaught.stderr_bytes, HasSubstr("RangeError: Maximum call stack size exceeded"));

  Outcome nested = RunScript("JSON.parse('['.repeat(1000000))");
  EXPECT_EQ(nested.exit_code, kExitUncaught);
}

// The guest's native stack use is bounded by wasm2c's call-depth limit; a
// caller thread with a modest stack must survive the deepest recursion.
TEST(EngineTest, DeepRecursionFitsInASmallThreadStack) {
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, 4 << 20);
  struct Result {
    int exit_code = -1;
  } result;
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attributes,
                +[](void* p) -> void* {
                  auto outcome =
                      EvaluateJavascript("function f(n) { return f(n + 1) + 1; } f(0);", Limits{});
                  static_cast<Result*>(p)->exit_code = outcome.ok() ? outcome->exit_code : -2;
                  return nullptr;
                },
                &result),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attributes);
  EXPECT_EQ(result.exit_code, kExitUncaught);
}

TEST(EngineTest, NoAmbientAuthority) {
  Outcome outcome = RunScript(R"JS(
    console.log(typeof require, typeof process, typeof fetch, typeof std, typeof os,
                typeof scriptArgs, typeof XMLHttpRequest, typeof Deno);
    import("std").then(() => console.log("imported"), e => console.log("import refused"));
  )JS");
  EXPECT_EQ(outcome.exit_code, 0) << outcome.stderr_bytes;
  EXPECT_EQ(outcome.stdout_bytes,
            "undefined undefined function undefined undefined undefined "
            "undefined undefined\nimport refused\n");
}

TEST(EngineTest, HostCallIsRefusedWithoutAGrant) {
  Outcome outcome = RunScript(R"JS(
    try { host.get("/v1/things"); } catch (e) {
      console.log(e instanceof Error, e.code, e.message.includes("no grant"));
    }
    host.post("/x", { a: 1 });
  )JS");
  EXPECT_EQ(outcome.exit_code, kExitUncaught);
  EXPECT_EQ(outcome.stdout_bytes, "true no_grant true\n");
  EXPECT_THAT(outcome.stderr_bytes, HasSubstr("no grant"));
}

TEST(EngineTest, HostCallReachesTheHandler) {
  Limits limits = WithTimeout(5s);
  std::string seen;
  limits.host_call = [&seen](std::string_view request) {
    seen = std::string(request);
    return HostAnswer{.ok = true, .body = R"({"status":200,"body":"pong"})"};
  };
  Outcome outcome =
      RunScript("const r = host.get('/ping'); console.log(r.status, r.body);", limits);
  EXPECT_EQ(outcome.exit_code, 0) << outcome.stderr_bytes;
  EXPECT_EQ(outcome.stdout_bytes, "200 pong\n");
  EXPECT_EQ(seen, R"({"method":"GET","path":"/ping"})");
}

TEST(EngineTest, NothingSurvivesIntoTheNextRun) {
  RunScript("globalThis.leak = 42; Object.prototype.polluted = true; Math.random = () => 4;");
  Outcome outcome = RunScript("console.log(typeof leak, ({}).polluted, Math.random() === 4)");
  EXPECT_EQ(outcome.stdout_bytes, "undefined undefined false\n");
}

TEST(EngineTest, NoIntrinsicAnEarlierRunChangedIsChangedForTheNext) {
  RunScript(
      "Array.prototype.map = null; JSON.stringify = () => 'forged'; delete globalThis.console;"
      "Object.freeze(Object.prototype); String.prototype.trim = undefined;"
      "const hog = []; for (let i = 0; i < 1000; i++) hog.push('secret-' + i);");
  Outcome outcome = RunScript(
      "console.log(typeof [].map, JSON.stringify({a: 1}), Object.isFrozen(Object.prototype),"
      " ' x '.trim(), typeof hog)");
  EXPECT_EQ(outcome.stdout_bytes, "function {\"a\":1} false x undefined\n");
}

// Runs start from the process's snapshot (snapshot.h) unless told not to:
// what a script sees and what it ends with must not depend on that.
TEST(EngineTest, RunsFromTheSnapshotMatchFreshInstances) {
  struct Case {
    const char* code;
    size_t memory_bytes;
    std::chrono::milliseconds timeout;
    bool compare_output;
  };
  const Case cases[] = {
      {"console.log(6*7)", size_t{256} << 20, 5s, true},
      {"console.log(typeof URL, new URL('https://a.example/x?y=1').host,"
       " new TextEncoder().encode('h\u00e9').length, structuredClone({a: [1]}).a[0])",
       size_t{256} << 20, 5s, true},
      {"throw new TypeError('boom')", size_t{256} << 20, 5s, true},
      {"let x = ;", size_t{256} << 20, 5s, true},
      {"Promise.reject(new Error('late'))", size_t{256} << 20, 5s, true},
      {"setTimeout(() => console.log('b'), 2); queueMicrotask(() => console.log('a'))",
       size_t{256} << 20, 5s, true},
      {"display('<b>x</b>', 'text/html'); console.error('e')", size_t{256} << 20, 5s, true},
      {"console.log(Object.getOwnPropertyNames(globalThis).length)", size_t{256} << 20, 5s, true},
      {"const a = []; for (;;) a.push(new Array(1 << 16).fill(1));", kMinimumMemoryBytes, 5s,
       false},
      {"for (;;) {}", size_t{256} << 20, 30ms, false},
  };
  for (const Case& c : cases) {
    Outcome outcomes[2];
    for (int from_snapshot = 0; from_snapshot < 2; from_snapshot++) {
      Limits limits = WithTimeout(c.timeout);
      limits.memory_bytes = c.memory_bytes;
      limits.from_snapshot = from_snapshot == 1;
      outcomes[from_snapshot] = RunScript(c.code, limits);
    }
    SCOPED_TRACE(c.code);
    EXPECT_EQ(outcomes[0].exit_code, outcomes[1].exit_code);
    EXPECT_EQ(outcomes[0].timed_out, outcomes[1].timed_out);
    EXPECT_EQ(outcomes[0].out_of_memory, outcomes[1].out_of_memory);
    if (c.compare_output) {
      EXPECT_EQ(outcomes[0].stdout_bytes, outcomes[1].stdout_bytes);
      EXPECT_EQ(outcomes[0].stderr_bytes, outcomes[1].stderr_bytes);
      ASSERT_EQ(outcomes[0].displays.size(), outcomes[1].displays.size());
    }
  }
}

// qjs reading stdin prepares its instance before the script arrives
// (PreparedInstance): the same outcomes as a run from scratch.
TEST(EngineTest, APreparedInstanceRunsAsAFreshOne) {
  const char* scripts[] = {"console.log(6*7)", "throw new Error('x')",
                           "setTimeout(() => console.log(performance.now() < 1000), 1)",
                           "console.log(typeof URL, Math.random() < 1)"};
  for (const char* code : scripts) {
    Limits limits = WithTimeout(5s);
    limits.from_snapshot = false;
    const Outcome fresh = RunScript(code, limits);
    Limits ahead;
    auto prepared = PreparedInstance::Prepare(ahead);
    ASSERT_TRUE(prepared.ok()) << prepared.error().ToString();
    std::this_thread::sleep_for(20ms);  // the wait for the script
    ahead.deadline = std::chrono::steady_clock::now() + 5s;
    auto outcome = (*prepared)->Run(code, ahead);
    ASSERT_TRUE(outcome.ok()) << outcome.error().ToString();
    SCOPED_TRACE(code);
    EXPECT_EQ(outcome->exit_code, fresh.exit_code);
    EXPECT_EQ(outcome->stdout_bytes, fresh.stdout_bytes);
    EXPECT_EQ(outcome->stderr_bytes, fresh.stderr_bytes);
    EXPECT_FALSE((*prepared)->Run(code, ahead).ok());  // one run per instance
  }
}

TEST(EngineTest, APreparedInstanceKeepsItsLimitsAndIsFreedUnused) {
  Limits small;
  small.memory_bytes = kMinimumMemoryBytes;
  {
    auto unused = PreparedInstance::Prepare(small);  // freed by its destructor
    ASSERT_TRUE(unused.ok());
  }
  auto prepared = PreparedInstance::Prepare(small);
  ASSERT_TRUE(prepared.ok());
  Limits other;  // 256 MiB: not what it was prepared for
  EXPECT_FALSE((*prepared)->Run("1", other).ok());
  small.deadline = std::chrono::steady_clock::now() + 5s;
  auto outcome =
      (*prepared)->Run("const a = []; for (;;) a.push(new Array(1 << 16).fill(1));", small);
  ASSERT_TRUE(outcome.ok());
  EXPECT_EQ(outcome->exit_code, kExitOutOfMemory);
  Limits bad;
  bad.memory_bytes = 1024;
  EXPECT_FALSE(PreparedInstance::Prepare(bad).ok());
}

TEST(EngineTest, TheSnapshotIsSealedAndKnowsThePagesARunWrites) {
  auto snapshot = SnapshotFor(0);
  ASSERT_TRUE(snapshot.ok()) << snapshot.error().ToString();
  const wasm::MemoryImage& image = (*snapshot)->memory;
  EXPECT_GT(image.pages(), 0u);
  // The calibration runs found the allocator's and the stack's pages (about
  // fifteen), and no more than a fraction of the image.
  EXPECT_GE(image.hot_page_count(), 4u);
  EXPECT_LE(image.hot_page_count(), size_t{image.pages()} * 16 / 4);
  EXPECT_EQ(fcntl(image.fd(), F_GET_SEALS),
            F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
}

TEST(EngineTest, EachRunSeedsMathRandomAfresh) {
  const char* code =
      "const d = Object.getOwnPropertyDescriptor(Math, 'random');"
      "const r = [Math.random(), Math.random()];"
      "console.log(d.writable, d.enumerable, d.configurable, Math.random.name,"
      " Math.random.length, r.every(x => x >= 0 && x < 1), r[0] !== r[1], r[0])";
  const Outcome first = RunScript(code);
  const Outcome second = RunScript(code);
  EXPECT_THAT(first.stdout_bytes, StartsWith("true false true random 0 true true "));
  EXPECT_THAT(second.stdout_bytes, StartsWith("true false true random 0 true true "));
  EXPECT_NE(first.stdout_bytes, second.stdout_bytes);  // 2^-53 chance of a false alarm
  // Spread over [0, 1): the mean of many draws is near 1/2.
  const Outcome mean = RunScript(
      "let s = 0; for (let i = 0; i < 100000; i++) s += Math.random();"
      "console.log(Math.abs(s / 100000 - 0.5) < 0.01)");
  EXPECT_EQ(mean.stdout_bytes, "true\n");
}

TEST(EngineTest, EachRunHasItsOwnTimeOrigin) {
  RunScript("performance.now()");  // the snapshot exists from here on
  std::this_thread::sleep_for(300ms);
  const Outcome outcome = RunScript(
      "console.log(performance.now() < 250, Math.abs(performance.timeOrigin - Date.now()) < 250)");
  EXPECT_EQ(outcome.stdout_bytes, "true true\n");
}

TEST(EngineTest, ManyThreadsRunConcurrentlyWithoutMixing) {
  constexpr int kThreads = 8;
  constexpr int kRuns = 100;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([t, &wrong] {
      for (int r = 0; r < kRuns; r++) {
        std::string id = std::to_string(t) + "-" + std::to_string(r);
        std::string code =
            "let s = 0; for (let i = 0; i < 2000; i++) s += i;"
            "console.log('" +
            id + "', s); console.error('" + id + "');";
        auto outcome = EvaluateJavascript(code, WithTimeout(30s));
        if (!outcome.ok() || outcome->exit_code != 0 ||
            outcome->stdout_bytes != id + " 1999000\n" || outcome->stderr_bytes != id + "\n") {
          wrong++;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(EngineTest, InvalidLimitsAreRefusedBeforeRunning) {
  Limits limits;
  limits.memory_bytes = 1024;
  auto outcome = EvaluateJavascript("console.log(1)", limits);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.error().not_dispatched(), NotDispatched::kRequest);
}

TEST(EngineTest, IdentityNamesTheBuild) {
  EngineIdentity identity = Identity();
  EXPECT_THAT(identity.engine, HasSubstr("QuickJS 2025-04-26"));
  EXPECT_EQ(identity.wasm_sha256.size(), 64u);
  EXPECT_EQ(identity.wasm2c_sha256.size(), 64u);
  EXPECT_NE(identity.wasm_sha256, identity.wasm2c_sha256);
  EXPECT_EQ(identity.wall, "bounds-checked linear memory (guard pages)");
}

TEST(EngineTest, QjsBinaryGivesTheSameBytes) {
  const std::string script = R"JS(
    const xs = [Math.sin(1e10), Math.cos(0.5), Math.exp(3.3), Math.log(7), Math.pow(2, 0.5),
                Math.atan2(1, 3), Math.tanh(0.7), Math.cbrt(9), 0.1 * 3, 1 / 3];
    console.log(xs.map(x => x.toString()).join(" "));
    console.log((123.456).toFixed(10), (2.5).toFixed(0), 1e300 * 1e10, (255).toString(36));
    console.error("to stderr");
    process.exit(3);
  )JS";
  Outcome embedded = RunScript(script);
  char path[] = "/tmp/plimsoll-engine-test-XXXXXX";
  int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, script.data(), script.size()), static_cast<ssize_t>(script.size()));
  close(fd);
  std::string command = std::string(PLIMSOLL_QJS_BINARY) + " " + path + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string binary_stdout;
  char buffer[4096];
  size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0) binary_stdout.append(buffer, got);
  int status = pclose(pipe);
  unlink(path);
  EXPECT_EQ(binary_stdout, embedded.stdout_bytes);
  EXPECT_EQ(WEXITSTATUS(status), embedded.exit_code);
  EXPECT_EQ(embedded.exit_code, kExitUncaught);  // `process` does not exist
  EXPECT_THAT(embedded.stdout_bytes, HasSubstr(" 3 Infinity 73\n"));
}

}  // namespace
}  // namespace plimsoll::engine
