// plimsoll-exam-bench: the exam rows of bench/run.py (issue 20, docs/exams.md).
//
//   --scenario exam.plant_tick   the cart-pole plant stepping alone, in this
//                                process: read state, the accepted law computed
//                                natively, step; each tick timed (µs). The
//                                baseline of the per-tick row.
//   --scenario exam.linux_trial  whole trials through Sandbox::Run on a provider
//                                (default linux): a project whose only file is
//                                the accepted JavaScript controller, running
//                                plimsoll-trial with qjs --controller; each
//                                run's wall time (ms). Also prints
//                                exam.linux_tick_js: every tick's wall time
//                                inside the runner (µs; --tick-times), the
//                                same tick the plant row times plus the line
//                                exchange with the controller.
//   --scenario exam.linux_c_compile  the same trials with the accepted law in C:
//                                the project's first step compiles it in the
//                                sandbox (plimsoll-cc: clang-14 to wasm32, the
//                                module checked); that step's own duration
//                                (ms). Also prints exam.linux_tick_c: every
//                                tick's wall time inside the runner with
//                                plimsoll-wasm-controller (the module on
//                                wabt's interpreter) as the controller.
//   --scenario exam.linux_module_1000  a module run through Sandbox::Run on a
//                                provider (default linux): 1000 cart-pole rows
//                                (initial angles spread over ±0.2 rad), 5 s of
//                                model time each, no controller; each run's
//                                wall time (ms), the sandbox included.
//
// Each trial is 2000 ticks (20 s of cart-pole). --runs counts trials; --warmup
// trials run first, untimed.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "plant_abi.h"
#include "plimsoll/sandbox.h"
#include "trial/plant_registry.h"
#include "tools/sampler_output.h"

namespace plimsoll::bench {
namespace {

using Clock = std::chrono::steady_clock;

constexpr char kController[] =
    "function control(x, v, theta, omega) { return 40 * theta + 5 * omega + x + v; }\n";
constexpr char kCController[] =
    "double control(double x, double v, double theta, double omega, int k) {\n"
    "  (void)k;\n"
    "  return 40 * theta + 5 * omega + x + v;\n"
    "}\n";

std::vector<double> PlantTicks(int64_t runs, int64_t warmup, std::string& error) {
  std::vector<double> samples;
  for (int64_t trial = 0; trial < warmup + runs; ++trial) {
    auto plant = trial::CreatePlant("cartpole");
    if (!plant.ok()) return error = plant.error().message(), std::vector<double>{};
    auto init = (*plant)->Init({});
    if (!init.ok() || *init != PLANT_OK) return error = "plant_init failed", std::vector<double>{};
    std::vector<double> state(4), inputs(1), applied(1);
    for (;;) {
      const Clock::time_point start = Clock::now();
      if (!(*plant)->ReadState(state).ok())
        return error = "plant_read_state failed", std::vector<double>{};
      inputs[0] = 40 * state[2] + 5 * state[3] + state[0] + state[1];
      auto step = (*plant)->Step(inputs, applied);
      const double micros = std::chrono::duration<double, std::micro>(Clock::now() - start).count();
      if (!step.ok() || *step < 0) return error = "plant_step failed", std::vector<double>{};
      if (trial >= warmup) samples.push_back(micros);
      if (*step != PLANT_RUNNING) break;  // finished (or failed: not with this law)
    }
  }
  return samples;
}

// Whole trials on `provider`; with `in_c`, the controller is C compiled by
// the project's first step, and `trial_ms` gets that step's duration.
// Module runs of 1000 cart-pole rows on `provider`; each run's wall time.
void ModuleRuns(const std::string& provider, int64_t runs, int64_t warmup, std::string& error,
                std::vector<double>& run_ms, std::string& tier) {
  auto sandbox = Sandbox::Open(provider);
  if (!sandbox.ok()) return void(error = sandbox.error().message());
  auto evidence = sandbox->CollectEvidence();
  if (!evidence.ok()) return void(error = evidence.error().message());
  tier = std::string(TierName(evidence->tier));
  Request request;
  request.timeout_ms = 60'000;
  ModulePayload module{"cartpole", {}, 5, 0.01};
  for (int i = 0; i < 1000; ++i) module.rows.push_back({0, 0, -0.2 + 0.4 * i / 999.0, 0});
  request.module = std::move(module);
  for (int64_t run = 0; run < warmup + runs; ++run) {
    const Clock::time_point start = Clock::now();
    auto result = sandbox->Run(request);
    const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!result.ok()) return void(error = result.error().message());
    const auto summary = nlohmann::json::parse(result->stdout_bytes, nullptr, false);
    if (result->exit_code != 0 || !summary.is_object() || summary.value("rows", 0) != 1000) {
      return void(error = "the module run exited " + std::to_string(result->exit_code) + ": " +
                          result->stdout_bytes + result->stderr_bytes);
    }
    if (run >= warmup) run_ms.push_back(elapsed);
  }
}

void LinuxTrials(const std::string& provider, bool in_c, int64_t runs, int64_t warmup,
                 std::string& error, std::vector<double>& trial_ms, std::vector<double>& tick_us,
                 std::string& tier) {
  auto sandbox = Sandbox::Open(provider);
  if (!sandbox.ok()) return void(error = sandbox.error().message());
  auto evidence = sandbox->CollectEvidence();
  if (!evidence.ok()) return void(error = evidence.error().message());
  tier = std::string(TierName(evidence->tier));
  Request request;
  request.timeout_ms = 60'000;
  const std::vector<std::string> trial = {
      "plimsoll-trial", "--plant",      "cartpole",  "--trajectory",
      "trajectory.f64", "--tick-times", "ticks.f64", "--"};
  auto with = [&](std::vector<std::string> controller) {
    std::vector<std::string> step = trial;
    step.insert(step.end(), controller.begin(), controller.end());
    return step;
  };
  request.project = in_c ? ProjectPayload{{{"controller.c", kCController}},
                                          {{"plimsoll-cc", "--plant", "cartpole", "controller.c",
                                            "-o", "controller.wasm"},
                                           with({"plimsoll-wasm-controller", "controller.wasm"})},
                                          {"ticks.f64"}}
                         : ProjectPayload{{{"controller.js", kController}},
                                          {with({"qjs", "--controller", "controller.js"})},
                                          {"ticks.f64"}};
  for (int64_t trial = 0; trial < warmup + runs; ++trial) {
    const Clock::time_point start = Clock::now();
    auto result = sandbox->Run(request);
    const double elapsed = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!result.ok()) return void(error = result.error().message());
    if (result->exit_code != 0 || result->artifacts.size() != 1) {
      return void(error = "the trial exited " + std::to_string(result->exit_code) + ": " +
                          result->stderr_bytes);
    }
    const auto summary = nlohmann::json::parse(result->stdout_bytes, nullptr, false);
    if (!summary.is_object() || summary.value("ticks", 0) != 2000) {
      return void(error = "the trial did not take 2000 ticks: " + result->stdout_bytes);
    }
    if (trial < warmup) continue;
    trial_ms.push_back(in_c ? static_cast<double>(result->steps.at(0).duration_ms) : elapsed);
    const std::string& bytes = result->artifacts[0].content;
    for (size_t at = 0; at + 8 <= bytes.size(); at += 8) {
      double seconds;  // little-endian, as this host is
      std::memcpy(&seconds, bytes.data() + at, 8);
      tick_us.push_back(seconds * 1e6);
    }
  }
}

