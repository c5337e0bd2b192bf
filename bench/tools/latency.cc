// plimsoll-latency: Sandbox::Run of one snippet in a loop, in this process,
// for any provider; the in-process baseline the daemon's HTTP rows are
// compared with (bench/scenarios.py, daemon.*), and the session rows
// (sessions.*: --mode cell / open). Prints one sampler line:
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
//                    [--warmup N] [--code CODE] [--env NAME=VALUE]...
//                    [--interval-ms N] [--await-pool-ms N]
//                    [--mode run|cell|open] [--lang javascript|python]
//
// --mode run (default): Sandbox::Run of a `--lang` payload (default
// javascript) of CODE. --mode cell: one session opened (untimed) whose first
// cell sets x = 0; each timed call is the cell `x += 1` and a print of x, in
// the warm interpreter of --lang, and its stdout must be the count (the
// state was kept). --mode open: each timed call is Sandbox::OpenSession
// until the session can take a call (the close after it is untimed).
//
// Defaults: provider embedded, scenario "latency", code console.log(6*7)
// (print(6*7) for python);
// runs/warm-ups from --runs/--warmup, else $PLIMSOLL_BENCH_RUNS /
// $PLIMSOLL_BENCH_WARMUP, else 1000 / 20. Exit status: 0; 1 when a run
// fails (an "error" line says why); 2 for usage errors.
//
// --env NAME=VALUE (repeatable) sets a variable in this process before the
// provider is opened: the provider's configuration, e.g.
// SANDBOX_OCI_POOL_SIZE=0, visible in the argv bench/run.py records.
// --interval-ms N sleeps N ms before every run, warm-ups included (untimed):
// pacing, so that background work a run leaves (a warm pool refilling, a
// container torn down off the answer's path) is done before the next one.
// --await-pool-ms N: before every run (warm-ups included, untimed, before any
// --interval-ms sleep), wait until the provider's warm pool is full (every
// sandbox started and waiting, so no refill is running), polling every 10 ms,
// for at most N ms; then run anyway. The facts say how many timed runs
// started with a full pool ("await_pool"). For pools whose refill is slow and
// varies with load (microvm boots), this paces exactly as much as needed.
// At the end the provider's "pool" detail, if any, goes to stderr (e.g.
// "2 of 2 ready (enabled); 25 handed out, 0 found empty, ..."), and into the
// sampler line's "facts" with the evidence's tier and the provider's
// "accelerator" detail (microvm), if any.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "plimsoll/sandbox.h"
#include "plimsoll/session.h"
#include "plimsoll/tier.h"
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
               "[--runs N] [--warmup N] [--code JS] [--env NAME=VALUE]... [--interval-ms N] "
               "[--await-pool-ms N] [--mode run|cell|open] [--lang javascript|python]\n",
               message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string provider = "embedded";
  std::string scenario = "latency";
  std::string code;
  std::string mode = "run";
  std::string language = "javascript";
  long runs = plimsoll::bench::EnvCount("PLIMSOLL_BENCH_RUNS", 1000);
  long warmup = plimsoll::bench::EnvCount("PLIMSOLL_BENCH_WARMUP", 20);
  long interval_ms = 0;
  long await_pool_ms = 0;
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
    } else if (flag == "--mode") {
      mode = value;
      if (mode != "run" && mode != "cell" && mode != "open") return Usage("--mode: run|cell|open");
    } else if (flag == "--lang") {
      language = value;
      if (language != "javascript" && language != "python") {
        return Usage("--lang: javascript|python");
      }
    } else if (flag == "--env") {
      std::string_view assignment = value;
      size_t equals = assignment.find('=');
      if (equals == 0 || equals == std::string_view::npos) return Usage("--env takes NAME=VALUE");
      std::string name(assignment.substr(0, equals));
      if (setenv(name.c_str(), value + equals + 1, 1) != 0) return Usage("--env: bad name");
    } else if (flag == "--runs" || flag == "--warmup" || flag == "--interval-ms" ||
               flag == "--await-pool-ms") {
      char* end = nullptr;
      long count = std::strtol(value, &end, 10);
      if (*value == '\0' || *end != '\0' || count < 0) return Usage("counts are whole numbers");
      (flag == "--runs"          ? runs
       : flag == "--warmup"      ? warmup
       : flag == "--interval-ms" ? interval_ms
                                 : await_pool_ms) = count;
    } else {
      return Usage("unknown flag");
    }
  }
  if (runs < 1) return Usage("--runs must be at least 1");

  auto sandbox = plimsoll::Sandbox::Open(provider);
  if (!sandbox.ok()) return Fail(scenario, sandbox.error().ToString());
  auto evidence = sandbox->CollectEvidence();
  if (!evidence.ok()) return Fail(scenario, "collecting evidence: " + evidence.error().ToString());

  const bool python = language == "python";
  if (code.empty()) code = python ? "print(6*7)" : "console.log(6*7)";
  plimsoll::Request request;
  std::unique_ptr<plimsoll::Session> session;
  if (mode == "cell") {
    auto opened = sandbox->OpenSession(plimsoll::SessionOptions{});
    if (!opened.ok()) return Fail(scenario, "opening the session: " + opened.error().ToString());
    session = std::move(*opened);
    request.cell = plimsoll::CellPayload{language, python ? "x = 0" : "var x = 0"};
    auto first = session->Run(request);
    if (!first.ok()) return Fail(scenario, "the first cell: " + first.error().ToString());
    request.cell->code = python ? "x += 1; print(x)" : "x += 1; console.log(x)";
  } else if (python) {
    request.python = plimsoll::PythonPayload{code};
  } else {
    request.javascript = plimsoll::JavascriptPayload{code};
  }
  std::vector<double> samples;
  samples.reserve(static_cast<size_t>(runs));
  long full_pool_runs = 0;
  for (long i = 0; i < warmup + runs; ++i) {
    if (await_pool_ms > 0) {
      auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(await_pool_ms);
      bool full = false;
      while (true) {
        auto pool = sandbox->Describe().pool;
        full = pool && pool->enabled && pool->ready >= pool->size;
        if (full || std::chrono::steady_clock::now() >= give_up) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (full && i >= warmup) ++full_pool_runs;
    }
    if (interval_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(interval_ms));
    auto start = std::chrono::steady_clock::now();
    if (mode == "open") {
      auto opened = sandbox->OpenSession(plimsoll::SessionOptions{});
      auto elapsed = std::chrono::steady_clock::now() - start;
      if (!opened.ok()) {
        return Fail(scenario, "open " + std::to_string(i) + ": " + opened.error().ToString());
      }
      (*opened)->Close();
      if (i >= warmup) {
        samples.push_back(std::chrono::duration<double, std::milli>(elapsed).count());
      }
      continue;
    }
    auto result = session ? session->Run(request) : sandbox->Run(request);
    auto elapsed = std::chrono::steady_clock::now() - start;
    if (session && result.ok() && result->stdout_bytes != std::to_string(i + 1) + "\n") {
      return Fail(scenario, "cell " + std::to_string(i) + " printed \"" + result->stdout_bytes +
                                "\", not " + std::to_string(i + 1) + ": the state was not kept");
    }
    if (!result.ok())
      return Fail(scenario, "run " + std::to_string(i) + ": " + result.error().ToString());
    if (result->exit_code != 0) {
      return Fail(scenario, "run " + std::to_string(i) + " exited with status " +
                                std::to_string(result->exit_code));
    }
    if (i >= warmup) samples.push_back(std::chrono::duration<double, std::milli>(elapsed).count());
  }
  // What the runs ran on, kept with the row: the evidence's tier, and the
  // provider's accelerator (microvm) and pool counters (after the runs).
  std::vector<std::pair<std::string, std::string>> facts = {
      {"tier", std::string(plimsoll::TierName(evidence->tier))}};
  if (await_pool_ms > 0) {
    facts.emplace_back("await_pool", std::to_string(full_pool_runs) + " of " +
                                         std::to_string(runs) +
                                         " timed runs started with a full pool (waited at most " +
                                         std::to_string(await_pool_ms) + " ms before each)");
  }
  for (const auto& [key, detail] : sandbox->Describe().details) {
    if (key != "pool" && key != "accelerator") continue;
    facts.emplace_back(key, detail);
    if (key == "pool") {
      std::fprintf(stderr, "plimsoll-latency: %s: pool %s\n", scenario.c_str(), detail.c_str());
    }
  }
  if (session) session->Close();
  PrintSamples(scenario, "ms", samples, facts);
  return 0;
}
