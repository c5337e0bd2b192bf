// Module runs (docs/exams.md, "Module runs"): one of the image's models (a
// plant of sims/) evaluated on its own, once per row of parameters, and one
// result row each. No controller: every input is held at 0, so a row is the
// model's free response from the state its parameters set (a parameter
// study, a sweep of initial conditions).
//
// The spec is the request's `module` payload, as JSON:
//   {"model": "cartpole", "rows": [[0, 0, 0.05, 0], []], "end_time": 5, "step": 0.01}
// `rows`: each the model's full parameter list, or [] for its default
// scenario; at most kMaxModuleRows rows. `end_time`: seconds of model time,
// a whole number of the model's ticks, at most its own end. `step`: the
// model's tick (plant_tick_seconds), stated by the caller so that a study
// never silently runs on another time base.
//
// Each row's result: how it ended ("finished": the model reached its own
// end; "failed": it failed, e.g. the pole fell; "end_time": end_time was
// reached first), ticks taken, the model time, the score, the final state;
// or the row's own error (its parameters refused, the model trapped), the
// other rows going on. As JSON lines (ModuleRowJson), one per row, in row
// order: what plimsoll-model writes and the daemon returns as an artifact.
//
// Usage:
//   Expected<ModuleSpec> spec = ParseModuleSpec(text);
//   Expected<std::vector<ModuleRowResult>> rows = EvaluateModule(*spec);
//   for (const ModuleRowResult& row : *rows) out << ModuleRowJson(row) << '\n';
#ifndef PLIMSOLL_TRIAL_MODULE_RUN_H_
#define PLIMSOLL_TRIAL_MODULE_RUN_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::trial {

inline constexpr size_t kMaxModuleRows = 10000;
// The largest spec file plimsoll-model reads.
inline constexpr size_t kModuleSpecFileCap = 4 * 1024 * 1024;

struct ModuleSpec {
  std::string model;
  std::vector<std::vector<double>> rows;
  double end_time = 0;
  double step = 0;
};

struct ModuleRowResult {
  size_t row = 0;
  std::string error;  // non-empty: the row did not run (the rest is unset)
  std::string ended;  // "finished", "failed" or "end_time"
  int64_t ticks = 0;
  double time = 0;  // ticks × step
  double score = 0;
  std::vector<double> final_state;
};

// Parses the JSON above. Errors (kInvalidArgument, one sentence): not that
// JSON, an unknown key, a non-finite or non-positive end_time or step, a
// non-number in a row, more than kMaxModuleRows rows or a row longer than
// 256 values.
Expected<ModuleSpec> ParseModuleSpec(std::string_view json);

// Evaluates every row. Errors (kInvalidArgument) for the whole spec: an
// unknown model, a step that is not the model's tick, an end_time that is
// not a whole number of ticks or is past the model's end; kInternal when
// the model module itself failed to start; kDeadlineExceeded when
// `deadline` passed before the last row (checked between rows). A row's own
// problems are in its result.
Expected<std::vector<ModuleRowResult>> EvaluateModule(
    const ModuleSpec& spec,
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

// One row as one line of JSON (no newline): {"row": 0, "ended": ...,
// "ticks": ..., "time": ..., "score": ..., "final_state": [...]} or
// {"row": 3, "error": "..."}. Numbers are shortest round-trip decimals.
std::string ModuleRowJson(const ModuleRowResult& row);

// What plimsoll-model writes: every row's line (each ending '\n') and its
// one summary line ({"model", "rows", "row_errors", "rows_sha256"}, ending
// '\n'), rows_sha256 being the SHA-256 of `rows_jsonl`.
struct ModuleOutput {
  std::string rows_jsonl;
  std::string summary_line;
};
ModuleOutput FormatModuleOutput(const ModuleSpec& spec, const std::vector<ModuleRowResult>& rows);

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_MODULE_RUN_H_
