// Job and Report as JSON (see protocol.h). Decoding is strict: every field
// is required, unknown keys are refused, numbers are range-checked and paths
// are checked again, because the agent must not trust the channel more than
// the host trusts the agent.
#include "guest/protocol.h"

#include <initializer_list>
#include <string>

#include "guest/displays.h"
#include "wire/base64.h"
#include "wire/json_reader.h"

namespace plimsoll::guest {
namespace {

using wire::FieldReader;
using wire::Json;
using wire::Problem;

std::string Dump(const Json& value) {
  // Paths and argv are checked UTF-8 on the host; `replace` only guards
  // against a throw if something slipped through.
  return value.dump(-1, ' ', false, Json::error_handler_t::replace);
}

Json Strings(const std::vector<std::string>& items) {
  Json array = Json::array();
  for (const auto& item : items) array.push_back(item);
  return array;
}

std::vector<std::string> ReadStrings(const Json* array, std::string_view path, Problem& problem,
                                     size_t max_items) {
  std::vector<std::string> out;
  if (array == nullptr) return out;
  if (array->size() > max_items) {
    problem.Set(std::string(path) + " has more than " + std::to_string(max_items) + " items.");
    return out;
  }
  for (size_t i = 0; i < array->size(); ++i) {
    out.push_back(wire::ReadString((*array)[i], wire::IndexPath(path, i), problem));
  }
  return out;
}

std::string ReadBase64(FieldReader& fields, std::string_view key, Problem& problem) {
  std::string text = fields.String(key, wire::kRequired);
  if (problem) return {};
  auto bytes = wire::DecodeBase64(text);
  if (!bytes) {
    problem.Set(fields.PathOf(key) + " is not canonical base64.");
    return {};
  }
  return *std::move(bytes);
}

int64_t ReadBounded(FieldReader& fields, std::string_view key, int64_t low, int64_t high,
                    Problem& problem) {
  int64_t value = fields.Integer(key, wire::kRequired);
  if (!problem && (value < low || value > high)) {
    problem.Set(fields.PathOf(key) + " is " + std::to_string(value) + "; it must be between " +
                std::to_string(low) + " and " + std::to_string(high) + ".");
  }
  return value;
}

void CheckVersion(FieldReader& fields, Problem& problem) {
  int64_t version = fields.Integer("version", wire::kRequired);
  if (!problem && version != kJobVersion) {
    problem.Set("The message has version " + std::to_string(version) + "; this build speaks " +
                std::to_string(kJobVersion) + ".");
  }
}

const Json* RequireObject(const Json& value, std::string_view what, Problem& problem) {
  if (!value.is_object()) {
    problem.Set(std::string(what) + " is " + std::string(wire::DescribeType(value)) +
                ", not an object.");
    return nullptr;
  }
  return &value;
}

Error Malformed(std::string_view what, const Problem& problem) {
  return Failure(ErrorCode::kDataLoss,
                 "The " + std::string(what) + " is malformed: " + *problem.message);
}

Json EncodeStep(const StepResult& step) {
  return Json{{"command", Strings(step.command)},
              {"exit_code", step.exit_code},
              {"timed_out", step.timed_out},
              {"stdout", wire::EncodeBase64(step.stdout_bytes)},
              {"stderr", wire::EncodeBase64(step.stderr_bytes)},
              {"stdout_truncated", step.stdout_truncated},
              {"stderr_truncated", step.stderr_truncated},
              {"duration_ms", step.duration_ms}};
}

StepResult DecodeStep(const Json& value, const std::string& path, Problem& problem) {
  StepResult step;
  if (!RequireObject(value, path, problem)) return step;
  FieldReader fields(value, path, problem, /*null_is_absent=*/false);
  fields.RejectUnknown({"command", "exit_code", "timed_out", "stdout", "stderr", "stdout_truncated",
                        "stderr_truncated", "duration_ms"});
  step.command = ReadStrings(fields.Array("command", wire::kRequired), fields.PathOf("command"),
                             problem, 1 << 16);
  step.exit_code = ReadBounded(fields, "exit_code", 0, 255, problem);
  step.timed_out = fields.Boolean("timed_out", wire::kRequired);
  step.stdout_bytes = ReadBase64(fields, "stdout", problem);
  step.stderr_bytes = ReadBase64(fields, "stderr", problem);
  step.stdout_truncated = fields.Boolean("stdout_truncated", wire::kRequired);
  step.stderr_truncated = fields.Boolean("stderr_truncated", wire::kRequired);
  step.duration_ms = ReadBounded(fields, "duration_ms", 0, int64_t{1} << 40, problem);
  return step;
}

bool IsCellLanguage(std::string_view language) {
  return language == "javascript" || language == "python";
}

}  // namespace

std::vector<std::string> CellCommand(std::string_view language) {
  return {"(cell)", std::string(language)};
}

std::string EncodeJob(const Job& job) {
  Json files = Json::array();
  for (const auto& file : job.files) {
    files.push_back(Json{{"path", file.path}, {"content", wire::EncodeBase64(file.content)}});
  }
  Json steps = Json::array();
  for (const auto& step : job.steps) steps.push_back(Strings(step));
  Json message{{"version", kJobVersion},
               {"files", std::move(files)},
               {"steps", std::move(steps)},
               {"artifacts", Strings(job.artifacts)},
               {"timeout_ms", job.timeout_ms},
               {"output_cap_bytes", job.output_cap_bytes},
               {"max_artifact_bytes", job.max_artifact_bytes},
               {"nofile", job.nofile},
               {"fsize_bytes", job.fsize_bytes},
               {"nproc", job.nproc},
               {"environment", Strings(job.environment)},
               {"report_key", wire::EncodeBase64(job.report_key)}};
  if (!job.seccomp_filter.empty()) {
    message["seccomp_filter"] = wire::EncodeBase64(job.seccomp_filter);
  }
  if (job.host_calls) message["host_calls"] = true;
  if (job.cell) {
    message["cell"] = Json{{"language", job.cell->language},
                           {"code", job.cell->code},
                           {"value_cap_bytes", job.cell->value_cap_bytes},
                           {"number", job.cell->number},
                           {"memory_bytes", job.cell->memory_bytes}};
  }
  return Dump(message);
}

Expected<Job> DecodeJob(std::string_view bytes) {
  Problem problem;
  auto parsed = wire::ParseJsonBody(bytes, problem);
  if (!parsed) return Malformed("job", problem);
  Job job;
  if (!RequireObject(*parsed, "The job", problem)) return Malformed("job", problem);
  FieldReader fields(*parsed, "", problem, /*null_is_absent=*/false);
  fields.RejectUnknown({"version", "files", "steps", "artifacts", "timeout_ms", "output_cap_bytes",
                        "max_artifact_bytes", "nofile", "fsize_bytes", "nproc", "environment",
                        "report_key", "seccomp_filter", "cell", "host_calls"});
  CheckVersion(fields, problem);

  if (const Json* files = fields.Array("files", wire::kRequired)) {
    if (files->size() > kMaxJobFiles) problem.Set("The job has too many files.");
    for (size_t i = 0; i < files->size() && !problem; ++i) {
      std::string path = wire::IndexPath("files", i);
      if (!RequireObject((*files)[i], path, problem)) break;
      FieldReader file_fields((*files)[i], path, problem, false);
      file_fields.RejectUnknown({"path", "content"});
      ProjectFile file;
      file.path = file_fields.String("path", wire::kRequired);
      file.content = ReadBase64(file_fields, "content", problem);
      if (!problem) {
        if (auto bad = CheckRelativePath(file.path)) problem.Set(path + ".path " + *bad);
      }
      job.files.push_back(std::move(file));
    }
  }
  if (const Json* steps = fields.Array("steps", wire::kRequired)) {
    if (steps->size() > kMaxJobSteps) problem.Set("The job has too many steps.");
    for (size_t i = 0; i < steps->size() && !problem; ++i) {
      std::string path = wire::IndexPath("steps", i);
      if (!(*steps)[i].is_array()) {
        problem.Set(path + " is not an array.");
        break;
      }
      auto argv = ReadStrings(&(*steps)[i], path, problem, 1 << 16);
      if (!problem && (argv.empty() || argv.front().empty())) {
        problem.Set(path + " has no program.");
      }
      for (const auto& argument : argv) {
        if (argument.find('\0') != std::string::npos) problem.Set(path + " contains a NUL byte.");
      }
      job.steps.push_back(std::move(argv));
    }
  }
  job.artifacts =
      ReadStrings(fields.Array("artifacts", wire::kRequired), "artifacts", problem, kMaxJobFiles);
  for (size_t i = 0; i < job.artifacts.size() && !problem; ++i) {
    if (auto bad = CheckRelativePath(job.artifacts[i])) {
      problem.Set(wire::IndexPath("artifacts", i) + " " + *bad);
    }
  }
  job.timeout_ms = ReadBounded(fields, "timeout_ms", 1, kMaxJobTimeoutMs, problem);
  job.output_cap_bytes = ReadBounded(fields, "output_cap_bytes", 0, kMaxJobOutputCapBytes, problem);
  job.max_artifact_bytes =
      ReadBounded(fields, "max_artifact_bytes", 0, kMaxJobArtifactBytes, problem);
  job.nofile = ReadBounded(fields, "nofile", 16, 1 << 20, problem);
  job.fsize_bytes = ReadBounded(fields, "fsize_bytes", 0, int64_t{1} << 40, problem);
  job.nproc = ReadBounded(fields, "nproc", 0, 1 << 22, problem);
  job.environment =
      ReadStrings(fields.Array("environment", wire::kRequired), "environment", problem, 1024);
  for (const auto& entry : job.environment) {
    size_t equals = entry.find('=');
    if (equals == 0 || equals == std::string::npos || entry.find('\0') != std::string::npos) {
      problem.Set("An environment entry is not KEY=VALUE.");
    }
  }
  job.report_key = ReadBase64(fields, "report_key", problem);
  if (!problem && job.report_key.size() != kReportKeyBytes) {
    problem.Set("report_key is " + std::to_string(job.report_key.size()) + " bytes, not " +
                std::to_string(kReportKeyBytes) + ".");
  }
  if (!problem && parsed->contains("seccomp_filter")) {
    job.seccomp_filter = ReadBase64(fields, "seccomp_filter", problem);
    if (!problem && (job.seccomp_filter.empty() || job.seccomp_filter.size() % 8 != 0 ||
                     job.seccomp_filter.size() > kMaxSeccompFilterBytes)) {
      problem.Set("seccomp_filter is not 1 to 4096 BPF instructions of 8 bytes.");
    }
  }
  if (!problem && parsed->contains("host_calls")) {
    job.host_calls = fields.Boolean("host_calls", wire::kRequired);
    if (!problem && !job.host_calls) problem.Set("host_calls is sent only when true.");
  }
  if (const Json* cell = problem ? nullptr : fields.Object("cell", wire::kOptional)) {
    FieldReader cell_fields(*cell, "cell", problem, false);
    cell_fields.RejectUnknown({"language", "code", "value_cap_bytes", "number", "memory_bytes"});
    JobCell read;
    read.language = cell_fields.String("language", wire::kRequired);
    read.code = cell_fields.String("code", wire::kRequired);
    read.value_cap_bytes =
        ReadBounded(cell_fields, "value_cap_bytes", 0, kMaxCellValueCapBytes, problem);
    read.number = ReadBounded(cell_fields, "number", 0, int64_t{1} << 40, problem);
    read.memory_bytes = ReadBounded(cell_fields, "memory_bytes", 0, int64_t{1} << 40, problem);
    if (!problem && !IsCellLanguage(read.language)) {
      problem.Set("cell.language \"" + read.language + "\" is not javascript or python.");
    }
    if (!problem && read.code.size() > kMaxCellCodeBytes) problem.Set("cell.code is too long.");
    if (!problem && (!job.steps.empty() || !job.files.empty() || !job.artifacts.empty())) {
      problem.Set("A job with a cell has no files, steps or artifacts.");
    }
    job.cell = std::move(read);
  }
  if (problem) return Malformed("job", problem);
  return job;
}

std::string EncodeReport(const Report& report) {
  Json steps = Json::array();
  for (const auto& step : report.steps) steps.push_back(EncodeStep(step));
  Json artifacts = Json::array();
  for (const auto& artifact : report.artifacts) {
    artifacts.push_back(Json{{"path", artifact.path},
                             {"content", wire::EncodeBase64(artifact.content)},
                             {"truncated", artifact.truncated}});
  }
  Json message{{"version", kJobVersion},
               {"outcome", std::string(ProjectOutcomeName(report.outcome))},
               {"steps", std::move(steps)},
               {"artifacts", std::move(artifacts)},
               {"detail", report.detail}};
  if (report.cell) {
    Json cell{{"value_truncated", report.cell->value_truncated},
              {"interpreter_started", report.cell->interpreter_started},
              {"state_kept", report.cell->state_kept}};
    if (report.cell->value) cell["value"] = *report.cell->value;
    message["cell"] = std::move(cell);
  }
  if (report.interpreters) message["interpreters"] = Strings(*report.interpreters);
  if (!report.displays.empty()) {
    Json displays = Json::array();
    for (const Display& display : report.displays) {
      displays.push_back(Json{{"mime", display.mime}, {"data", wire::EncodeBase64(display.data)}});
    }
    message["displays"] = std::move(displays);
  }
  if (report.displays_truncated) message["displays_truncated"] = true;
  return Dump(message);
}

Expected<Report> DecodeReport(std::string_view bytes) {
  Problem problem;
  auto parsed = wire::ParseJsonBody(bytes, problem);
  if (!parsed) return Malformed("report", problem);
  Report report;
  if (!RequireObject(*parsed, "The report", problem)) return Malformed("report", problem);
  FieldReader fields(*parsed, "", problem, /*null_is_absent=*/false);
  fields.RejectUnknown({"version", "outcome", "steps", "artifacts", "detail", "cell",
                        "interpreters", "displays", "displays_truncated"});
  CheckVersion(fields, problem);
  std::string outcome = fields.String("outcome", wire::kRequired);
  if (!problem) {
    auto parsed_outcome = ParseProjectOutcome(outcome);
    // The agent cannot claim a protocol error: only the host decides that.
    if (!parsed_outcome || *parsed_outcome == ProjectOutcome::kProtocolError) {
      problem.Set("outcome \"" + outcome + "\" is not one the agent may report.");
    } else {
      report.outcome = *parsed_outcome;
    }
  }
  if (const Json* steps = fields.Array("steps", wire::kRequired)) {
    if (steps->size() > kMaxJobSteps) problem.Set("The report has too many steps.");
    for (size_t i = 0; i < steps->size() && !problem; ++i) {
      report.steps.push_back(DecodeStep((*steps)[i], wire::IndexPath("steps", i), problem));
    }
  }
  if (const Json* artifacts = fields.Array("artifacts", wire::kRequired)) {
    if (artifacts->size() > kMaxJobFiles) problem.Set("The report has too many artifacts.");
    for (size_t i = 0; i < artifacts->size() && !problem; ++i) {
      std::string path = wire::IndexPath("artifacts", i);
      if (!RequireObject((*artifacts)[i], path, problem)) break;
      FieldReader artifact_fields((*artifacts)[i], path, problem, false);
      artifact_fields.RejectUnknown({"path", "content", "truncated"});
      Artifact artifact;
      artifact.path = artifact_fields.String("path", wire::kRequired);
      artifact.content = ReadBase64(artifact_fields, "content", problem);
      artifact.truncated = artifact_fields.Boolean("truncated", wire::kRequired);
      if (!problem) {
        if (auto bad = CheckRelativePath(artifact.path)) problem.Set(path + ".path " + *bad);
      }
      report.artifacts.push_back(std::move(artifact));
    }
  }
  report.detail = fields.String("detail", wire::kRequired);
  if (const Json* cell = problem ? nullptr : fields.Object("cell", wire::kOptional)) {
    FieldReader cell_fields(*cell, "cell", problem, false);
    cell_fields.RejectUnknown({"value", "value_truncated", "interpreter_started", "state_kept"});
    ReportCell read;
    if (cell->contains("value")) read.value = cell_fields.String("value", wire::kRequired);
    read.value_truncated = cell_fields.Boolean("value_truncated", wire::kRequired);
    read.interpreter_started = cell_fields.Boolean("interpreter_started", wire::kRequired);
    read.state_kept = cell_fields.Boolean("state_kept", wire::kRequired);
    report.cell = std::move(read);
  }
  if (const Json* alive = problem ? nullptr : fields.Array("interpreters", wire::kOptional)) {
    report.interpreters = ReadStrings(alive, "interpreters", problem, 2);
    for (const std::string& language : *report.interpreters) {
      if (!problem && !IsCellLanguage(language)) {
        problem.Set("interpreters names \"" + language + "\", not javascript or python.");
      }
    }
  }
  if (const Json* displays = problem ? nullptr : fields.Array("displays", wire::kOptional)) {
    if (displays->empty() || displays->size() > kMaxDisplays) {
      problem.Set("displays has " + std::to_string(displays->size()) + " entries; 1 to " +
                  std::to_string(kMaxDisplays) + " when present.");
    }
    for (size_t i = 0; i < displays->size() && !problem; ++i) {
      std::string path = wire::IndexPath("displays", i);
      if (!RequireObject((*displays)[i], path, problem)) break;
      FieldReader display_fields((*displays)[i], path, problem, false);
      display_fields.RejectUnknown({"mime", "data"});
      Display display;
      display.mime = display_fields.String("mime", wire::kRequired);
      display.data = ReadBase64(display_fields, "data", problem);
      if (!problem && !IsDisplayMime(display.mime)) problem.Set(path + ".mime is malformed.");
      report.displays.push_back(std::move(display));
    }
  }
  if (!problem && parsed->contains("displays_truncated")) {
    report.displays_truncated = fields.Boolean("displays_truncated", wire::kRequired);
  }
  if (problem) return Malformed("report", problem);
  return report;
}

}  // namespace plimsoll::guest
