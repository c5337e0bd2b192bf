// The trial's build command (plimsoll-trial --build CMD... --; docs/exams.md
// "C controllers"): what makes the controller (plimsoll-cc compiling a C
// controller to a module), run by the runner itself after it has read and
// deleted the scenario and before it starts the controller. Compiling is
// running the agent's code (an `#include "scenario.json"` printed in the
// compiler's error, an `.incbin` embedded in the module), so it must not
// run while the scenario file exists; run here, it runs in the controller's
// position, behind the same proof (same_user_probe.h).
//
// The command is a child as child_start.h starts it: the runner's
// environment, stdin /dev/null, its stdout and stderr both the runner's
// stderr (so the runner's stdout keeps only the summary, and the compiler's
// messages reach whoever reads the step's stderr), its own process group.
// The runner waits for it; when it has exited, whatever is left of its
// process group is killed before it is reaped, so nothing it started runs
// beside the controller from its group. No deadline of its own: the step's
// timeout bounds it, as it bounds the whole trial.
//
// Usage:
//   Status built = RunBuildCommand({"plimsoll-cc", "--plant", "cartpole", "controller.c",
//                                   "-o", "controller.wasm"});
//   if (!built.ok()) { IsBuildFailure(built.error()): plimsoll-trial exits 5 }
//
// Thread-safety: any thread; one build at a time per thread.
#ifndef PLIMSOLL_TRIAL_BUILD_COMMAND_H_
#define PLIMSOLL_TRIAL_BUILD_COMMAND_H_

#include <string>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::trial {

// Runs `argv` to its end as described above. Ok when it exited 0. Errors
// (kFailedPrecondition, IsBuildFailure): it could not be started, it exited
// non-zero, it was killed by a signal; the message names the command and
// says which, in one sentence.
Status RunBuildCommand(const std::vector<std::string>& argv);

// Whether `error` is RunBuildCommand's (and so RunTrial's for a failed
// build): plimsoll-trial's exit status 5.
bool IsBuildFailure(const Error& error);

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_BUILD_COMMAND_H_
