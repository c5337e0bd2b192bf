// Exams on the embedded provider (SPEC §10, docs/exams.md): the one kind of
// project it runs. A project whose only step is a plimsoll-trial command
// with a JavaScript controller on qjs,
//
//   ["plimsoll-trial", "--plant", "cartpole", "--trajectory", "trajectory.f64",
//    "--", "qjs", "--controller", "controller.js"]
//
// runs in this process: the runner's library with the plant linked in and
// the controller in the embedded engine (src/trial/javascript_controller.h),
// the files read from the request, the trajectory returned as the artifact
// the request names. The result is the one an OS-level tier gives for the
// same project: one step with plimsoll-trial's exit status, its summary line
// on stdout, what it and the controller printed on stderr; so the same
// controller gives the same fingerprint here as on every tier.
//
// Not served here (refused `unsupported`, nothing ran): any other project,
// a controller that is not `qjs --controller FILE` (no Python, no other qjs
// options), a build command (`--build`: a C controller's compile), a
// granted exam. The project's deadline bounds the trial: past
// it the step is 124 and timed out, as a killed step is.
#ifndef PLIMSOLL_PROVIDERS_EMBEDDED_EXAM_PROJECT_H_
#define PLIMSOLL_PROVIDERS_EMBEDDED_EXAM_PROJECT_H_

#include <chrono>

#include "plimsoll/error.h"
#include "plimsoll/limits.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"

namespace plimsoll {

// Whether `project` asks for an exam: exactly one step, and it runs
// plimsoll-trial (by that name or /usr/local/bin/plimsoll-trial), or
// plimsoll-model (a module run, core/module_project.h: evaluated in process
// by the same library, src/trial/module_run.h).
bool IsExamProject(const ProjectPayload& project);

// Runs an exam project (IsExamProject) by `deadline`. The result's
// provider, tier and environment are left for the caller. Errors: refusals
// (kUnsupported) for what is not served here; the engine's refusal when no
// interpreter could be made.
Expected<Result> RunExamProject(const ProjectPayload& project,
                                std::chrono::steady_clock::time_point deadline,
                                const Limits& limits);

}  // namespace plimsoll

#endif  // PLIMSOLL_PROVIDERS_EMBEDDED_EXAM_PROJECT_H_
