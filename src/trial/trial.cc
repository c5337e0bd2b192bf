#include "trial/trial.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <memory>

#include "base/unique_fd.h"
#include "plant_abi.h"
#include "trial/build_command.h"
#include "trial/controller_process.h"
#include "trial/line_protocol.h"
#include "trial/plant_registry.h"
#include "trial/scenario.h"
#include "trial/sha256.h"
#include "trial/trajectory.h"

namespace plimsoll::trial {

namespace {

// No plant runs longer than this many ticks (bounds the trajectory's memory).
constexpr double kMaxTicks = 1e6;

std::string RefusalText(int32_t code) {
  switch (code) {
    case PLANT_ERROR_COUNT:
      return "it has the wrong number of parameters";
    case PLANT_ERROR_NOT_FINITE:
      return "a parameter is not a finite number";
    case PLANT_ERROR_RANGE:
      return "a parameter is outside the plant's range";
    default:
      return "plant_init answered " + std::to_string(code);
  }
}

// ticks × tick, computed as ticks / (1 / tick) when the tick is the exact
// reciprocal of a whole number (0.01 s: 799 ticks give 7.99, not
// 7.9900000000000002).
double SecondsAt(int64_t ticks, double tick) {
  const double per_second = std::round(1.0 / tick);
  if (per_second >= 1 && 1.0 / per_second == tick) return static_cast<double>(ticks) / per_second;
  return static_cast<double>(ticks) * tick;
}

struct Ending {
  TrialEnd reason;
  std::string detail;
};

// One tick's conversation: the state out, the answer in, by one deadline.
// True when the answer is in `inputs`; otherwise `*ending` says why not.
bool Converse(Controller& controller, std::span<const double> state,
              std::chrono::milliseconds answer_deadline, Deadline run_deadline,
              std::span<double> inputs, Ending* ending) {
  const Deadline deadline =
      std::min(std::chrono::steady_clock::now() + answer_deadline, run_deadline);
  const std::string within = std::to_string(answer_deadline.count()) + " ms.";
  std::string line;
  switch (controller.Converse(state, deadline, &line)) {
    case Exchange::kAnswered:
      break;
    case Exchange::kLateReading:
      *ending = {TrialEnd::kLate, "The controller did not read its input within " + within};
      return false;
    case Exchange::kLate:
      *ending = {TrialEnd::kLate, "The controller did not answer within " + within};
      return false;
    case Exchange::kTooLong:
      *ending = {TrialEnd::kMalformed,
                 "The answer line is longer than " + std::to_string(kAnswerLineCap) + " bytes."};
      return false;
    case Exchange::kClosedInput:
      *ending = {TrialEnd::kControllerExited, "The controller closed its input or exited."};
      return false;
    case Exchange::kClosedOutput:
      *ending = {TrialEnd::kControllerExited, "The controller closed its output or exited."};
      return false;
  }
  AnswerParse answer = ParseAnswerLine(line, inputs.size(), inputs);
  if (answer.verdict == AnswerVerdict::kOk) return true;
  *ending = {
      answer.verdict == AnswerVerdict::kNonFinite ? TrialEnd::kNonFinite : TrialEnd::kMalformed,
      std::move(answer.detail)};
  return false;
}

// What stepping a trial gives both ways of running one.
struct Stepped {
  TrialSummary summary;
  TrajectoryRecorder trajectory;
  std::vector<double> tick_seconds;  // when asked for
};

// The trial from plant_init on: the plant is made and initialised with
// `parameters` (a refusal ends here, before any controller exists), then
// `start` makes the controller, then tick after tick until the plant ends
// or the controller does; the controller is ended before this returns.
//
// `run_deadline` bounds the whole trial (Deadline::max(): none): a tick cut
// by it is no ending of the trial but kDeadlineExceeded.
Expected<Stepped> StepTrial(const std::string& plant_name, std::span<const double> parameters,
                            std::chrono::milliseconds answer_deadline, Deadline run_deadline,
                            bool time_ticks, const ControllerStarter& start) {
  Expected<std::unique_ptr<Plant>> created = CreatePlant(plant_name);
  if (!created.ok()) return created.error();
  Plant& plant = **created;
  Expected<int32_t> init = plant.Init(parameters);
  if (!init.ok()) return init.error();
  if (*init != PLANT_OK) {
    return Refusal(
        NotDispatched::kRequest, ErrorCode::kInvalidArgument,
        "The " + plant_name + " plant refused the scenario: " + RefusalText(*init) + ".");
  }
  Expected<double> tick = plant.TickSeconds();
  if (!tick.ok()) return tick.error();
  Expected<double> end = plant.EndSeconds();
  if (!end.ok()) return end.error();
  const double planned_ticks = std::round(*end / *tick);
  if (!(*tick > 0) || !std::isfinite(planned_ticks) || planned_ticks < 1 ||
      planned_ticks > kMaxTicks) {
    return Failure(ErrorCode::kInternal, "The " + plant_name + " plant reports a tick of " +
                                             std::to_string(*tick) + " s and an end of " +
                                             std::to_string(*end) +
                                             " s; the runner cannot run that.");
  }

  const PlantShape shape = plant.shape();
  Stepped stepped{{},
                  TrajectoryRecorder(static_cast<size_t>(shape.state_width),
                                     static_cast<size_t>(shape.input_count),
                                     static_cast<size_t>(planned_ticks)),
                  {}};
  std::vector<double> state(static_cast<size_t>(shape.state_width));
  std::vector<double> inputs(static_cast<size_t>(shape.input_count));
  std::vector<double> applied(inputs.size());

  Expected<std::unique_ptr<Controller>> controller = start();
  if (!controller.ok()) return controller.error();

  Ending ending = {TrialEnd::kFinished, ""};
  for (;;) {
    const auto tick_start = std::chrono::steady_clock::now();
    PLIMSOLL_RETURN_IF_ERROR(plant.ReadState(state));
    if (!Converse(**controller, state, answer_deadline, run_deadline, inputs, &ending)) {
      if (ending.reason == TrialEnd::kLate && std::chrono::steady_clock::now() >= run_deadline) {
        (*controller)->End();
        return Failure(ErrorCode::kDeadlineExceeded, "The trial ran past its run's deadline.");
      }
      break;
    }
    Expected<int32_t> step = plant.Step(inputs, applied);
    if (!step.ok()) return step.error();
    if (*step < 0) {
      return Failure(ErrorCode::kInternal, "The " + plant_name + " plant's plant_step answered " +
                                               std::to_string(*step) + ".");
    }
    PLIMSOLL_RETURN_IF_ERROR(stepped.trajectory.Append(state, applied));
    if (time_ticks) {
      stepped.tick_seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - tick_start).count());
    }
    if (*step == PLANT_FAILED) {
      ending = {TrialEnd::kFailed, "The plant failed (docs/plants/" + plant_name + ".md)."};
      break;
    }
    if (*step == PLANT_FINISHED) {
      ending = {TrialEnd::kFinished, "The plant reached its end time."};
      break;
    }
  }
  (*controller)->End();

