// engine_bench: samples for the embedded engine, one JSON object per line:
//   {"scenario": NAME, "unit": "ms", "samples": [...]}
//   {"scenario": NAME, "error": "..."}
// (bench/run.py turns them into p50/p95/p99, ratios and targets.)
//
// Scenarios (--scenario NAME, repeatable; default: all of them, in this order):
//   engine.instance_console_log   fresh instance + console.log(6*7) + teardown
//                                 (started from the process's snapshot)
//   engine.fresh_instance_console_log  the same, instantiated and initialised
//                                 from scratch (Limits::from_snapshot = false)
//   engine.native_console_log     the same on native QuickJS (same driver)
//   engine.primes_200000_wasm     CPU-bound: count primes below 200000
//   engine.primes_200000_native   the same on native QuickJS
//   engine.console_log_no_web_apis  fresh instance + console.log(6*7) without the
//   engine.console_log_web_apis     web APIs, then with them (the default), the
//                                 two alternating run by run in one process;
//                                 naming either prints both lines
//   engine.callbacks_100_microtasks 100 callbacks as queueMicrotask jobs, then
//   engine.callbacks_100_timers     as 100 setTimeout(0) timers (real time: they
//                                 are due 1 ms after creation), alternating;
//                                 naming either prints both lines
//   sessions.embedded_run         a one-shot run through plimsoll::Sandbox
//   sessions.embedded_cell        (x += 1 and print: validation, a fresh
//                                 instance, the record), then the same as a
//                                 cell of an open session (warm interpreter,
//                                 chained record), alternating; naming either
//                                 prints both lines
//   engine.rss_after_100          memory (unit kB): VmRSS after 100 instances,
//   engine.rss_after_N            then after N (--instances, default 10000),
//   engine.vmsize_after_100       and VmSize at the same two points. One
//   engine.vmsize_after_N         sample each (n = 1). Naming any of these
//                                 runs the memory phase once, in this process,
//                                 and prints all four lines.
//
// Run counts: --runs N / --warmup N, else $PLIMSOLL_BENCH_RUNS /
// $PLIMSOLL_BENCH_WARMUP (set by bench/run.py), else the defaults: 2000 timed
// runs after 20 warm-ups for the instance scenarios, 10 after 1 for primes
// (--quick: 200/5 and 3/1). Warm-ups are untimed and not reported.
//
//   engine_bench [--scenario NAME]... [--runs N] [--warmup N] [--quick]
//                [--instances N]
//
// Exit status: 0, 1 if a run failed (an "error" line is printed), 2 for
// usage errors (unknown scenario: also an "error" line).
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "native_imports.h"
#include "plimsoll/sandbox.h"
#include "plimsoll/session.h"

namespace {

constexpr std::string_view kPrimes = R"JS(
let count = 0;
for (let n = 2; n < 200000; n++) {
  let prime = true;
  for (let d = 2; d * d <= n; d++) {
    if (n % d === 0) { prime = false; break; }
  }
  if (prime) count++;
}
console.log(count);
)JS";

void Print(std::string_view scenario, std::string_view unit, const std::vector<double>& samples) {
  std::printf("{\"scenario\": \"%.*s\", \"unit\": \"%.*s\", \"samples\": [",
              static_cast<int>(scenario.size()), scenario.data(), static_cast<int>(unit.size()),
              unit.data());
  for (size_t i = 0; i < samples.size(); i++) {
    std::printf("%s%.4f", i ? ", " : "", samples[i]);
  }
  std::printf("]}\n");
  std::fflush(stdout);
}

// The scenario being measured, for the error line if a run fails.
std::string g_current = "engine_bench";

std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void PrintError(std::string_view scenario, std::string_view message) {
  std::printf("{\"scenario\": %s, \"error\": %s}\n", JsonString(scenario).c_str(),
              JsonString(message).c_str());
  std::fflush(stdout);
}

[[noreturn]] void Fail(std::string_view message) {
  PrintError(g_current, std::string("run failed: ") + std::string(message));
  std::fprintf(stderr, "engine_bench: %s: run failed: %.*s\n", g_current.c_str(),
               static_cast<int>(message.size()), message.data());
  std::exit(1);
}

