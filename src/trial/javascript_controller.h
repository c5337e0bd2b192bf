// A JavaScript controller in this process (docs/exams.md): the script runs
// in the embedded engine (engine::JavascriptController, the same module and
// generated C as the image's `qjs --controller`), so the answers, and the
// trial's fingerprint, are the same as with qjs as a child process.
//
// It behaves as `qjs --controller` does seen from the runner: a script that
// throws or defines no `control` answers nothing (the trial ends
// controller_exited, as when qjs exits at load); control() throwing or
// running out of memory ends it the same way at that tick; control() past
// the tick's deadline is late (its interpreter is stopped at the deadline
// plus the engine's hard grace). What the script printed, and why it stopped
// answering, go to a string the caller keeps (capped at kPrintedCap), as a
// qjs child's stderr would show them.
//
// Usage:
//   std::string printed;
//   auto start = [&] { return InProcessJavascriptController::Start(source, &printed); };
//   Expected<InProcessTrial> trial = RunTrialInProcess("cartpole", {}, kAnswerDeadline, start);
//
// Thread-safety: one owner.
#ifndef PLIMSOLL_TRIAL_JAVASCRIPT_CONTROLLER_H_
#define PLIMSOLL_TRIAL_JAVASCRIPT_CONTROLLER_H_

#include <memory>
#include <string>
#include <string_view>

#include "engine/controller.h"
#include "plimsoll/error.h"
#include "trial/controller.h"

namespace plimsoll::trial {

// What a controller may print before the rest is dropped.
inline constexpr size_t kPrintedCap = 64 * 1024;

class InProcessJavascriptController final : public Controller {
 public:
  // Loads `script` (its top level, within `load_timeout`). A script that
  // fails to load is still a controller: one that never answers (see
  // above), with the reason appended to `*printed`. `printed` must outlive
  // the controller (null: nothing is kept). Errors: only when no
  // interpreter could be made at all (the engine's refusal).
  static Expected<std::unique_ptr<Controller>> Start(
      std::string_view script, std::string* printed,
      std::chrono::milliseconds load_timeout = std::chrono::seconds(10),
      const engine::SessionLimits& limits = {});

  Exchange Converse(std::span<const double> state, Deadline deadline,
                    std::string* answer_line) override;
  void End() override { controller_.reset(); }

 private:
  explicit InProcessJavascriptController(std::string* printed) : printed_(printed) {}
  void Print(std::string_view text);

  std::unique_ptr<engine::JavascriptController> controller_;  // null: failed to load, or ended
  std::string* printed_;                                      // the caller's, or null
};

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_JAVASCRIPT_CONTROLLER_H_
