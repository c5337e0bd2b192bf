// The controller as the trial runner sees it (docs/exams.md): one exchange
// per tick, the state out and one answer line in, by one deadline. Two
// kinds: a child process on the line protocol (controller_process.h, what
// plimsoll-trial runs) and a JavaScript controller in this process on the
// engine's runtime (javascript_controller.h, the embedded tier's).
//
// Usage:
//   std::string line;
//   switch (controller.Converse(state, deadline, &line)) { case Exchange::kAnswered: ... }
//   controller.End();
//
// Thread-safety: one owner.
#ifndef PLIMSOLL_TRIAL_CONTROLLER_H_
#define PLIMSOLL_TRIAL_CONTROLLER_H_

#include <chrono>
#include <span>
#include <string>

namespace plimsoll::trial {

using Deadline = std::chrono::steady_clock::time_point;

enum class Exchange {
  kAnswered,      // `*answer_line` holds one line, without its '\n'
  kLateReading,   // the controller did not take the state by the deadline
  kLate,          // no whole answer line by the deadline
  kTooLong,       // no '\n' within kAnswerLineCap bytes
  kClosedInput,   // it closed its input or exited before taking the state
  kClosedOutput,  // it closed its output or exited (or threw) before answering
};

class Controller {
 public:
  virtual ~Controller() = default;

  // Gives the controller `state` and waits for its answer line.
  virtual Exchange Converse(std::span<const double> state, Deadline deadline,
                            std::string* answer_line) = 0;

  // Ends the controller (a process: SIGKILL to its group, then reaped).
  // Idempotent; destructors call it.
  virtual void End() = 0;
};

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_CONTROLLER_H_
