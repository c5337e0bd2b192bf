#include "engine/controller.h"

#include <charconv>
#include <cmath>

namespace plimsoll::engine {

namespace {

// Defined once, after the script: the answer as one line of the protocol.
constexpr std::string_view kAnswerHelper =
    "globalThis.__plimsoll_answer = (u) => (Array.isArray(u) ? u : [u]).map(String).join(' ');\n"
    "typeof control === 'function'";

// A double as a JavaScript literal with the same bits.
void AppendNumber(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "Infinity" : "-Infinity";
  } else {
    char digits[32];
    const auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);
    out.append(digits, error == std::errc() ? end : digits);
  }
}

// The REPL prints a string value quoted ('…', or "…" when it holds a ').
std::string Unquoted(std::string value) {
  if (value.size() >= 2 && (value.front() == '\'' || value.front() == '"') &&
      value.back() == value.front()) {
    return value.substr(1, value.size() - 2);
  }
  return value;
}

std::string WhyCellFailed(const CellOutcome& cell) {
  std::string why = cell.outcome.exit_code == kExitTimeout       ? "ran past its deadline"
                    : cell.outcome.exit_code == kExitOutOfMemory ? "ran out of memory"
                                                                 : "threw";
  if (!cell.outcome.stderr_bytes.empty()) {
    std::string printed = cell.outcome.stderr_bytes;
    while (!printed.empty() && printed.back() == '\n') printed.pop_back();
    why += ": " + printed;
  }
  return why;
}

}  // namespace

Expected<std::unique_ptr<JavascriptController>> JavascriptController::Load(
    std::string_view script, const SessionLimits& limits,
    std::chrono::steady_clock::time_point deadline) {
  Expected<std::unique_ptr<JavascriptSession>> session = JavascriptSession::Start(limits);
  if (!session.ok()) return session.error();
  Expected<CellOutcome> loaded = (*session)->RunCell(script, deadline);
  if (!loaded.ok()) return loaded.error();
  if (loaded->outcome.exit_code != kExitOk) {
    return Failure(ErrorCode::kInvalidArgument,
                   "The controller script " + WhyCellFailed(*loaded) + ".");
  }
  Expected<CellOutcome> checked = (*session)->RunCell(kAnswerHelper, deadline);
  if (!checked.ok()) return checked.error();
  if (checked->outcome.exit_code != kExitOk) {
    return Failure(ErrorCode::kInvalidArgument,
                   "The controller script " + WhyCellFailed(*checked) + ".");
  }
  if (checked->value != "true") {
    return Failure(ErrorCode::kInvalidArgument,
                   "The controller script defines no function `control` "
                   "(write: function control(...state) { return inputs; }).");
  }
  return std::unique_ptr<JavascriptController>(new JavascriptController(std::move(*session)));
}

Expected<std::string> JavascriptController::Answer(std::span<const double> state,
                                                   std::chrono::steady_clock::time_point deadline,
                                                   std::string* printed) {
  if (spent_) return *spent_;
  std::string call = "__plimsoll_answer(control(";
  for (size_t i = 0; i < state.size(); ++i) {
    if (i > 0) call += ", ";
    AppendNumber(call, state[i]);
  }
  call += "))";
  Expected<CellOutcome> cell = session_->RunCell(call, deadline);
  if (!cell.ok()) {
    spent_ = cell.error();
    return *spent_;
  }
  printed->append(cell->outcome.stdout_bytes);
  printed->append(cell->outcome.stderr_bytes);
  if (cell->outcome.exit_code != kExitOk) {
    spent_ = Failure(cell->outcome.exit_code == kExitTimeout ? ErrorCode::kDeadlineExceeded
                                                             : ErrorCode::kInvalidArgument,
                     "control() " + WhyCellFailed(*cell) + ".");
    return *spent_;
  }
  return Unquoted(cell->value.value_or(""));
}

}  // namespace plimsoll::engine
