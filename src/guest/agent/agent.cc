#include "guest/agent/agent.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "guest/agent/display_collector.h"
#include "guest/agent/reaper.h"
#include "guest/agent/step_runner.h"
#include "guest/agent/workdir.h"

namespace plimsoll::guest::agent {
namespace {

size_t Base64Size(size_t bytes) {
  return (bytes + 2) / 3 * 4;
}

}  // namespace

std::vector<pid_t> SessionState::Spared() const {
  std::vector<pid_t> pids;
  for (const auto& [language, interpreter] : interpreters) {
    if (interpreter->alive()) pids.push_back(interpreter->pid());
  }
  return pids;
}

std::vector<std::string> SessionState::Alive() const {
  std::vector<std::string> languages;  // a std::map iterates sorted
  for (const auto& [language, interpreter] : interpreters) {
    if (interpreter->alive()) languages.push_back(language);
  }
  return languages;
}

void SessionState::FreezeAll() {
  for (auto& [language, interpreter] : interpreters) interpreter->Freeze();
}

StepOptions StepOptionsFor(const Job& job, const AgentOptions& options, bool displays) {
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
  if (displays) {
    step_options.environment.push_back(std::string(kDisplaysEnvironment) + "=" +
                                       options.displays_directory);
  }
  step_options.sweep_scope =
      options.owns_pid_namespace ? SweepScope::kWholeNamespace : SweepScope::kDescendants;
  return step_options;
}

JobDirectories PrepareJobDirectories(const AgentOptions& options) {
  Owner owner{options.change_identity, options.uid, options.gid};
  JobDirectories directories{OpenWorkDirectory(options.work_directory, owner), {}, ""};
  if (!options.displays_directory.empty()) {
    auto ready = PrepareDisplaysDirectory(options.displays_directory, owner);
    if (ready.ok()) {
      directories.displays_directory = std::move(*ready);
    } else {
      directories.displays_note = "No displays: " + ready.error().message() + "\n";
    }
  }
  return directories;
}

Report RunJob(const Job& job, const AgentOptions& options, SessionState* session,
              PrestartedStep* prestarted, JobDirectories* prepared) {
  Report report;
  Owner owner{options.change_identity, options.uid, options.gid};
  auto work = prepared != nullptr ? std::move(prepared->work)
                                  : OpenWorkDirectory(options.work_directory, owner);
  if (!work.ok()) {
    report.outcome = ProjectOutcome::kSetupFailed;
    report.detail = work.error().message() + "\n";
    return report;
  }
  if (job.cell && session == nullptr) {
    report.outcome = ProjectOutcome::kSetupFailed;
    report.detail = "A cell needs a session agent (plimsoll-guest --session).\n";
    return report;
  }

  // The displays directory is the steps' too: when it cannot be made the
  // job runs without it (its displays are lost, nothing else is). It is
  // read, after the steps, through the descriptor it was made with.
  base::UniqueFd displays_directory;
  if (prepared != nullptr) {
    displays_directory = std::move(prepared->displays_directory);
    report.detail += prepared->displays_note;
  } else if (!options.displays_directory.empty()) {
    auto ready = PrepareDisplaysDirectory(options.displays_directory, owner);
    if (ready.ok()) {
      displays_directory = std::move(*ready);
    } else {
      report.detail += "No displays: " + ready.error().message() + "\n";
    }
  }
  const bool displays = displays_directory.valid();

  StepOptions step_options = StepOptionsFor(job, options, displays);
  if (session) step_options.spared = session->Spared();
  // A step started before the job (prestart.h) runs it only when it is
  // exactly the one this job would start; otherwise it goes first.
  bool use_prestarted =
      prestarted != nullptr && session == nullptr && prestarted->Fits(job, step_options);
  if (prestarted != nullptr && !use_prestarted) prestarted->Discard();

  // A prestarted qjs gets the job's one file, its script, on stdin; nothing
  // else of the run could read the file (the step is that qjs alone, whose
  // engine has no file system, and no artifact is asked back: Fits), so it
  // is not written (four system calls less under gVisor's ptrace platform).
  if (!use_prestarted) {
    if (auto written = WriteFiles(work->get(), job.files, owner, session != nullptr);
        !written.ok()) {
      report.outcome = ProjectOutcome::kSetupFailed;
      report.detail += written.error().message() + "\n";
      return report;
    }
  }

  auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(job.timeout_ms);
  // Every sweep and drain ends by then, so the report leaves in time.
  auto wrap_up = deadline + std::chrono::milliseconds(kAgentWrapUpMs);
  if (job.cell) {
    auto& interpreter = session->interpreters[job.cell->language];
    if (!interpreter) interpreter = std::make_unique<KeptInterpreter>(job.cell->language);
    step_options.output_cap_bytes = job.output_cap_bytes;
    CellRun run = interpreter->Run(*job.cell, step_options, deadline, wrap_up);
    report.steps.push_back(std::move(run.result));
    report.cell = run.cell;
    if (run.timed_out) {
      report.outcome = ProjectOutcome::kTimedOut;
      report.detail += "The cell was killed at the deadline (" + std::to_string(job.timeout_ms) +
                       " ms) with its interpreter.\n";
    }
  }
  int64_t output_left = kTotalOutputBytes;
  bool nothing_left = false;  // after the last step's own sweep
  for (size_t i = 0; i < job.steps.size(); ++i) {
    step_options.output_cap_bytes = std::min(job.output_cap_bytes, output_left / 2);
    StepRun run = i == 0 && use_prestarted
                      ? RunStep(job.steps[i], step_options, deadline, wrap_up,
                                &prestarted->launched(), job.files.front().content)
                      : RunStep(job.steps[i], step_options, deadline, wrap_up);
    output_left -=
        static_cast<int64_t>(run.result.stdout_bytes.size() + run.result.stderr_bytes.size());
    report.steps.push_back(std::move(run.result));
    nothing_left = run.nothing_left;
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
  // (bounded by the wrap-up: past it, one round of kills and no waiting),
  // and what a cell started. A session's interpreters are stopped first.
  if (session) {
    session->FreezeAll();
    step_options.spared = session->Spared();
  }
  // (Not when the last step's sweep left the agent without a child: nothing
  // has run since.)
  if (session != nullptr || job.cell || !nothing_left) {
    KillAndReapAll(-1, step_options.sweep_scope, SweepUntil(wrap_up), step_options.spared);
  }
  // Killing a member of a stopped interpreter's orphaned process group may
  // have continued it (SIGCONT, as gVisor sends): stop it again. Only then
  // is it known which interpreters live on.
  if (session) {
    session->FreezeAll();
    report.interpreters = session->Alive();
  }

  Collected collected = CollectArtifacts(work->get(), job.artifacts, job.max_artifact_bytes);
  report.artifacts = std::move(collected.artifacts);
  report.detail += collected.notes;
  if (displays) {
    CollectedDisplays shown = CollectDisplays(displays_directory.get(), owner);
    report.displays = std::move(shown.displays);
    report.displays_truncated = shown.truncated;
    report.detail += shown.notes;
  }
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
  for (auto it = report->displays.rbegin(); it != report->displays.rend(); ++it) {
    empty(it->data, report->displays_truncated);
  }
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
