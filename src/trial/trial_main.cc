// plimsoll-trial: runs one exam trial (SPEC §10; docs/exams.md).
//
//   plimsoll-trial --plant NAME [--scenario FILE] --trajectory OUT
//                  [--answer-timeout-ms N] [--build COMMAND [ARGS...]] -- CONTROLLER [ARGS...]
//
//   --plant NAME            a linked-in plant (cartpole)
//   --scenario FILE         the scenario JSON ({"plant": NAME, "parameters": [...]});
//                           read, then deleted before the controller starts;
//                           without it, the plant's default scenario
//   --trajectory OUT        where the trajectory (little-endian float64 rows) is written
//   --answer-timeout-ms N   the per-tick answer deadline (default 2000; 1..600000)
//   --tick-times OUT        benchmarks: each tick's wall time, little-endian float64 seconds
//   --build COMMAND [ARGS...] --
//                           run COMMAND to its end after the scenario is read and
//                           deleted, before the controller starts (a C controller's
//                           compile: build_command.h); the last option
//   CONTROLLER [ARGS...]    the controller's command (searched on PATH without a '/')
//
// Prints one JSON summary line on stdout. Exit status: 0 when the trial ran,
// whatever its outcome (see "ended"); 2 for usage errors; 3 for a scenario
// that could not be read or that the plant refused; 4 when the controller
// could not be started or the trajectory file created, or when a process
// of the runner's user could read it (same_user_probe.h); 5 when the build
// command did not exit 0; 70 when the plant module itself failed. Each
// non-zero exit writes one line on stderr (after a failed build, after the
// build's own messages).
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "trial/build_command.h"
#include "trial/plant_registry.h"
#include "trial/trial.h"
#include "trial/trial_command.h"

namespace {

constexpr int kUsageError = 2;
constexpr int kScenarioError = 3;
constexpr int kStartError = 4;
constexpr int kBuildError = 5;
constexpr int kInternalError = 70;  // EX_SOFTWARE

}  // namespace

int main(int argc, char** argv) {
  namespace trial = plimsoll::trial;
  const std::vector<std::string> arguments(argv + 1, argv + argc);
  if (arguments.size() == 1 && (arguments[0] == "--help" || arguments[0] == "-h")) {
    std::fputs(trial::kTrialUsage, stdout);
    std::fputs("plants:", stdout);
    for (const trial::PlantEntry& entry : trial::Plants()) {
      std::printf(" %.*s", static_cast<int>(entry.name.size()), entry.name.data());
    }
    std::fputs("\n", stdout);
    return 0;
  }
  plimsoll::Expected<trial::TrialRequest> request = trial::ParseTrialCommand(arguments);
  if (!request.ok()) {
    std::fprintf(stderr, "plimsoll-trial: %s\n%s", request.error().message().c_str(),
                 trial::kTrialUsage);
    return kUsageError;
  }

  // A controller that exits mid-write is an outcome, not a signal (the
  // library blocks SIGPIPE around its writes too; this covers stdout).
  signal(SIGPIPE, SIG_IGN);

  plimsoll::Expected<trial::TrialSummary> summary = trial::RunTrial(*request);
  if (!summary.ok()) {
    const plimsoll::Error& error = summary.error();
    std::fprintf(stderr, "plimsoll-trial: %s\n", error.message().c_str());
    if (trial::IsBuildFailure(error)) return kBuildError;
    if (error.code() == plimsoll::ErrorCode::kInvalidArgument) return kScenarioError;
    if (error.code() == plimsoll::ErrorCode::kFailedPrecondition) return kStartError;
    return kInternalError;
  }
  const std::string line = trial::SummaryJson(*summary).dump() + "\n";
  if (std::fputs(line.c_str(), stdout) == EOF || std::fflush(stdout) != 0) {
    std::fprintf(stderr, "plimsoll-trial: the summary could not be written.\n");
    return kInternalError;
  }
  return 0;
}
