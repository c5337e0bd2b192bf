// A C controller's WebAssembly module, run for the trial runner
// (docs/exams.md, "C controllers"). The module is what plimsoll-cc makes
// (c_controller.h): no imports, an exchange buffer, and
// plimsoll_control(tick). It runs on wabt's interpreter, in the process
// of plimsoll-wasm-controller, an image program: the sandbox's writable
// trees are noexec, so code an agent compiled never runs as native code
// (THREAT_MODEL.md, "What noexec does and does not promise"). WebAssembly
// fixes the result of every f64 operation, so the interpreter computes the
// bits any other conforming runtime would.
//
// Bounds: the module's memory must declare a maximum of at most
// kControllerMemoryPages; its value and call stacks are the interpreter's
// defaults (64 KiB each; deeper recursion traps); a trap is an error.
//
// Usage:
//   Expected<std::unique_ptr<WasmController>> controller = WasmController::Load(bytes);
//   Expected<std::vector<double>> inputs = (*controller)->Control(state, tick);
//
// Thread-safety: one owner.
#ifndef PLIMSOLL_TRIAL_CONTROLLER_WASM_CONTROLLER_H_
#define PLIMSOLL_TRIAL_CONTROLLER_WASM_CONTROLLER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "trial/controller/c_controller.h"
#include "plimsoll/error.h"

namespace plimsoll::trial {

// 16 MiB: a controller's stack, data and heap.
inline constexpr uint32_t kControllerMemoryPages = 256;

class WabtInstance;

class WasmController {
 public:
  // Reads, checks (CheckControllerModule, the memory maximum) and
  // instantiates the module, and runs its _initialize. Errors
  // (kInvalidArgument): what is wrong with the module, or its trap while
  // starting.
  static Expected<std::unique_ptr<WasmController>> Load(std::span<const uint8_t> module);
  ~WasmController();

  ControllerShape shape() const { return shape_; }

  // One tick: `state` (shape().state_width values) in, the inputs out.
  // Errors (kInvalidArgument): a state of another width, or a trap.
  Expected<std::vector<double>> Control(std::span<const double> state, uint32_t tick);

 private:
  explicit WasmController(std::unique_ptr<WabtInstance> instance);

  std::unique_ptr<WabtInstance> instance_;
  uint32_t buffer_ = 0;  // the exchange buffer's address
  ControllerShape shape_;
};

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_CONTROLLER_WASM_CONTROLLER_H_
