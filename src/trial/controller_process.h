// The controller as a child process the runner talks to through pipes: its
// stdin carries the state lines, its stdout the answers; its stderr is the
// runner's (passed through). Every wait has a deadline (poll on non-blocking
// descriptors): a controller that stops reading or writing can never hang
// the runner.
//
// The child is started as child_start.h starts every child of the runner:
// the runner's environment, descriptors 0-2 only (everything else is closed
// before exec), default signal dispositions and mask, its own process group
// (so the end of the trial kills what it forked, too), and SIGKILL if the
// runner's thread dies (PR_SET_PDEATHSIG).
//
// Usage:
//   auto controller = ControllerProcess::Start({"python3", "balance.py"});
//   controller->WriteAll("0 0 0.05 0\n", deadline);
//   std::string line;
//   controller->ReadLine(&line, kAnswerLineCap, deadline);
//   // ~ControllerProcess: SIGKILL to its process group, then reap.
//
// Thread-safety: one owner. Writes block SIGPIPE on the calling thread only
// while they run (an EPIPE is an outcome, never a signal).
#ifndef PLIMSOLL_TRIAL_CONTROLLER_PROCESS_H_
#define PLIMSOLL_TRIAL_CONTROLLER_PROCESS_H_

#include <sys/types.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "plimsoll/error.h"
#include "trial/controller.h"

namespace plimsoll::trial {

enum class IoOutcome {
  kDone,      // written, or a whole line read
  kTimedOut,  // the deadline passed first
  kClosed,    // the controller closed its end (or exited)
  kTooLong,   // ReadLine: no '\n' within the cap
};

class ControllerProcess final : public Controller {
 public:
  // Starts argv (argv[0] found on PATH when it has no '/'). Errors
  // (kFailedPrecondition): empty argv, a program that is not found or
  // cannot be executed (errno reported by the child), a failed pipe/fork.
  static Expected<std::unique_ptr<ControllerProcess>> Start(const std::vector<std::string>& argv);

  ~ControllerProcess() override;
  ControllerProcess(const ControllerProcess&) = delete;
  ControllerProcess& operator=(const ControllerProcess&) = delete;

  pid_t pid() const { return pid_; }

  // Writes all of `bytes` to the controller's stdin by `deadline`.
  IoOutcome WriteAll(std::string_view bytes, Deadline deadline);

  // Reads one line (without its '\n') into `*line` by `deadline`. Bytes
  // after the '\n' stay buffered for the next call. kTooLong when `cap`
  // bytes (newline included) pass without a '\n'.
  IoOutcome ReadLine(std::string* line, size_t cap, Deadline deadline);

  // SIGKILL to the controller's process group, close the pipes, reap.
  // Idempotent; the destructor calls it.
  void KillAndReap();

  // Controller: the state as one line (FormatStateLine) by WriteAll, then
  // ReadLine (kAnswerLineCap), both by `deadline`; End is KillAndReap.
  Exchange Converse(std::span<const double> state, Deadline deadline,
                    std::string* answer_line) override;
  void End() override { KillAndReap(); }

 private:
  ControllerProcess(pid_t pid, base::UniqueFd input, base::UniqueFd output)
      : pid_(pid), input_(std::move(input)), output_(std::move(output)) {}

  pid_t pid_;
  base::UniqueFd input_;   // the controller's stdin (our write end)
  base::UniqueFd output_;  // the controller's stdout (our read end)
  std::string pending_;    // read but not yet returned
};

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_CONTROLLER_PROCESS_H_
