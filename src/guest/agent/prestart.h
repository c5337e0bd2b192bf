// A step started before its job: in a warm pool's sandbox the agent starts
// the JavaScript step every snippet job of its provider has, so that the
// job's run does not pay for a process start (under gVisor's ptrace
// platform a vfork + execve of qjs costs ~10 ms: docs/oci-provider.md, "Time
// budget of a pooled runsc run").
//
// The provider gives the agent the job such runs will have, as a template
// (`plimsoll-guest --prestart-job JSON`, an EncodeJob'd Job whose one step is
// `qjs ... main.js` and whose one file is main.js). Start() launches that
// step exactly as RunStep would (same identity, limits, seccomp filter,
// environment, cwd, session; LaunchStep), except that its file argument is
// "-" and its stdin a pipe: qjs then waits, before reading its script, for
// the end of its input. Nothing of any guest's runs in it before a job.
//
// When the job comes, Fits() says whether the prestarted process is exactly
// the step the job asks for, with the options the agent would start it with
// now (argv, the one file the argv names, limits, filter, environment, work
// directory, identity), asks for no artifact back, and is still waiting.
// Then RunStep hands it the file's content on stdin, and the run continues
// as any other: qjs evaluates the same code with the same limits and gives
// the same output and exit code as from the file (it names no file in its
// output). The file itself is not written to /work: the step is the run's
// only process and reads its script from stdin, and qjs's engine has no
// file system. Otherwise Discard() kills and reaps it and the job runs as
// if there had been none.
//
// The step's program must take its file as its last argument and read the
// same bytes from stdin when that argument is "-", and need nothing else of
// /work (`qjs`, whose output names no file, is the one providers prestart;
// `cat` does it too, for tests).
// One-shot agents only (not --session).
//
// Usage (main.cc, agent.cc):
//   auto prestarted = PrestartedStep::Start(template_job, options);   // may be null
//   ...
//   if (prestarted && prestarted->Fits(job, step_options)) {
//     RunStep(job.steps[0], step_options, deadline, wrap_up, &prestarted->launched(), code);
//   } else if (prestarted) {
//     prestarted->Discard();
//   }
#ifndef PLIMSOLL_GUEST_AGENT_PRESTART_H_
#define PLIMSOLL_GUEST_AGENT_PRESTART_H_

#include <memory>
#include <string>
#include <vector>

#include "guest/agent/step_runner.h"
#include "guest/protocol.h"

namespace plimsoll::guest::agent {

class PrestartedStep {
 public:
  // Starts the template's step with `options` (what RunJob would build for
  // the template: StepOptionsFor). Null, with `*problem` set, when the
  // template is not a prestartable JavaScript job or the start failed.
  static std::unique_ptr<PrestartedStep> Start(const Job& template_job, const StepOptions& options,
                                               std::string* problem);
  PrestartedStep(const PrestartedStep&) = delete;
  PrestartedStep& operator=(const PrestartedStep&) = delete;
  ~PrestartedStep();  // Discard()s an unused process

  // Whether it can serve `job`'s one step, started with `options`, and is
  // still waiting (not exited).
  bool Fits(const Job& job, const StepOptions& options) const;
  // The process, for RunStep (which takes it over).
  Launched& launched() { return launched_; }
  // Kills and reaps the process unless RunStep took it.
  void Discard();

 private:
  PrestartedStep() = default;

  std::vector<std::string> argv_;  // as the job names it (with the file)
  std::string file_;               // the file argument, e.g. "main.js"
  StepOptions options_;
  Launched launched_;
};

// Whether two StepOptions start the same process: work directory,
// identity, limits, seccomp filter and environment (not the capture cap,
// sweep scope or spared processes, which only the agent uses).
bool SameProcessOptions(const StepOptions& a, const StepOptions& b);

}  // namespace plimsoll::guest::agent

#endif  // PLIMSOLL_GUEST_AGENT_PRESTART_H_
