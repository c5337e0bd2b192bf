#include "providers/embedded/exam_project.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "trial/javascript_controller.h"
#include "trial/module_run.h"
#include "trial/scenario.h"
#include "trial/trial.h"
#include "trial/trial_command.h"

namespace plimsoll {
namespace {

using Clock = std::chrono::steady_clock;

// plimsoll-trial's exit statuses (src/trial/trial_main.cc).
constexpr int64_t kUsageError = 2;
constexpr int64_t kScenarioError = 3;
constexpr int64_t kStartError = 4;
constexpr int64_t kInternalError = 70;
constexpr int64_t kTimedOutExit = 124;

bool Named(const std::string& argument, std::string_view name) {
  return argument == name || argument == "/usr/local/bin/" + std::string(name);
}

// A path as a step would open it, relative to /work: "controller.js",
// "./controller.js" and "/work/controller.js" are the same file.
std::string InWork(std::string path) {
  if (path.rfind("/work/", 0) == 0) path.erase(0, 6);
  while (path.rfind("./", 0) == 0) path.erase(0, 2);
  return path;
}

const ProjectFile* FindFile(const ProjectPayload& project, const std::string& path) {
  const std::string wanted = InWork(path);
  for (const ProjectFile& file : project.files) {
    if (InWork(file.path) == wanted) return &file;
  }
  return nullptr;
}

Error Unsupported(const std::string& why) {
  return Refusal(NotDispatched::kUnsupported,
                 "The embedded provider runs exams in process " + why +
                     " Other projects need a container, kernel or vm provider "
                     "(e.g. --provider linux).");
}

// The step's result, and the run's from it (a project's top-level fields are
// its last step's).
Result Finish(const std::vector<std::string>& command, int64_t exit_code, std::string out,
              std::string err, Clock::time_point start, const Limits& limits) {
  StepResult step;
  step.command = command;
  step.exit_code = exit_code;
  step.timed_out = exit_code == kTimedOutExit;
  const size_t cap = static_cast<size_t>(limits.output_cap_bytes);
  step.stdout_truncated = out.size() > cap;
  step.stderr_truncated = err.size() > cap;
  out.resize(std::min(out.size(), cap));
  err.resize(std::min(err.size(), cap));
  step.stdout_bytes = std::move(out);
  step.stderr_bytes = std::move(err);
  step.duration_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();

  Result result;
  result.kind = PayloadKind::kProject;
  result.outcome = step.timed_out ? ProjectOutcome::kTimedOut : ProjectOutcome::kCompleted;
  result.exit_code = step.exit_code;
  result.timed_out = step.timed_out;
  result.stdout_bytes = step.stdout_bytes;
  result.stderr_bytes = step.stderr_bytes;
  result.stdout_truncated = step.stdout_truncated;
  result.stderr_truncated = step.stderr_truncated;
  result.duration_ms = step.duration_ms;
  result.steps.push_back(std::move(step));
  return result;
}

// A module run's step, `plimsoll-model SPEC OUT`, in process: the same
// library, exit statuses and output as the image's plimsoll-model
// (src/trial/model_main.cc); OUT comes back when the project names it.
Result RunModelStep(const ProjectPayload& project, Clock::time_point deadline,
                    const Limits& limits) {
  const Clock::time_point start = Clock::now();
  const std::vector<std::string>& command = project.steps[0];
  auto failed = [&](int64_t exit_code, const std::string& message) {
    return Finish(command, exit_code, "", "plimsoll-model: " + message + "\n", start, limits);
  };
  if (command.size() != 3 || command[1].rfind('-', 0) == 0) {
    return failed(kUsageError, "usage: plimsoll-model SPEC.json OUT.jsonl");
  }
  const ProjectFile* spec_file = FindFile(project, command[1]);
  if (spec_file == nullptr) return failed(kScenarioError, "cannot read " + command[1]);
  Expected<trial::ModuleSpec> spec = trial::ParseModuleSpec(spec_file->content);
  if (!spec.ok()) return failed(kScenarioError, spec.error().message());
  Expected<std::vector<trial::ModuleRowResult>> rows = trial::EvaluateModule(*spec, deadline);
  if (!rows.ok()) {
    const ErrorCode code = rows.error().code();
    return failed(code == ErrorCode::kDeadlineExceeded  ? kTimedOutExit
                  : code == ErrorCode::kInvalidArgument ? kScenarioError
                                                        : kInternalError,
                  rows.error().message());
  }
  const trial::ModuleOutput output = trial::FormatModuleOutput(*spec, *rows);
  Result result = Finish(command, 0, output.summary_line, "", start, limits);
  for (const std::string& path : project.artifacts) {
    if (InWork(path) != InWork(command[2])) continue;  // nothing else exists here
    Artifact artifact;
    artifact.path = path;
    artifact.content = output.rows_jsonl;
    artifact.truncated = static_cast<int64_t>(artifact.content.size()) > limits.max_artifact_bytes;
    if (artifact.truncated) artifact.content.resize(static_cast<size_t>(limits.max_artifact_bytes));
    result.artifacts.push_back(std::move(artifact));
  }
  return result;
}

}  // namespace

bool IsExamProject(const ProjectPayload& project) {
  return project.steps.size() == 1 && !project.steps[0].empty() &&
         (Named(project.steps[0][0], "plimsoll-trial") ||
          Named(project.steps[0][0], "plimsoll-model"));
}

Expected<Result> RunExamProject(const ProjectPayload& project, Clock::time_point deadline,
                                const Limits& limits) {
  if (Named(project.steps[0][0], "plimsoll-model")) return RunModelStep(project, deadline, limits);
  const Clock::time_point start = Clock::now();
  const std::vector<std::string>& command = project.steps[0];
  auto failed = [&](int64_t exit_code, const std::string& message) {
    return Finish(command, exit_code, "", "plimsoll-trial: " + message + "\n", start, limits);
  };
  Expected<trial::TrialRequest> request =
      trial::ParseTrialCommand(std::vector<std::string>(command.begin() + 1, command.end()));
  if (!request.ok()) {
    return Finish(command, kUsageError, "",
                  "plimsoll-trial: " + request.error().message() + "\n" + trial::kTrialUsage, start,
                  limits);
  }
  if (!request->build_argv.empty()) {
    return Unsupported(
        "with a JavaScript controller only; a build command (--build " + request->build_argv[0] +
        ", e.g. a C controller's compile) runs an image program, and this provider has none.");
  }
  const std::vector<std::string>& controller = request->controller_argv;
  if (controller.size() != 3 || !Named(controller[0], "qjs") || controller[1] != "--controller") {
    return Unsupported(
        "with a JavaScript controller given as `qjs --controller FILE` (no Python, no other "
        "qjs options).");
  }

  // The scenario: from the request's files (there is no file system to
  // delete it from; nothing but this code reads the request).
  trial::Scenario scenario;
  if (!request->scenario_path.empty()) {
    const ProjectFile* file = FindFile(project, request->scenario_path);
    if (file == nullptr) {
      return failed(kScenarioError, "The scenario file " + request->scenario_path +
                                        " cannot be opened: No such file or directory.");
    }
    Expected<trial::Scenario> parsed = trial::ParseScenario(file->content);
    if (!parsed.ok()) return failed(kScenarioError, parsed.error().message());
    scenario = std::move(*parsed);
  }
  if (scenario.plant && *scenario.plant != request->plant) {
    return failed(kScenarioError, "The scenario is for the plant \"" + *scenario.plant +
                                      "\", not \"" + request->plant + "\".");
  }

  // The controller: a missing file is a script that does not load (qjs
  // would exit at once): the trial then ends controller_exited.
  const ProjectFile* script = FindFile(project, controller[2]);
  engine::SessionLimits engine_limits;
  engine_limits.memory_bytes = static_cast<size_t>(limits.memory_bytes);
  engine_limits.output_cap_bytes = static_cast<size_t>(limits.output_cap_bytes);
  std::string printed;  // the controller's stderr, as a qjs child's would read
  if (script == nullptr)
    printed = "qjs: cannot read " + controller[2] + ": No such file or directory\n";
  std::optional<Error> no_interpreter;  // the engine could not make one: nothing of the guest's ran
  const trial::ControllerStarter start_controller =
      [&]() -> Expected<std::unique_ptr<trial::Controller>> {
    Expected<std::unique_ptr<trial::Controller>> made = trial::InProcessJavascriptController::Start(
        // No file: qjs would stop at reading it, with the line above only.
        script != nullptr ? std::string_view(script->content) : std::string_view(),
        script != nullptr ? &printed : nullptr,
        // qjs --controller's default load timeout, within the run's deadline
        // (rounded up: a load cut by it must end at or after the deadline).
        std::min<std::chrono::milliseconds>(std::chrono::seconds(10),
                                            std::chrono::ceil<std::chrono::milliseconds>(std::max(
                                                deadline - Clock::now(), Clock::duration::zero()))),
        engine_limits);
    if (!made.ok()) no_interpreter = made.error();
    return made;
  };
  Expected<trial::InProcessTrial> trial = trial::RunTrialInProcess(
      request->plant, scenario.parameters, request->answer_deadline, deadline, start_controller);

  // Past the run's deadline, a step is killed wherever it was (a script that
  // spun at load until then included): timed out, as on every tier.
  if (Clock::now() >= deadline && !no_interpreter)
    return Finish(command, kTimedOutExit, "", printed, start, limits);
  if (!trial.ok()) {
    const Error& error = trial.error();
    if (no_interpreter) return *no_interpreter;
    if (error.code() == ErrorCode::kDeadlineExceeded) {
      return Finish(command, kTimedOutExit, "", printed, start, limits);
    }
    const int64_t exit_code = error.code() == ErrorCode::kInvalidArgument      ? kScenarioError
                              : error.code() == ErrorCode::kFailedPrecondition ? kStartError
                                                                               : kInternalError;
    return Finish(command, exit_code, "", printed + "plimsoll-trial: " + error.message() + "\n",
                  start, limits);
  }
  Result result =
      Finish(command, 0, trial::SummaryJson(trial->summary).dump() + "\n", printed, start, limits);
  for (const std::string& path : project.artifacts) {
    if (InWork(path) != InWork(request->trajectory_path)) continue;  // nothing else exists here
    Artifact artifact;
    artifact.path = path;
    artifact.content = trial->trajectory;
    artifact.truncated = static_cast<int64_t>(artifact.content.size()) > limits.max_artifact_bytes;
    if (artifact.truncated) artifact.content.resize(static_cast<size_t>(limits.max_artifact_bytes));
    result.artifacts.push_back(std::move(artifact));
  }
  return result;
}

}  // namespace plimsoll
