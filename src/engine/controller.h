// A JavaScript exam controller (SPEC §10, docs/exams.md): a script that
// defines a global function `control`, kept in one JavascriptSession, and
// called once per tick with the plant's state.
//
//   function control(x, v, theta, omega) { return 40 * theta + 5 * omega + x + v; }
//
// control gets the state values as separate numbers and returns a number,
// or an array of numbers for a plant with several inputs. The answer is
// what the line protocol carries: each value as JavaScript's String()
// spells it (the shortest decimal that reads back to the same double),
// separated by single spaces. Values that are not finite numbers are
// passed on as spelt ("NaN", "undefined"): the runner, not this class,
// judges answers.
//
// The state reaches control with the same bits the runner computed: each
// value is written into the call as its shortest round-trip decimal.
//
// Usage:
//   auto controller = JavascriptController::Load(script, limits, deadline);
//   std::string printed;
//   Expected<std::string> answer = (*controller)->Answer(state, tick_deadline, &printed);
//   // "*answer" is e.g. "1.9990000000000001"
//
// Thread-safety: one caller at a time (the session's interpreter thread
// does the work).
#ifndef PLIMSOLL_ENGINE_CONTROLLER_H_
#define PLIMSOLL_ENGINE_CONTROLLER_H_

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "engine/session.h"
#include "plimsoll/error.h"

namespace plimsoll::engine {

class JavascriptController {
 public:
  // Runs the script's top level by `deadline` and checks that it defined a
  // function `control`. Errors: kInvalidArgument when the script threw, ran
  // past the deadline, ran out of memory or defined no `control` (the
  // message says which and carries what it printed on stderr);
  // JavascriptSession's errors when no interpreter could be made.
  static Expected<std::unique_ptr<JavascriptController>> Load(
      std::string_view script, const SessionLimits& limits,
      std::chrono::steady_clock::time_point deadline);

  // Calls control(state...) by `deadline` (its soft deadline; the hard one
  // is SessionLimits::hard_grace later) and returns the answer. Whatever
  // control printed (console.*, both streams) is appended to `*printed`.
  // Errors: kDeadlineExceeded when the call ran past its deadline,
  // kInvalidArgument when it threw or ran out of memory (message: why, and
  // its stderr). After an error the controller is spent: the interpreter is
  // gone or in an unknown state, and every later call fails the same way.
  Expected<std::string> Answer(std::span<const double> state,
                               std::chrono::steady_clock::time_point deadline,
                               std::string* printed);

 private:
  explicit JavascriptController(std::unique_ptr<JavascriptSession> session)
      : session_(std::move(session)) {}

  std::unique_ptr<JavascriptSession> session_;
  std::optional<Error> spent_;  // the error that ended it
};

}  // namespace plimsoll::engine

#endif  // PLIMSOLL_ENGINE_CONTROLLER_H_