int64_t Count(const char* flag, int64_t fallback) {
  if (flag == nullptr) return fallback;
  char* end = nullptr;
  const long long value = std::strtoll(flag, &end, 10);
  return end != flag && *end == '\0' ? value : -1;
}

int Main(int argc, char** argv) {
  const char* runs_flag = nullptr;
  const char* warmup_flag = nullptr;
  std::string scenario, provider = "linux";
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--runs" && has_value) {
      runs_flag = argv[++i];
    } else if (arg == "--warmup" && has_value) {
      warmup_flag = argv[++i];
    } else if (arg == "--scenario" && has_value) {
      scenario = argv[++i];
    } else if (arg == "--provider" && has_value) {
      provider = argv[++i];
    } else {
      std::fprintf(
          stderr,
          "usage: plimsoll-exam-bench --scenario NAME [--provider P] [--runs N] [--warmup N]\n");
      return 2;
    }
  }
  const int64_t runs = Count(runs_flag, 20);
  const int64_t warmup = Count(warmup_flag, 2);
  if (runs < 1 || runs > 1000 || warmup < 0 || warmup > 100) {
    std::fprintf(stderr, "plimsoll-exam-bench: --runs 1..1000, --warmup 0..100\n");
    return 2;
  }
  std::string error;
  if (scenario == "exam.plant_tick") {
    std::vector<double> samples = PlantTicks(runs, warmup, error);
    if (samples.empty()) return PrintError(scenario, error), 1;
    PrintSamples(scenario, "us", samples);
    return 0;
  }
  if (scenario == "exam.linux_trial" || scenario == "exam.linux_c_compile") {
    const bool in_c = scenario == "exam.linux_c_compile";
    const char* tick_row = in_c ? "exam.linux_tick_c" : "exam.linux_tick_js";
    std::vector<double> trial_ms, tick_us;
    std::string tier;
    LinuxTrials(provider, in_c, runs, warmup, error, trial_ms, tick_us, tier);
    if (!error.empty() || trial_ms.empty()) {
      PrintError(scenario, error.empty() ? "no trial ran" : error);
      PrintError(tick_row, error.empty() ? "no trial ran" : error);
      return 1;
    }
    PrintSamples(scenario, "ms", trial_ms, {{"provider", provider}, {"tier", tier}});
    PrintSamples(tick_row, "us", tick_us, {{"provider", provider}, {"tier", tier}});
    return 0;
  }
  if (scenario == "exam.linux_module_1000") {
    std::vector<double> run_ms;
    std::string tier;
    ModuleRuns(provider, runs, warmup, error, run_ms, tier);
    if (!error.empty() || run_ms.empty()) {
      return PrintError(scenario, error.empty() ? "no run" : error), 1;
    }
    PrintSamples(scenario, "ms", run_ms, {{"provider", provider}, {"tier", tier}});
    return 0;
  }
  std::fprintf(stderr, "plimsoll-exam-bench: unknown scenario %s\n", scenario.c_str());
  return 2;
}

}  // namespace
}  // namespace plimsoll::bench

int main(int argc, char** argv) {
  return plimsoll::bench::Main(argc, argv);
}
