// The program a C controller becomes (docs/exams.md, "C controllers"):
// plimsoll-cc links this host, compiled once with plimsoll's wasm2c runtime
// (the plants' runtime), to the controller's own module translated by
// wasm2c and the shim (controller_shim.h). It speaks the runner's line
// protocol: for each state line on stdin it writes the state into the
// module's exchange buffer, calls the module's plimsoll_control(tick), and
// answers the inputs the module left there on stdout, each the shortest
// decimal that reads back to the same double.
//
// The module runs guarded: its linear memory is capped at
// kControllerMemoryPages, a trap (an out-of-bounds access, a stack
// exhausted, `unreachable`) ends the program with exit 1 and one line on
// stderr naming the tick, and so does a state line it cannot read. End of
// input ends it with 0. The runner keeps the clock: an answer past the
// tick's deadline ends the trial `late` and the runner kills this program.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "controller/controller_shim.h"
#include "engine/runtime/wasm_runtime.h"
#include "runner/line_protocol.h"

namespace plimsoll::sims {
namespace {

// 16 MiB of linear memory: a controller's stack, data and any heap.
constexpr uint32_t kControllerMemoryPages = 256;
// The longest state line read (a plant's state is at most 256 values).
constexpr size_t kStateLineCap = 256 * 32;

int Fail(const std::string& message) {
  const std::string line = "controller: " + message + "\n";
  (void)!write(STDERR_FILENO, line.data(), line.size());
  return 1;
}

std::string TrapName(int trap) {
  if (trap == engine::wasm::kTrapHostFailure) return "the runtime failed";
  return wasm_rt_strerror(static_cast<wasm_rt_trap_t>(trap));
}

// Reads one line without its '\n' into `line`: false at end of input (or
// a last line without '\n'), or when the line is longer than the cap.
bool ReadLine(std::FILE* in, std::string* line, bool* too_long) {
  line->clear();
  for (int c = std::getc(in); c != EOF; c = std::getc(in)) {
    if (c == '\n') return true;
    if (line->size() == kStateLineCap) {
      *too_long = true;
      return false;
    }
    line->push_back(static_cast<char>(c));
  }
  return false;
}

// What a guarded call takes and leaves.
struct Call {
  void* instance;
  uint32_t tick;
  uint32_t buffer = 0;  // plimsoll_controller_buffer's answer, at the start
};

int Run() {
  const uint32_t width = plimsoll_controller_state_width();
  const uint32_t inputs = plimsoll_controller_input_count();
  if (!engine::wasm::EnsureInitialized().ok()) return Fail("the wasm runtime could not start");
  engine::wasm::RunScope scope({.memory_limit_pages = kControllerMemoryPages});
  if (!scope.status().ok()) return Fail(scope.status().error().message());

  const size_t align = plimsoll_controller_instance_align();
  const size_t size = (plimsoll_controller_instance_size() + align - 1) / align * align;
  void* instance = std::aligned_alloc(align, size);
  if (instance == nullptr) return Fail("out of memory");
  std::memset(instance, 0, size);
  plimsoll_controller_init_module();
  Call start{instance, 0};
  int trap = engine::wasm::RunGuarded(
      [](void* at) {
        auto* c = static_cast<Call*>(at);
        plimsoll_controller_start(c->instance);
        c->buffer = plimsoll_controller_buffer(c->instance);
      },
      &start);
  if (trap != 0) return Fail("the module trapped while starting: " + TrapName(trap));
  const uint32_t buffer = start.buffer;

  std::vector<double> state(width), answer(inputs);
  std::string line;
  bool too_long = false;
  for (uint32_t tick = 0; ReadLine(stdin, &line, &too_long); ++tick) {
    const AnswerParse parse = ParseAnswerLine(line, width, state);
    if (parse.verdict != AnswerVerdict::kOk) {
      return Fail("tick " + std::to_string(tick) + ": the state line is not " +
                  std::to_string(width) + " numbers: " + parse.detail);
    }
    wasm_rt_memory_t* memory = plimsoll_controller_memory(instance);
    const uint64_t end = uint64_t{buffer} + sizeof(double) * PLIMSOLL_EXCHANGE_DOUBLES;
    if (memory == nullptr || end > memory->size) {
      return Fail("the module's exchange buffer is outside its memory");
    }
    std::memcpy(memory->data + buffer, state.data(), sizeof(double) * width);
    Call call{instance, tick};
    trap = engine::wasm::RunGuarded(
        [](void* at) {
          auto* c = static_cast<Call*>(at);
          plimsoll_controller_control(c->instance, c->tick);
        },
        &call);
    if (trap != 0)
      return Fail("tick " + std::to_string(tick) + ": control trapped: " + TrapName(trap));
    memory = plimsoll_controller_memory(instance);
    std::memcpy(answer.data(), memory->data + buffer + sizeof(double) * PLIMSOLL_INPUTS_AT,
                sizeof(double) * inputs);
    const std::string out = FormatStateLine(answer);
    if (std::fwrite(out.data(), 1, out.size(), stdout) != out.size() || std::fflush(stdout) != 0) {
      return 0;  // the runner stopped reading: the trial is over
    }
  }
  if (too_long) return Fail("a state line is over " + std::to_string(kStateLineCap) + " bytes");
  return 0;
}

}  // namespace
}  // namespace plimsoll::sims

int main() {
  return plimsoll::sims::Run();
}
