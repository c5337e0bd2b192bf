// engine_bench: samples for the embedded engine, one JSON object per line:
//   {"scenario": NAME, "unit": "ms", "samples": [...]}
// (bench/run.py turns them into p50/p95/p99 and ratios.)
//
// Scenarios:
//   engine.instance_console_log      fresh instance + console.log(6*7) + teardown
//   engine.native_console_log        the same on native QuickJS (same driver)
//   engine.primes_200000_wasm        CPU-bound: count primes below 200000
//   engine.primes_200000_native      the same on native QuickJS
//   engine.memory_after_instances    VmSize and VmRSS (unit kB) after 100 and
//                                    after 10000 instances (--instances N)
//
//   engine_bench [--quick] [--instances N]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "engine/engine.h"
#include "native_imports.h"

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

template <typename F>
std::vector<double> Sample(int count, F&& body) {
  std::vector<double> samples;
  samples.reserve(count);
  for (int i = 0; i < count; i++) {
    auto start = std::chrono::steady_clock::now();
    body();
    samples.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }
  return samples;
}

plimsoll::engine::Outcome Embedded(std::string_view code) {
  plimsoll::engine::Limits limits;
  limits.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto outcome = plimsoll::engine::EvaluateJavascript(code, limits);
  if (!outcome.ok() || outcome->exit_code != 0) {
    std::fprintf(stderr, "engine_bench: run failed: %s\n",
                 outcome.ok() ? outcome->stderr_bytes.c_str() : outcome.error().ToString().c_str());
    std::exit(1);
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

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  int instances = 10000;
  for (int i = 1; i < argc; i++) {
    std::string_view argument = argv[i];
    if (argument == "--quick") quick = true;
    if (argument == "--instances" && i + 1 < argc) instances = std::atoi(argv[++i]);
  }
  const int small_runs = quick ? 200 : 2000;
  const int cpu_runs = quick ? 3 : 10;

  Embedded("console.log(1)");  // warm-up: one-time initialisation
  Print("engine.instance_console_log", "ms",
        Sample(small_runs, [] { Embedded("console.log(6*7)"); }));
  Print("engine.native_console_log", "ms",
        Sample(small_runs, [] { plimsoll::bench::RunNative("console.log(6*7)"); }));

  if (Embedded(kPrimes).stdout_bytes != plimsoll::bench::RunNative(kPrimes).stdout_bytes) {
    std::fprintf(stderr, "engine_bench: wasm and native disagree on primes\n");
    return 1;
  }
  Print("engine.primes_200000_wasm", "ms", Sample(cpu_runs, [] { Embedded(kPrimes); }));
  Print("engine.primes_200000_native", "ms",
        Sample(cpu_runs, [] { plimsoll::bench::RunNative(kPrimes); }));

  std::vector<double> vm, rss;
  for (int i = 1; i <= instances; i++) {
    Embedded("const o = { a: [1, 2, 3] }; console.log(JSON.stringify(o))");
    if (i == 100 || i == instances) {
      vm.push_back(static_cast<double>(StatusKilobytes("VmSize")));
      rss.push_back(static_cast<double>(StatusKilobytes("VmRSS")));
    }
  }
  Print("engine.vmsize_after_100_and_n_instances", "kB", vm);
  Print("engine.rss_after_100_and_n_instances", "kB", rss);
  return 0;
}
