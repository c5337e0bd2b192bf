// plimsoll-wasm-controller: runs a C controller's module (made by
// plimsoll-cc) as the trial runner's controller (SPEC §10; docs/exams.md
// "C controllers"; wasm_controller.h says how).
//
//   plimsoll-trial --plant NAME --trajectory T -- plimsoll-wasm-controller controller.wasm
//
// Speaks the line protocol: for each state line on stdin, one answer line
// on stdout (each input the shortest decimal that reads back to the same
// double). Exit status: 0 at the end of its input; 1 when the module is
// refused, traps, or a state line is not the plant's width of numbers (one
// line on stderr says which); 2 usage error.
#include <cstdio>
#include <string>
#include <vector>

#include "trial/controller/wasm_controller.h"
#include "trial/controller/wasm_module.h"
#include "trial/line_protocol.h"

namespace {

// The longest state line read (a plant's state is at most 256 values).
constexpr size_t kStateLineCap = 256 * 32;

int Fail(const std::string& message) {
  std::fprintf(stderr, "plimsoll-wasm-controller: %s\n", message.c_str());
  return 1;
}

// One line without its '\n': false at the end of input, or past the cap
// (then *too_long).
bool ReadLine(std::string* line, bool* too_long) {
  line->clear();
  for (int c = std::getchar(); c != EOF; c = std::getchar()) {
    if (c == '\n') return true;
    if (line->size() == kStateLineCap) {
      *too_long = true;
      return false;
    }
    line->push_back(static_cast<char>(c));
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  namespace trial = plimsoll::trial;
  if (argc != 2 || argv[1][0] == '-') {
    std::fputs("usage: plimsoll-wasm-controller MODULE.wasm\n", stderr);
    return 2;
  }
  auto module = trial::ReadWasmFile(argv[1]);
  if (!module.ok()) return Fail(module.error().message());
  auto controller = trial::WasmController::Load(*module);
  if (!controller.ok()) return Fail(controller.error().message());

  const uint32_t width = (*controller)->shape().state_width;
  std::vector<double> state(width);
  std::string line;
  bool too_long = false;
  for (uint32_t tick = 0; ReadLine(&line, &too_long); ++tick) {
    const trial::AnswerParse parse = trial::ParseAnswerLine(line, width, state);
    if (parse.verdict != trial::AnswerVerdict::kOk) {
      return Fail("tick " + std::to_string(tick) + ": the state line is not " +
                  std::to_string(width) + " numbers: " + parse.detail);
    }
    auto inputs = (*controller)->Control(state, tick);
    if (!inputs.ok()) return Fail("tick " + std::to_string(tick) + ": " + inputs.error().message());
    const std::string answer = trial::FormatStateLine(*inputs);
    if (std::fwrite(answer.data(), 1, answer.size(), stdout) != answer.size() ||
        std::fflush(stdout) != 0) {
      return 0;  // the runner stopped reading: the trial is over
    }
  }
  if (too_long) return Fail("a state line is over " + std::to_string(kStateLineCap) + " bytes");
  return 0;
}
