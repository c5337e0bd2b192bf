// One trial (SPEC §10, docs/exams.md): a plant stepped tick by tick against
// a controller process, in this order:
//   1. PrepareToHoldScenario (undumpable; item 3's probe goes there);
//   2. TakeScenario: read the scenario file, delete it;
//   3. create the plant, plant_init with the scenario (a refusal ends here);
//   4. run the build command, if any (build_command.h: it makes the
//      controller, e.g. compiles controller.c; the scenario file is already
//      gone, so no agent code runs while it exists); a failed build ends here;
//   5. create the trajectory file;
//   6. start the controller (the scenario is in no argv and no environment);
//   7. each tick: state line out, answer line in (by the answer deadline),
//      plant_step with the answer, one trajectory row;
//   8. kill and reap the controller, write the trajectory.
//
// The controller is a child process (controller_process.h); RunTrialInProcess
// below runs the same trial with a controller in this process.
//
// Usage:
//   TrialRequest request{.plant = "cartpole", .scenario_path = "/tmp/s.json",
//                        .trajectory_path = "/tmp/t.f64", .controller_argv = {"python3", "c.py"}};
//   Expected<TrialSummary> summary = RunTrial(request);
//   if (summary.ok()) std::puts(SummaryJson(*summary).dump().c_str());
//
// Errors are for trials that could not run (bad request, unreadable or
// refused scenario, a failed build (IsBuildFailure), unwritable trajectory,
// controller not startable, a broken plant module): whatever the controller does, a trial that ran
// is a TrialSummary. Thread-safety: one trial per thread at a time (the plant's RunScope);
// PrepareToHoldScenario changes the whole process.
#ifndef PLIMSOLL_TRIAL_TRIAL_H_
#define PLIMSOLL_TRIAL_TRIAL_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"
#include "trial/controller.h"

namespace plimsoll::trial {

// SPEC §10: a controller has 2 s per tick.
inline constexpr std::chrono::milliseconds kAnswerDeadline{2000};

// Why a trial ended (the summary's "ended").
enum class TrialEnd {
  kFinished,          // the plant's end time was reached (plant: PLANT_FINISHED)
  kFailed,            // the plant failed, e.g. the pole fell (PLANT_FAILED)
  kLate,              // no whole answer line within the answer deadline
  kNonFinite,         // the answer held NaN, an infinity or an overflow
  kMalformed,         // the answer was not exactly the input count of numbers, or too long
  kControllerExited,  // the controller closed its stdout or exited
};

// "finished", "failed", "late", "non_finite", "malformed", "controller_exited".
std::string_view TrialEndName(TrialEnd end);

struct TrialRequest {
  std::string plant;            // a name from plant_registry.h
  std::string scenario_path;    // deleted by the trial; empty: the plant's default scenario
  std::string trajectory_path;  // created or truncated
  std::vector<std::string> controller_argv;
  // Run to its end before the controller starts, after the scenario is
  // taken (step 4 above; build_command.h); empty: none.
  std::vector<std::string> build_argv;
  std::chrono::milliseconds answer_deadline = kAnswerDeadline;  // per tick
  // Benchmarks only: when set, each tick's wall time (state read, the
  // exchange with the controller, the plant's step, the row recorded) is
  // written here as little-endian float64 seconds, one per tick taken.
  std::string tick_times_path;
};

struct TrialSummary {
  std::string plant;
  std::string scenario_sha256;  // ScenarioDigestHex of the parameters
  int64_t ticks = 0;            // ticks taken = trajectory rows
  TrialEnd ended = TrialEnd::kFinished;
  double ended_at_seconds = 0;  // ticks × the plant's tick length
  double score = 0;             // the plant's plant_score() at the end
  std::string fingerprint;      // SHA-256 of the trajectory file's bytes
  uint64_t trajectory_bytes = 0;
  int64_t row_doubles = 0;  // state width + input count
  std::string detail;       // one sentence on how it ended
};

// The summary as one JSON object (docs/exams.md lists the fields).
nlohmann::json SummaryJson(const TrialSummary& summary);

Expected<TrialSummary> RunTrial(const TrialRequest& request);

// Makes the controller of a trial; called once the plant accepted the
// scenario, just before the first tick.
using ControllerStarter = std::function<Expected<std::unique_ptr<Controller>>()>;

struct InProcessTrial {
  TrialSummary summary;
  std::string trajectory;  // the trajectory's bytes (the fingerprint is their SHA-256)
};

// The same trial with the controller `start` makes in this process (the
// embedded tier's way: javascript_controller.h), from plant_init on: the
// parameters are in memory (no file, nothing to delete), and the wall
// between controller and runner is the engine's, not a process boundary,
// so there is no same-user proof to make (PrepareToHoldScenario is for a
// runner with a child controller; it would change this whole process).
// The same tick loop, answer parsing, endings and trajectory as RunTrial:
// the same controller gives the same fingerprint either way.
// `run_deadline` bounds the whole trial (Deadline::max() for none; a child
// process's trial is bounded by whoever runs it): past it, the error is
// kDeadlineExceeded and there is no summary. Other errors as RunTrial's.
Expected<InProcessTrial> RunTrialInProcess(const std::string& plant,
                                           std::span<const double> parameters,
                                           std::chrono::milliseconds answer_deadline,
                                           Deadline run_deadline, const ControllerStarter& start);

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_TRIAL_H_
