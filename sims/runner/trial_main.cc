// plimsoll-trial: runs one exam trial (SPEC §10; docs/exams.md).
//
//   plimsoll-trial --plant NAME [--scenario FILE] --trajectory OUT
//                  [--answer-timeout-ms N] -- CONTROLLER [ARGS...]
//
//   --plant NAME            a linked-in plant (cartpole)
//   --scenario FILE         the scenario JSON ({"plant": NAME, "parameters": [...]});
//                           read, then deleted before the controller starts;
//                           without it, the plant's default scenario
//   --trajectory OUT        where the trajectory (little-endian float64 rows) is written
//   --answer-timeout-ms N   the per-tick answer deadline (default 2000; 1..600000)
//   --tick-times OUT        benchmarks: each tick's wall time, little-endian float64 seconds
//   CONTROLLER [ARGS...]    the controller's command (searched on PATH without a '/')
//
// Prints one JSON summary line on stdout. Exit status: 0 when the trial ran,
// whatever its outcome (see "ended"); 2 for usage errors; 3 for a scenario
// that could not be read or that the plant refused; 4 when the controller
// could not be started or the trajectory file created; 70 when the plant
// module itself failed. Each non-zero exit writes one line on stderr.
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "runner/plant_registry.h"
#include "runner/trial.h"

namespace {

constexpr int kUsageError = 2;
constexpr int kScenarioError = 3;
constexpr int kStartError = 4;
constexpr int kInternalError = 70;  // EX_SOFTWARE

constexpr char kUsage[] =
    "usage: plimsoll-trial --plant NAME [--scenario FILE] --trajectory OUT "
    "[--answer-timeout-ms N] [--tick-times OUT] -- CONTROLLER [ARGS...]\n";

int Usage(const std::string& problem) {
  std::fprintf(stderr, "plimsoll-trial: %s\n%s", problem.c_str(), kUsage);
  return kUsageError;
}

}  // namespace

int main(int argc, char** argv) {
  namespace sims = plimsoll::sims;
  sims::TrialRequest request;
  int at = 1;
  for (; at < argc; ++at) {
    const std::string_view flag = argv[at];
    if (flag == "--") {
      ++at;
      break;
    }
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      std::fputs("plants:", stdout);
      for (const sims::PlantEntry& entry : sims::Plants()) {
        std::printf(" %.*s", static_cast<int>(entry.name.size()), entry.name.data());
      }
      std::fputs("\n", stdout);
      return 0;
    }
    if (at + 1 >= argc) return Usage("the option " + std::string(flag) + " needs a value.");
    const std::string_view value = argv[++at];
    if (flag == "--plant") {
      request.plant = value;
    } else if (flag == "--scenario") {
      request.scenario_path = value;
    } else if (flag == "--trajectory") {
      request.trajectory_path = value;
    } else if (flag == "--tick-times") {
      request.tick_times_path = value;
    } else if (flag == "--answer-timeout-ms") {
      int64_t milliseconds = 0;
      const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), milliseconds);
      if (error != std::errc() || end != value.data() + value.size() || milliseconds < 1 ||
          milliseconds > 600000) {
        return Usage("--answer-timeout-ms takes a whole number of milliseconds from 1 to 600000.");
      }
      request.answer_deadline = std::chrono::milliseconds(milliseconds);
    } else {
      return Usage("unknown option " + std::string(flag) + ".");
    }
  }
  for (; at < argc; ++at) request.controller_argv.emplace_back(argv[at]);
  if (request.plant.empty()) return Usage("--plant is required.");
  if (request.trajectory_path.empty()) return Usage("--trajectory is required.");
  if (request.controller_argv.empty()) return Usage("the controller's command goes after --.");

  // A controller that exits mid-write is an outcome, not a signal (the
  // library blocks SIGPIPE around its writes too; this covers stdout).
  signal(SIGPIPE, SIG_IGN);

  plimsoll::Expected<sims::TrialSummary> summary = sims::RunTrial(request);
  if (!summary.ok()) {
    const plimsoll::Error& error = summary.error();
    std::fprintf(stderr, "plimsoll-trial: %s\n", error.message().c_str());
    if (error.code() == plimsoll::ErrorCode::kInvalidArgument) return kScenarioError;
    if (error.code() == plimsoll::ErrorCode::kFailedPrecondition) return kStartError;
    return kInternalError;
  }
  const std::string line = sims::SummaryJson(*summary).dump() + "\n";
  if (std::fputs(line.c_str(), stdout) == EOF || std::fflush(stdout) != 0) {
    std::fprintf(stderr, "plimsoll-trial: the summary could not be written.\n");
    return kInternalError;
  }
  return 0;
}
