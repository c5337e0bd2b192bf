// plimsoll-trial's command line (docs/exams.md), parsed into a TrialRequest:
// the command itself (trial_main.cc) and the embedded provider, which runs
// the same command in process (src/providers/embedded/exam_project.h), read
// it the same way.
//
//   --plant NAME [--scenario FILE] --trajectory OUT [--answer-timeout-ms N]
//   [--tick-times OUT] -- CONTROLLER [ARGS...]
//
// Usage:
//   Expected<TrialRequest> request = ParseTrialCommand({argv + 1, argv + argc});
//   if (!request.ok()) { usage error: request.error().message() says what }
#ifndef PLIMSOLL_SIMS_RUNNER_TRIAL_COMMAND_H_
#define PLIMSOLL_SIMS_RUNNER_TRIAL_COMMAND_H_

#include <string>
#include <vector>

#include "plimsoll/error.h"
#include "runner/trial.h"

namespace plimsoll::sims {

inline constexpr char kTrialUsage[] =
    "usage: plimsoll-trial --plant NAME [--scenario FILE] --trajectory OUT "
    "[--answer-timeout-ms N] [--tick-times OUT] -- CONTROLLER [ARGS...]\n";

// The arguments after the program's name. Errors (kInvalidArgument, one
// sentence): an unknown option, an option without its value, a bad
// --answer-timeout-ms, --plant or --trajectory missing, no controller.
Expected<TrialRequest> ParseTrialCommand(const std::vector<std::string>& arguments);

}  // namespace plimsoll::sims

#endif  // PLIMSOLL_SIMS_RUNNER_TRIAL_COMMAND_H_
