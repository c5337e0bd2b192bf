#include "trial/javascript_controller.h"

#include <algorithm>

namespace plimsoll::trial {

Expected<std::unique_ptr<Controller>> InProcessJavascriptController::Start(
    std::string_view script, std::string* printed, std::chrono::milliseconds load_timeout,
    const engine::SessionLimits& limits) {
  std::unique_ptr<InProcessJavascriptController> made(new InProcessJavascriptController(printed));
  auto loaded = engine::JavascriptController::Load(script, limits,
                                                   std::chrono::steady_clock::now() + load_timeout);
  if (loaded.ok()) {
    made->controller_ = std::move(*loaded);
  } else if (loaded.error().code() == ErrorCode::kInvalidArgument) {
    // The script's fault: a controller that answers nothing, as qjs exits.
    made->Print("qjs --controller: " + loaded.error().message() + "\n");
  } else {
    return loaded.error();  // no interpreter at all
  }
  return std::unique_ptr<Controller>(std::move(made));
}

void InProcessJavascriptController::Print(std::string_view text) {
  if (printed_ == nullptr) return;
  printed_->append(text.substr(0, kPrintedCap - std::min(kPrintedCap, printed_->size())));
}

Exchange InProcessJavascriptController::Converse(std::span<const double> state, Deadline deadline,
                                                 std::string* answer_line) {
  if (controller_ == nullptr) return Exchange::kClosedOutput;
  std::string printed;
  Expected<std::string> answer = controller_->Answer(state, deadline, &printed);
  Print(printed);
  if (answer.ok()) {
    *answer_line = std::move(*answer);
    return Exchange::kAnswered;
  }
  Print("qjs --controller: " + answer.error().message() + "\n");
  const bool late = answer.error().code() == ErrorCode::kDeadlineExceeded;
  controller_.reset();  // spent: it answers nothing more
  return late ? Exchange::kLate : Exchange::kClosedOutput;
}

}  // namespace plimsoll::trial
