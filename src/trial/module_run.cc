#include "trial/module_run.h"

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>

#include "plant_abi.h"
#include "trial/plant_registry.h"
#include "trial/sha256.h"

namespace plimsoll::trial {
namespace {

Error Refused(std::string message) {
  return Error(ErrorCode::kInvalidArgument, std::move(message));
}

// Whether `value` is `tick` × a whole number n ≥ 1 (to 1e-9 relative); n.
int64_t WholeTicks(double value, double tick) {
  const double ticks = std::round(value / tick);
  if (ticks < 1 || ticks > 1e9 || std::fabs(ticks * tick - value) > 1e-9 * value) return -1;
  return static_cast<int64_t>(ticks);
}

ModuleRowResult RowError(size_t row, std::string message) {
  ModuleRowResult result;
  result.row = row;
  result.error = std::move(message);
  return result;
}

// One row: init with its parameters, then `ticks` steps with zero inputs
// (fewer if the model ends first).
ModuleRowResult EvaluateRow(Plant& plant, size_t row, const std::vector<double>& parameters,
                            int64_t ticks, double step) {
  Expected<int32_t> init = plant.Init(parameters);
  if (!init.ok()) return RowError(row, init.error().message());
  if (*init != PLANT_OK) {
    return RowError(row, "The model refused the row's parameters (" +
                             std::string(*init == PLANT_ERROR_COUNT        ? "wrong count"
                                         : *init == PLANT_ERROR_NOT_FINITE ? "not finite"
                                                                           : "out of range") +
                             ").");
  }
  const PlantShape& shape = plant.shape();
  std::vector<double> inputs(static_cast<size_t>(shape.input_count), 0.0);
  std::vector<double> applied(inputs.size());
  ModuleRowResult result;
  result.row = row;
  result.ended = "end_time";
  for (int64_t tick = 0; tick < ticks; ++tick) {
    Expected<int32_t> stepped = plant.Step(inputs, applied);
    if (!stepped.ok()) return RowError(row, stepped.error().message());
    if (*stepped < 0) return RowError(row, "The model refused a step.");
    result.ticks = tick + 1;
    if (*stepped == PLANT_FAILED) {
      result.ended = "failed";
      break;
    }
    if (*stepped == PLANT_FINISHED) {
      result.ended = "finished";
      break;
    }
  }
  result.time = static_cast<double>(result.ticks) * step;
  result.final_state.assign(static_cast<size_t>(shape.state_width), 0.0);
  Status read = plant.ReadState(result.final_state);
  Expected<double> score = plant.Score();
  if (!read.ok()) return RowError(row, read.error().message());
  if (!score.ok()) return RowError(row, score.error().message());
  result.score = *score;
  return result;
}

}  // namespace

Expected<ModuleSpec> ParseModuleSpec(std::string_view json) {
  if (json.size() > kModuleSpecFileCap) {
    return Refused("The module spec is larger than " + std::to_string(kModuleSpecFileCap) +
                   " bytes.");
  }
  const nlohmann::json document = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded() || !document.is_object()) {
    return Refused("The module spec is not a JSON object.");
  }
  ModuleSpec spec;
  bool has_model = false, has_rows = false, has_end = false, has_step = false;
  for (const auto& [key, value] : document.items()) {
    if (key == "model") {
      if (!value.is_string()) return Refused("\"model\" is not a string.");
      spec.model = value.get<std::string>();
      has_model = true;
    } else if (key == "rows") {
      if (!value.is_array()) return Refused("\"rows\" is not a list.");
      if (value.size() > kMaxModuleRows) {
        return Refused("There are more than " + std::to_string(kMaxModuleRows) + " rows.");
      }
      for (const nlohmann::json& row : value) {
        if (!row.is_array() || row.size() > PLANT_BUFFER_DOUBLES) {
          return Refused("A row is not a list of at most " + std::to_string(PLANT_BUFFER_DOUBLES) +
                         " numbers.");
        }
        std::vector<double>& parameters = spec.rows.emplace_back();
        for (const nlohmann::json& number : row) {
          if (!number.is_number()) return Refused("A row holds something that is not a number.");
          parameters.push_back(number.get<double>());
        }
      }
      has_rows = true;
    } else if (key == "end_time" || key == "step") {
      if (!value.is_number()) return Refused("\"" + key + "\" is not a number.");
      const double number = value.get<double>();
      if (!std::isfinite(number) || number <= 0) {
        return Refused("\"" + key + "\" is not a positive number.");
      }
      (key == "step" ? spec.step : spec.end_time) = number;
      (key == "step" ? has_step : has_end) = true;
    } else {
      return Refused("The module spec has an unknown key \"" + key + "\".");
    }
  }
  if (!has_model || !has_rows || !has_end || !has_step) {
    return Refused("The module spec needs \"model\", \"rows\", \"end_time\" and \"step\".");
  }
  return spec;
}

Expected<std::vector<ModuleRowResult>> EvaluateModule(
    const ModuleSpec& spec, std::chrono::steady_clock::time_point deadline) {
  Expected<std::unique_ptr<Plant>> plant = CreatePlant(spec.model);
  if (!plant.ok()) return Refused(plant.error().message());
  Expected<double> tick = (*plant)->TickSeconds();
  Expected<double> end = (*plant)->EndSeconds();
  if (!tick.ok()) return tick.error();
  if (!end.ok()) return end.error();
  char tick_text[32];
  std::snprintf(tick_text, sizeof tick_text, "%.17g", *tick);
  if (std::fabs(spec.step - *tick) > 1e-12 * *tick) {
    return Refused("step must be the model's tick, " + std::string(tick_text) + " s (" +
                   spec.model + ").");
  }
  const int64_t ticks = WholeTicks(spec.end_time, *tick);
  if (ticks < 0 || spec.end_time > *end * (1 + 1e-12)) {
    return Refused("end_time must be a whole number of the model's " + std::string(tick_text) +
                   " s ticks, at most its end.");
  }
  std::vector<ModuleRowResult> results;
  results.reserve(spec.rows.size());
  for (size_t row = 0; row < spec.rows.size(); ++row) {
    if (std::chrono::steady_clock::now() > deadline) {
      return Error(ErrorCode::kDeadlineExceeded,
                   "The deadline passed after " + std::to_string(row) + " rows.");
    }
    results.push_back(EvaluateRow(**plant, row, spec.rows[row], ticks, *tick));
  }
  return results;
}

std::string ModuleRowJson(const ModuleRowResult& row) {
  nlohmann::ordered_json line;
  line["row"] = row.row;
  if (!row.error.empty()) {
    line["error"] = row.error;
    return line.dump();
  }
  line["ended"] = row.ended;
  line["ticks"] = row.ticks;
  line["time"] = row.time;
  line["score"] = row.score;
  line["final_state"] = row.final_state;
  return line.dump();
}

ModuleOutput FormatModuleOutput(const ModuleSpec& spec, const std::vector<ModuleRowResult>& rows) {
  ModuleOutput output;
  size_t row_errors = 0;
  for (const ModuleRowResult& row : rows) {
    output.rows_jsonl += ModuleRowJson(row) + "\n";
    if (!row.error.empty()) ++row_errors;
  }
  nlohmann::ordered_json summary;
  summary["model"] = spec.model;
  summary["rows"] = rows.size();
  summary["row_errors"] = row_errors;
  summary["rows_sha256"] = Sha256Hex(
      {reinterpret_cast<const unsigned char*>(output.rows_jsonl.data()), output.rows_jsonl.size()});
  output.summary_line = summary.dump() + "\n";
  return output;
}

}  // namespace plimsoll::trial
