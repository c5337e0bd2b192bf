#include "guest/agent/agent.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "guest/agent/reaper.h"
#include "guest/agent/step_runner.h"
#include "guest/agent/workdir.h"

namespace plimsoll::guest::agent {
namespace {

size_t Base64Size(size_t bytes) {
  return (bytes + 2) / 3 * 4;
}

}  // namespace

Report RunJob(const Job& job, const AgentOptions& options) {
  Report report;
  Owner owner{options.change_identity, options.uid, options.gid};
  auto work = OpenWorkDirectory(options.work_directory, owner);
  if (!work.ok()) {
    report.outcome = ProjectOutcome::kSetupFailed;
    report.detail = work.error().message() + "\n";
    return report;
  }
  if (auto written = WriteFiles(work->get(), job.files, owner); !written.ok()) {
    report.outcome = ProjectOutcome::kSetupFailed;
    report.detail = written.error().message() + "\n";
    return report;
  }

  StepOptions step_options;
  step_options.work_directory = options.work_directory;
  step_options.change_identity = options.change_identity;
  step_options.uid = options.uid;
  step_options.gid = options.gid;
  step_options.nofile = job.nofile;
  step_options.fsize_bytes = job.fsize_bytes;
  step_options.nproc = job.nproc;
  step_options.seccomp_filter = job.seccomp_filter;
  step_options.environment = StepEnvironment(job.environment, options.work_directory);
  step_options.sweep_scope =
      options.owns_pid_namespace ? SweepScope::kWholeNamespace : SweepScope::kDescendants;

  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(job.timeout_ms);
  // Every sweep and drain ends by then, so the report leaves in time.
  auto wrap_up = deadline + std::chrono::milliseconds(kAgentWrapUpMs);
  int64_t output_left = kTotalOutputBytes;
  for (size_t i = 0; i < job.steps.size(); ++i) {
    step_options.output_cap_bytes = std::min(job.output_cap_bytes, output_left / 2);
    StepRun run = RunStep(job.steps[i], step_options, deadline, wrap_up);
    output_left -=
        static_cast<int64_t>(run.result.stdout_bytes.size() + run.result.stderr_bytes.size());
    report.steps.push_back(std::move(run.result));
    if (run.end == StepEnd::kTimedOut) {
      report.outcome = ProjectOutcome::kTimedOut;
      report.detail += "Step " + std::to_string(i + 1) + " was killed at the deadline (" +
                       std::to_string(job.timeout_ms) + " ms for all steps).\n";
      break;
    }
    if (run.end == StepEnd::kCannotStart) {
      report.outcome = ProjectOutcome::kSetupFailed;
      report.detail +=
          "Step " + std::to_string(i + 1) + " could not start: " + report.steps.back().stderr_bytes;
      break;
    }
    if (report.steps.back().exit_code != 0) break;  // a failing step stops the rest
  }
  // RunStep sweeps after each step; this catches anything that slipped by
  // (bounded by the wrap-up: past it, one round of kills and no waiting).
  KillAndReapAll(-1, step_options.sweep_scope, SweepUntil(wrap_up));

  Collected collected = CollectArtifacts(work->get(), job.artifacts, job.max_artifact_bytes);
  report.artifacts = std::move(collected.artifacts);
  report.detail += collected.notes;
  FitReport(&report);
  return report;
}

void FitReport(Report* report) {
  size_t size = EncodeReport(*report).size();
  if (size <= kMaxFrameBytes) return;
  // Each emptied byte field shrinks the encoding by exactly its base64 size.
  size_t excess = size - kMaxFrameBytes + 1024;  // room for the note below
  size_t saved = 0;
  auto empty = [&](std::string& bytes, bool& truncated) {
    if (saved >= excess || bytes.empty()) return;
    saved += Base64Size(bytes.size());
    bytes.clear();
    truncated = true;
  };
  for (auto it = report->artifacts.rbegin(); it != report->artifacts.rend(); ++it) {
    empty(it->content, it->truncated);
  }
  for (auto& step : report->steps) {
    empty(step.stdout_bytes, step.stdout_truncated);
    empty(step.stderr_bytes, step.stderr_truncated);
  }
  report->detail += "The report was too large for one frame; some contents were emptied.\n";
  if (report->detail.size() > 64 * 1024) report->detail.resize(64 * 1024);
}

}  // namespace plimsoll::guest::agent
