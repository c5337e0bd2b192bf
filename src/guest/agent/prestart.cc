#include "guest/agent/prestart.h"

#include <errno.h>
#include <signal.h>
#include <sys/wait.h>

namespace plimsoll::guest::agent {

bool SameProcessOptions(const StepOptions& a, const StepOptions& b) {
  return a.work_directory == b.work_directory && a.change_identity == b.change_identity &&
         a.uid == b.uid && a.gid == b.gid && a.nofile == b.nofile &&
         a.fsize_bytes == b.fsize_bytes && a.nproc == b.nproc && a.environment == b.environment &&
         a.seccomp_filter == b.seccomp_filter && a.ignore_hangup == b.ignore_hangup;
}

std::unique_ptr<PrestartedStep> PrestartedStep::Start(const Job& template_job,
                                                      const StepOptions& options,
                                                      std::string* problem) {
  if (template_job.steps.size() != 1 || template_job.files.size() != 1 || template_job.cell ||
      template_job.host_calls) {
    *problem =
        "the prestart template must be a job of one step and one file, without a cell "
        "or host calls";
    return nullptr;
  }
  const std::vector<std::string>& argv = template_job.steps.front();
  if (argv.size() < 2 || argv.back() != template_job.files.front().path) {
    *problem = "the prestarted step must name the job's file as its last argument";
    return nullptr;
  }
  std::unique_ptr<PrestartedStep> step(new PrestartedStep());
  step->argv_ = argv;
  step->file_ = argv.back();
  step->options_ = options;
  std::vector<std::string> reading_stdin = argv;
  reading_stdin.back() = "-";  // qjs: FILE | -
  step->launched_ = LaunchStep(reading_stdin, options, {}, /*stdin_pipe=*/true);
  if (step->launched_.pid < 0) {
    *problem = "the prestarted step could not start: " + step->launched_.failure;
    return nullptr;
  }
  return step;
}

PrestartedStep::~PrestartedStep() {
  Discard();
}

bool PrestartedStep::Fits(const Job& job, const StepOptions& options) const {
  if (launched_.pid < 0 || !launched_.stdin_write.valid()) return false;
  if (job.steps.size() != 1 || job.steps.front() != argv_ || job.files.size() != 1 ||
      job.files.front().path != file_ || !job.artifacts.empty() || job.cell || job.host_calls ||
      !SameProcessOptions(options, options_)) {
    return false;
  }
  // Still waiting: not exited (nothing else reaps before the job's steps).
  siginfo_t info{};
  return waitid(P_PID, static_cast<id_t>(launched_.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
         info.si_pid == 0;
}

void PrestartedStep::Discard() {
  if (launched_.pid < 0) return;
  launched_.stdin_write.Reset();
  launched_.stdout_read.Reset();
  launched_.stderr_read.Reset();
  kill(launched_.pid, SIGKILL);
  int status = 0;
  while (waitpid(launched_.pid, &status, __WALL) < 0 && errno == EINTR) {
  }
  launched_.pid = -1;
}

}  // namespace plimsoll::guest::agent
