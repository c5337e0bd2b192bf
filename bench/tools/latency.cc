// plimsoll-latency: Sandbox::Run of one snippet in a loop, in this process,
// for any provider; the in-process baseline the daemon's HTTP rows are
// compared with (bench/scenarios.py, daemon.*). Prints one sampler line:
//   {"scenario": NAME, "unit": "ms", "samples": [...]}
//   {"scenario": NAME, "error": "..."}
// (bench/run.py turns it into p50/p95/p99, ratios and targets.)
//
// What is timed: exactly the call the daemon's run handler makes on a worker
// thread, Sandbox::Run(request) (validation, floor against the evidence,
// the provider's run, the run record), with the request built once, as the
// daemon has it after parsing. Evidence is collected once before the
// warm-ups, as plimsolld does at startup.
//
//   plimsoll-latency [--provider NAME] [--scenario NAME] [--runs N]
//                    [--warmup N] [--code JS]
//
// Defaults: provider embedded, scenario "latency", code console.log(6*7);
// runs/warm-ups from --runs/--warmup, else $PLIMSOLL_BENCH_RUNS /
// $PLIMSOLL_BENCH_WARMUP, else 1000 / 20. Exit status: 0; 1 when a run
// fails (an "error" line says why); 2 for usage errors.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/sandbox.h"
#include "tools/sampler_output.h"

namespace {

using plimsoll::bench::PrintSamples;

int Fail(const std::string& scenario, const std::string& reason) {
  plimsoll::bench::PrintError(scenario, reason);
  return 1;
}

int Usage(const char* message) {
  std::fprintf(stderr,
               "plimsoll-latency: %s\nusage: plimsoll-latency [--provider NAME] [--scenario NAME] "
               "[--runs N] [--warmup N] [--code JS]\n",
               message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string provider = "embedded";
  std::string scenario = "latency";
  std::string code = "console.log(6*7)";
  long runs = plimsoll::bench::EnvCount("PLIMSOLL_BENCH_RUNS", 1000);
  long warmup = plimsoll::bench::EnvCount("PLIMSOLL_BENCH_WARMUP", 20);
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (i + 1 >= argc) return Usage("every flag takes a value");
    const char* value = argv[++i];
    if (flag == "--provider") {
      provider = value;
    } else if (flag == "--scenario") {
      scenario = value;
    } else if (flag == "--code") {
      code = value;
    } else if (flag == "--runs" || flag == "--warmup") {
      char* end = nullptr;
      long count = std::strtol(value, &end, 10);
      if (*value == '\0' || *end != '\0' || count < 0) return Usage("counts are whole numbers");
      (flag == "--runs" ? runs : warmup) = count;
    } else {
      return Usage("unknown flag");
    }
  }
  if (runs < 1) return Usage("--runs must be at least 1");

  auto sandbox = plimsoll::Sandbox::Open(provider);
  if (!sandbox.ok()) return Fail(scenario, sandbox.error().ToString());
  auto evidence = sandbox->CollectEvidence();
  if (!evidence.ok()) return Fail(scenario, "collecting evidence: " + evidence.error().ToString());

  plimsoll::Request request;
  request.javascript = plimsoll::JavascriptPayload{code};
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(runs));
  for (long i = 0; i < warmup + runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto result = sandbox->Run(request);
    auto elapsed = std::chrono::steady_clock::now() - start;
    if (!result.ok())
      return Fail(scenario, "run " + std::to_string(i) + ": " + result.error().ToString());
    if (result->exit_code != 0) {
      return Fail(scenario, "run " + std::to_string(i) + " exited with status " +
                                std::to_string(result->exit_code));
    }
    if (i >= warmup) samples.push_back(std::chrono::duration<double, std::milli>(elapsed).count());
  }
  PrintSamples(scenario, "ms", samples);
  return 0;
}
