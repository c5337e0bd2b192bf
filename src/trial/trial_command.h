// plimsoll-trial's command line (docs/exams.md), parsed into a TrialRequest:
// the command itself (trial_main.cc) and the embedded provider, which runs
// the same command in process (src/providers/embedded/exam_project.h), read
// it the same way.
//
//   --plant NAME [--scenario FILE] --trajectory OUT [--answer-timeout-ms N]
//   [--tick-times OUT] [--build COMMAND [ARGS...]] -- CONTROLLER [ARGS...]
//
// --build is the last option: its command is every argument up to the "--"
// that starts the controller's (so it holds no "--" of its own).
//
// Usage:
//   Expected<TrialRequest> request = ParseTrialCommand({argv + 1, argv + argc});
//   if (!request.ok()) { usage error: request.error().message() says what }
#ifndef PLIMSOLL_TRIAL_TRIAL_COMMAND_H_
#define PLIMSOLL_TRIAL_TRIAL_COMMAND_H_

#include <string>
#include <vector>

#include "plimsoll/error.h"
#include "trial/trial.h"

namespace plimsoll::trial {

inline constexpr char kTrialUsage[] =
    "usage: plimsoll-trial --plant NAME [--scenario FILE] --trajectory OUT "
    "[--answer-timeout-ms N] [--tick-times OUT] [--build COMMAND [ARGS...]] "
    "-- CONTROLLER [ARGS...]\n";

// The arguments after the program's name. Errors (kInvalidArgument, one
// sentence): an unknown option, an option without its value, a bad
// --answer-timeout-ms, --plant or --trajectory missing, --build without a
// command, no controller.
Expected<TrialRequest> ParseTrialCommand(const std::vector<std::string>& arguments);

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_TRIAL_COMMAND_H_
