// Host side of the protocol: a Request becomes a Job, a Report fills a
// Result (see protocol.h).
#include <algorithm>
#include <string>

#include "guest/displays.h"
#include "guest/protocol.h"
#include "plimsoll/request.h"

namespace plimsoll::guest {
namespace {

// qjs appends "qjs: <stream> truncated at N bytes\n" to its stderr when it
// cut a stream. When the agent flagged the same truncation itself, the note
// says nothing new and would make the guest's stderr differ from the
// embedded engine's.
void DropQjsNote(std::string_view stream, bool flagged, std::string& stderr_bytes) {
  if (!flagged) return;
  std::string prefix = "qjs: " + std::string(stream) + " truncated at ";
  if (stderr_bytes.empty() || stderr_bytes.back() != '\n') return;
  size_t line_start = stderr_bytes.rfind('\n', stderr_bytes.size() - 2);
  line_start = line_start == std::string::npos ? 0 : line_start + 1;
  std::string_view line(stderr_bytes.data() + line_start, stderr_bytes.size() - line_start);
  if (line.substr(0, prefix.size()) != prefix) return;
  std::string_view rest = line.substr(prefix.size());
  if (rest.size() < 8 || rest.substr(rest.size() - 7) != " bytes\n") return;
  for (char c : rest.substr(0, rest.size() - 7)) {
    if (c < '0' || c > '9') return;
  }
  stderr_bytes.erase(line_start);
}

}  // namespace

Expected<Job> JobFromRequest(const Request& request, const Limits& limits, std::string report_key) {
  if (report_key.size() != kReportKeyBytes) {
    return Failure(ErrorCode::kInternal,
                   "The report key must be " + std::to_string(kReportKeyBytes) + " bytes long.");
  }
  Job job;
  // Above the protocol's bounds the agent would refuse the job; truncation
  // stays flagged, so clamping is honest (providers check at startup).
  job.output_cap_bytes = std::clamp<int64_t>(limits.output_cap_bytes, 0, kMaxJobOutputCapBytes);
  job.max_artifact_bytes = std::clamp<int64_t>(limits.max_artifact_bytes, 0, kMaxJobArtifactBytes);
  job.fsize_bytes = limits.work_bytes;
  job.report_key = std::move(report_key);
  auto kind = request.kind();
  if (!kind) {
    return Refusal(NotDispatched::kRequest, "The request must carry exactly one payload.");
  }
  switch (*kind) {
    case PayloadKind::kJavascript: {
      const int64_t timeout = ResolvedTimeoutMs(request, limits);
      job.files.push_back({"main.js", request.javascript->code});
      job.steps.push_back({kQjsPath, "--timeout-ms", std::to_string(timeout), "--output-cap",
                           std::to_string(job.output_cap_bytes + 1), "main.js"});
      job.timeout_ms = timeout + kJavascriptGraceMs;
      break;
    }
    case PayloadKind::kPython:
      job.files.push_back({"main.py", request.python->code});
      job.steps.push_back({"python3", "main.py"});
      job.timeout_ms = ResolvedTimeoutMs(request, limits);
      break;
    case PayloadKind::kProject:
      job.files = request.project->files;
      job.steps = request.project->steps;
      job.artifacts = request.project->artifacts;
      job.timeout_ms = ResolvedTimeoutMs(request, limits);
      break;
    case PayloadKind::kModule:
      // Sandbox::Run dispatches a module as its project (wire/module_project.h):
      // a module never reaches a provider.
      return Failure(ErrorCode::kInternal,
                     "A module payload reached the guest job builder; Sandbox::Run dispatches "
                     "modules as projects.");
    case PayloadKind::kCell: {
      const CellPayload& cell = *request.cell;
      const int64_t timeout = ResolvedTimeoutMs(request, limits);
      JobCell job_cell;
      job_cell.language = cell.language;
      job_cell.code = cell.code;
      // As the embedded engine does: the value is held to the output cap.
      job_cell.value_cap_bytes =
          std::clamp<int64_t>(limits.output_cap_bytes, 0, kMaxCellValueCapBytes);
      job.cell = std::move(job_cell);
      job.timeout_ms = cell.language == "javascript" ? timeout + kJavascriptGraceMs : timeout;
      break;
    }
  }
  return job;
}

void FillResult(const Request& request, const Report& report, Result* result) {
  auto kind = request.kind().value_or(PayloadKind::kProject);
  result->kind = kind;
  result->displays = report.displays;
  result->displays_truncated = report.displays_truncated;
  MeasureDisplays(result->displays);
  if (kind == PayloadKind::kCell) {
    // A cell that could not reach its interpreter kept nothing.
    result->cell = report.cell
                       ? CellResult{report.cell->value, report.cell->value_truncated,
                                    report.cell->interpreter_started, report.cell->state_kept}
                       : CellResult{};
  }
  if (kind == PayloadKind::kProject) {
    result->outcome = report.outcome;
    result->steps = report.steps;
    result->artifacts = report.artifacts;
    result->timed_out = report.outcome == ProjectOutcome::kTimedOut;
    if (!report.steps.empty()) {
      const StepResult& last = report.steps.back();
      result->exit_code = last.exit_code;
      result->stdout_bytes = last.stdout_bytes;
      result->stderr_bytes = last.stderr_bytes;
      result->stdout_truncated = last.stdout_truncated;
      result->stderr_truncated = last.stderr_truncated;
    } else {
      result->exit_code = report.outcome == ProjectOutcome::kCompleted ? 0 : kExitNotFound;
      result->stdout_bytes.clear();
      result->stderr_bytes.clear();
    }
    return;
  }
  if (report.steps.empty()) {
    result->exit_code = kExitNotFound;
    result->timed_out = false;
    result->stdout_bytes.clear();
    result->stderr_bytes = "plimsoll-guest: " + report.detail;
    if (!result->stderr_bytes.empty() && result->stderr_bytes.back() != '\n') {
      result->stderr_bytes.push_back('\n');
    }
    result->stdout_truncated = false;
    result->stderr_truncated = false;
    return;
  }
  const StepResult& step = report.steps.front();
  result->exit_code = step.exit_code;
  result->timed_out = step.timed_out;
  result->stdout_bytes = step.stdout_bytes;
  result->stderr_bytes = step.stderr_bytes;
  result->stdout_truncated = step.stdout_truncated;
  result->stderr_truncated = step.stderr_truncated;
  if (kind == PayloadKind::kJavascript ||
      (kind == PayloadKind::kCell && request.cell->language == "javascript")) {
    // qjs's own deadline ends the run with 124; scripts have no way to exit
    // with a chosen code, so 124 from qjs is always its timeout.
    if (step.exit_code == kExitTimedOut) result->timed_out = true;
    DropQjsNote("stderr", step.stderr_truncated, result->stderr_bytes);
    DropQjsNote("stdout", step.stdout_truncated, result->stderr_bytes);
  }
}

}  // namespace plimsoll::guest