  Expected<int32_t> ticks = plant.Ticks();
  if (!ticks.ok()) return ticks.error();
  Expected<double> score = plant.Score();
  if (!score.ok()) return score.error();
  if (static_cast<size_t>(*ticks) != stepped.trajectory.rows()) {
    return Failure(ErrorCode::kInternal, "The plant counted " + std::to_string(*ticks) +
                                             " ticks; the runner recorded " +
                                             std::to_string(stepped.trajectory.rows()) + ".");
  }
  TrialSummary& summary = stepped.summary;
  summary.plant = plant_name;
  summary.scenario_sha256 = ScenarioDigestHex(parameters);
  summary.ticks = *ticks;
  summary.ended = ending.reason;
  summary.ended_at_seconds = SecondsAt(*ticks, *tick);
  summary.score = *score;
  summary.fingerprint = stepped.trajectory.FingerprintHex();
  summary.trajectory_bytes = stepped.trajectory.byte_size();
  summary.row_doubles = static_cast<int64_t>(stepped.trajectory.row_doubles());
  summary.detail = std::move(ending.detail);
  return stepped;
}

// The bench hook (TrialRequest::tick_times_path): one little-endian float64
// per tick taken, its wall time in seconds.
Status WriteTickTimes(const std::string& path, const std::vector<double>& seconds) {
  base::UniqueFd file(
      open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
  if (!file.valid()) return SystemError("creating the tick times file " + path, errno);
  std::string bytes;
  for (double value : seconds) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
  }
  for (size_t written = 0; written < bytes.size();) {
    const ssize_t wrote = write(file.get(), bytes.data() + written, bytes.size() - written);
    if (wrote < 0 && errno == EINTR) continue;
    if (wrote <= 0) return SystemError("writing the tick times file " + path, errno);
    written += static_cast<size_t>(wrote);
  }
  return Status::Ok();
}

}  // namespace

