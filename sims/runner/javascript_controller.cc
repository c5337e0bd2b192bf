#include "runner/javascript_controller.h"

#include <algorithm>

namespace plimsoll::sims {

Expected<std::unique_ptr<Controller>> InProcessJavascriptController::Start(std::string_view script,
                                                                           std::chrono::milliseconds load_timeout,
                                                                           const engine::SessionLimits& limits) {
  std::unique_ptr<InProcessJavascriptController> made(new InProcessJavascriptController());
  auto loaded =
      engine::JavascriptController::Load(script, limits, std::chrono::steady_clock::now() + load_timeout);
  if (loaded.ok()) {
    made->controller_ = std::move(*loaded);
  } else if (loaded.error().code() == ErrorCode::kInvalidArgument) {
    made->load_error_ = loaded.error().message();  // the script's fault: it answers nothing
  } else {
    return loaded.error();  // no interpreter at all
  }
  return std::unique_ptr<Controller>(std::move(made));
}

Exchange InProcessJavascriptController::Converse(std::span<const double> state, Deadline deadline,
                                                 std::string* answer_line) {
  if (controller_ == nullptr) return Exchange::kClosedOutput;
  std::string printed;
  Expected<std::string> answer = controller_->Answer(state, deadline, &printed);
  printed_.append(printed, 0, kPrintedCap - std::min(kPrintedCap, printed_.size()));
  if (answer.ok()) {
    *answer_line = std::move(*answer);
    return Exchange::kAnswered;
  }
  const bool late = answer.error().code() == ErrorCode::kDeadlineExceeded;
  controller_.reset();  // spent: it answers nothing more
  return late ? Exchange::kLate : Exchange::kClosedOutput;
}

}  // namespace plimsoll::sims