template <typename F>
std::vector<double> Sample(int warmup, int count, F&& body) {
  for (int i = 0; i < warmup; i++) body();
  std::vector<double> samples;
  samples.reserve(count);
  for (int i = 0; i < count; i++) {
    auto start = std::chrono::steady_clock::now();
    body();
    samples.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  return samples;
}

void Expect(std::string_view got, std::string_view want) {
  if (got != want) {
    Fail("stdout was " + JsonString(got) + ", expected " + JsonString(want));
  }
}

plimsoll::engine::Outcome Embedded(std::string_view code, bool web_apis = true,
                                   bool from_snapshot = true) {
  plimsoll::engine::Limits limits;
  limits.web_apis = web_apis;
  limits.from_snapshot = from_snapshot;
  limits.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto outcome = plimsoll::engine::EvaluateJavascript(code, limits);
  if (!outcome.ok() || outcome->exit_code != 0) {
    Fail(outcome.ok() ? outcome->stderr_bytes : outcome.error().ToString());
  }
  return *outcome;
}

long StatusKilobytes(const char* field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  size_t length = std::char_traits<char>::length(field);
  while (std::getline(status, line)) {
    if (line.compare(0, length, field) == 0 && line.size() > length && line[length] == ':') {
      return std::atol(line.c_str() + length + 1);
    }
  }
  return -1;
}

constexpr std::string_view kPrimesOut = "17984\n";  // pi(200000)

struct Counts {
  int runs;
  int warmup;
};

constexpr std::string_view kMicrotasks100 =
    "let n = 0; for (let i = 0; i < 100; i++) queueMicrotask(() => { if (++n === 100) "
    "console.log(n); });";
constexpr std::string_view kTimers100 =
    "let n = 0; for (let i = 0; i < 100; i++) setTimeout(() => { if (++n === 100) "
    "console.log(n); }, 0);";

// Two scenarios measured alternately (a, b, a, b, ...) so that both see the
// same machine load; prints both lines.
template <typename A, typename B>
void SamplePair(const Counts& counts, std::string_view name_a, A&& a, std::string_view name_b,
                B&& b) {
  for (int i = 0; i < counts.warmup; i++) {
    a();
    b();
  }
  std::vector<double> samples_a, samples_b;
  auto time = [](auto& body) {
    auto start = std::chrono::steady_clock::now();
    body();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  for (int i = 0; i < counts.runs; i++) {
    samples_a.push_back(time(a));
    samples_b.push_back(time(b));
  }
  Print(name_a, "ms", samples_a);
  Print(name_b, "ms", samples_b);
}

// -1 when unset; exits with status 2 on a malformed value.
int CountArgument(const char* name, const char* text) {
  if (text == nullptr || *text == '\0') return -1;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > 100000000) {
    std::fprintf(stderr, "engine_bench: %s must be a count, got '%s'\n", name, text);
    std::exit(2);
  }
  return static_cast<int>(value);
}

// sessions.embedded_run and sessions.embedded_cell (see the file comment).
void RunSessionPair(const Counts& counts) {
  g_current = "sessions.embedded_cell";
  auto sandbox = plimsoll::Sandbox::Open("embedded");
  if (!sandbox.ok()) Fail(sandbox.error().ToString());
  auto session = sandbox->OpenSession(plimsoll::SessionOptions{});
  if (!session.ok()) Fail(session.error().ToString());
  plimsoll::Request run;
  run.javascript = plimsoll::JavascriptPayload{"let x = 0; x += 1; console.log(x)"};
  plimsoll::Request cell;
  cell.cell = plimsoll::CellPayload{"javascript", "var x = 0"};
  auto check = [](const plimsoll::Expected<plimsoll::Result>& result, bool prints = true) {
    if (!result.ok()) Fail(result.error().ToString());
    if (result->exit_code != 0 || (prints && result->stdout_bytes.empty())) {
      Fail("exit " + std::to_string(result->exit_code) + ", stdout \"" + result->stdout_bytes +
           "\", stderr \"" + result->stderr_bytes + "\"");
    }
  };
  check((*session)->Run(cell), /*prints=*/false);  // the interpreter is warm from here on
  cell.cell->code = "x += 1; console.log(x)";
  SamplePair(
      counts, "sessions.embedded_run", [&] { check(sandbox->Run(run)); },
      "sessions.embedded_cell", [&] { check((*session)->Run(cell)); });
}

void RunMemory(int instances) {
  g_current = "engine.rss_after_100";
  std::vector<double> vm, rss;
  for (int i = 1; i <= instances; i++) {
    Expect(Embedded("const o = { a: [1, 2, 3] }; console.log(JSON.stringify(o))").stdout_bytes,
           "{\"a\":[1,2,3]}\n");
    if (i == 100 || i == instances) {
      vm.push_back(static_cast<double>(StatusKilobytes("VmSize")));
      rss.push_back(static_cast<double>(StatusKilobytes("VmRSS")));
    }
  }
  const std::string last = std::to_string(instances);
  Print("engine.rss_after_100", "kB", {rss.front()});
  Print("engine.rss_after_" + last, "kB", {rss.back()});
  Print("engine.vmsize_after_100", "kB", {vm.front()});
  Print("engine.vmsize_after_" + last, "kB", {vm.back()});
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int instances = 10000;
  int runs = CountArgument("PLIMSOLL_BENCH_RUNS", std::getenv("PLIMSOLL_BENCH_RUNS"));
  int warmup = CountArgument("PLIMSOLL_BENCH_WARMUP", std::getenv("PLIMSOLL_BENCH_WARMUP"));
  std::vector<std::string> wanted;
  for (int i = 1; i < argc; i++) {
    std::string_view argument = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (argument == "--quick") {
      quick = true;
    } else if (argument == "--instances" && value) {
      instances = CountArgument("--instances", value);
      i++;
    } else if (argument == "--runs" && value) {
      runs = CountArgument("--runs", value);
      i++;
    } else if (argument == "--warmup" && value) {
      warmup = CountArgument("--warmup", value);
      i++;
    } else if (argument == "--scenario" && value) {
      wanted.emplace_back(value);
      i++;
    } else {
      std::fprintf(stderr,
                   "usage: engine_bench [--scenario NAME]... [--runs N] [--warmup N] [--quick] "
                   "[--instances N]\n");
      return 2;
    }
  }
  if (instances < 100) {
    std::fprintf(stderr, "engine_bench: --instances must be at least 100\n");
    return 2;
  }
  if (runs == 0) {
    std::fprintf(stderr, "engine_bench: the run count must be at least 1\n");
    return 2;
  }
  const std::string last = std::to_string(instances);
  const std::vector<std::string> memory = {"engine.rss_after_100", "engine.rss_after_" + last,
                                           "engine.vmsize_after_100",
                                           "engine.vmsize_after_" + last};
  const std::vector<std::string> all = {"engine.instance_console_log",
                                        "engine.fresh_instance_console_log",
                                        "engine.native_console_log",
                                        "engine.primes_200000_wasm",
                                        "engine.primes_200000_native",
                                        "engine.console_log_no_web_apis",
                                        "engine.console_log_web_apis",
                                        "engine.callbacks_100_microtasks",
                                        "engine.callbacks_100_timers",
                                        "sessions.embedded_run",
                                        "sessions.embedded_cell",
                                        memory.front()};
  if (wanted.empty()) wanted = all;
  for (const auto& name : wanted) {
    bool known = false;
    for (const auto& candidate : all) known = known || name == candidate;
    for (const auto& candidate : memory) known = known || name == candidate;
    if (!known) {
      PrintError(name, "engine_bench has no scenario of that name");
      return 2;
    }
  }

  const Counts instance{runs >= 0 ? runs : (quick ? 200 : 2000),
                        warmup >= 0 ? warmup : (quick ? 5 : 20)};
  const Counts cpu{runs >= 0 ? runs : (quick ? 3 : 10), warmup >= 0 ? warmup : 1};
  bool memory_done = false, web_done = false, timers_done = false, sessions_done = false;
  for (const auto& name : wanted) {
    g_current = name;
    if (name == "engine.instance_console_log") {
      Expect(Embedded("console.log(6*7)").stdout_bytes, "42\n");  // one-time initialisation
      Print(name, "ms",
            Sample(instance.warmup, instance.runs, [] { Embedded("console.log(6*7)"); }));
    } else if (name == "engine.fresh_instance_console_log") {
      auto fresh = [] { return Embedded("console.log(6*7)", true, false); };
      Expect(fresh().stdout_bytes, "42\n");
      Print(name, "ms", Sample(instance.warmup, instance.runs, [&fresh] { fresh(); }));
    } else if (name == "engine.native_console_log") {
      Expect(plimsoll::bench::RunNative("console.log(6*7)").stdout_bytes, "42\n");
      Print(name, "ms", Sample(instance.warmup, instance.runs, [] {
              plimsoll::bench::RunNative("console.log(6*7)");
            }));
    } else if (name == "engine.primes_200000_wasm") {
      Expect(Embedded(kPrimes).stdout_bytes, kPrimesOut);
      Print(name, "ms", Sample(cpu.warmup, cpu.runs, [] { Embedded(kPrimes); }));
    } else if (name == "engine.primes_200000_native") {
      auto run = plimsoll::bench::RunNative(kPrimes);
      if (run.exit_code != 0) Fail(run.stderr_bytes);
      Expect(run.stdout_bytes, kPrimesOut);
      Print(name, "ms", Sample(cpu.warmup, cpu.runs, [] { plimsoll::bench::RunNative(kPrimes); }));
    } else if (name == "engine.console_log_no_web_apis" || name == "engine.console_log_web_apis") {
      if (web_done) continue;
      web_done = true;
      g_current = "engine.console_log_no_web_apis";
      Expect(Embedded("console.log(6*7)", false).stdout_bytes, "42\n");
      Expect(Embedded("console.log(typeof URL)").stdout_bytes, "function\n");
      SamplePair(
          instance, "engine.console_log_no_web_apis", [] { Embedded("console.log(6*7)", false); },
          "engine.console_log_web_apis", [] { Embedded("console.log(6*7)"); });
    } else if (name == "engine.callbacks_100_microtasks" || name == "engine.callbacks_100_timers") {
      if (timers_done) continue;
      timers_done = true;
      g_current = "engine.callbacks_100_timers";
      Expect(Embedded(kMicrotasks100).stdout_bytes, "100\n");
      Expect(Embedded(kTimers100).stdout_bytes, "100\n");
      const Counts timers{runs >= 0 ? runs : (quick ? 20 : 200), warmup >= 0 ? warmup : 5};
      SamplePair(
          timers, "engine.callbacks_100_microtasks", [] { Embedded(kMicrotasks100); },
          "engine.callbacks_100_timers", [] { Embedded(kTimers100); });
    } else if (name == "sessions.embedded_run" || name == "sessions.embedded_cell") {
      if (sessions_done) continue;
      sessions_done = true;
      RunSessionPair(instance);
    } else if (!memory_done) {  // one of the memory names
      memory_done = true;
      RunMemory(instances);
    }
  }
  return 0;
}