std::string_view TrialEndName(TrialEnd end) {
  switch (end) {
    case TrialEnd::kFinished:
      return "finished";
    case TrialEnd::kFailed:
      return "failed";
    case TrialEnd::kLate:
      return "late";
    case TrialEnd::kNonFinite:
      return "non_finite";
    case TrialEnd::kMalformed:
      return "malformed";
    case TrialEnd::kControllerExited:
      return "controller_exited";
  }
  return "unknown";
}

nlohmann::json SummaryJson(const TrialSummary& summary) {
  return {
      {"plant", summary.plant},
      {"scenario_sha256", summary.scenario_sha256},
      {"ticks", summary.ticks},
      {"ended", TrialEndName(summary.ended)},
      {"ended_at_seconds", summary.ended_at_seconds},
      {"score", summary.score},
      {"fingerprint", summary.fingerprint},
      {"trajectory_bytes", summary.trajectory_bytes},
      {"row_doubles", summary.row_doubles},
      {"detail", summary.detail},
  };
}

Expected<TrialSummary> RunTrial(const TrialRequest& request) {
  if (request.controller_argv.empty()) {
    return Refusal(NotDispatched::kRequest, ErrorCode::kInvalidArgument,
                   "No controller command was given.");
  }
  if (request.answer_deadline <= std::chrono::milliseconds::zero()) {
    return Refusal(NotDispatched::kRequest, ErrorCode::kInvalidArgument,
                   "The answer deadline must be positive.");
  }
  PLIMSOLL_RETURN_IF_ERROR(PrepareToHoldScenario());
  // No scenario file: the plant's default scenario (nothing to hide).
  Expected<Scenario> scenario = request.scenario_path.empty() ? Expected<Scenario>(Scenario{})
                                                              : TakeScenario(request.scenario_path);
  if (!scenario.ok()) return scenario.error();
  if (scenario->plant && *scenario->plant != request.plant) {
    return Refusal(NotDispatched::kRequest, ErrorCode::kInvalidArgument,
                   "The scenario is for the plant \"" + *scenario->plant + "\", not \"" +
                       request.plant + "\".");
  }

  // The trajectory file is created before the controller starts (so a
  // controller never finds it missing), after the plant accepted the scenario.
  base::UniqueFd trajectory_file;
  const ControllerStarter start = [&]() -> Expected<std::unique_ptr<Controller>> {
    // The scenario file is gone and the plant has accepted the scenario:
    // only now may agent code (the compile of a controller) run.
    if (!request.build_argv.empty()) PLIMSOLL_RETURN_IF_ERROR(RunBuildCommand(request.build_argv));
    trajectory_file.Reset(open(request.trajectory_path.c_str(),
                               O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644));
    if (!trajectory_file.valid()) {
      return Failure(ErrorCode::kFailedPrecondition,
                     "The trajectory file " + request.trajectory_path +
                         " cannot be created: " + std::strerror(errno) + ".");
    }
    Expected<std::unique_ptr<ControllerProcess>> process =
        ControllerProcess::Start(request.controller_argv);
    if (!process.ok()) return process.error();
    return std::unique_ptr<Controller>(std::move(*process));
  };
  Expected<Stepped> stepped =
      StepTrial(request.plant, scenario->parameters, request.answer_deadline, Deadline::max(),
                !request.tick_times_path.empty(), start);
  if (!stepped.ok()) return stepped.error();
  PLIMSOLL_RETURN_IF_ERROR(stepped->trajectory.WriteTo(trajectory_file.get()));
  if (close(trajectory_file.Release()) != 0) return SystemError("closing the trajectory", errno);
  if (!request.tick_times_path.empty()) {
    PLIMSOLL_RETURN_IF_ERROR(WriteTickTimes(request.tick_times_path, stepped->tick_seconds));
  }
  return std::move(stepped->summary);
}

Expected<InProcessTrial> RunTrialInProcess(const std::string& plant,
                                           std::span<const double> parameters,
                                           std::chrono::milliseconds answer_deadline,
                                           Deadline run_deadline, const ControllerStarter& start) {
  if (answer_deadline <= std::chrono::milliseconds::zero()) {
    return Refusal(NotDispatched::kRequest, ErrorCode::kInvalidArgument,
                   "The answer deadline must be positive.");
  }
  Expected<Stepped> stepped =
      StepTrial(plant, parameters, answer_deadline, run_deadline, false, start);
  if (!stepped.ok()) return stepped.error();
  std::span<const double> values = stepped->trajectory.values();
  std::span<const unsigned char> bytes = DoubleBytes(values);
  return InProcessTrial{std::move(stepped->summary), std::string(bytes.begin(), bytes.end())};
}

}  // namespace plimsoll::trial
