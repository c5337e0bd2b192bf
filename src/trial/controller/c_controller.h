// C controllers (SPEC §10, docs/exams.md "C controllers"): compiling an
// agent's C file to the WebAssembly module plimsoll-wasm-controller runs
// (wasm_controller.h), inside the sandbox, as the run's first step.
//
//   controller.c + glue --clang, wasm32-wasi reactor, -O2 -ffp-contract=off--> OUTPUT.wasm
//   OUTPUT.wasm --ReadWasmModule + CheckControllerModule--> accepted, or refused
//
// The C file defines the law for the plant it is compiled for:
//   one input:     double control(double s0, ..., double s{W-1}, int k);
//   several:       void control(const double *state, double *inputs, int k);
// k counts ticks from 0. The glue (GlueSource) includes the file, so a
// `control` with another signature is a compile error naming both. A
// module that imports anything (printf, a clock, a file: WASI calls) is
// refused: a controller computes, it does not reach out. The module is
// never native code: the sandbox's writable trees are noexec.
//
// plimsoll-cc (compile_main.cc) is the command; this is its library.
#ifndef PLIMSOLL_TRIAL_CONTROLLER_C_CONTROLLER_H_
#define PLIMSOLL_TRIAL_CONTROLLER_C_CONTROLLER_H_

#include <cstdint>
#include <filesystem>
#include <string>

#include "trial/controller/wasm_module.h"
#include "plimsoll/error.h"

namespace plimsoll::trial {

// The module's exchange buffer: kExchangeDoubles float64 values, the
// state at [0, width), the inputs control() answers at
// [kInputsAt, kInputsAt + inputs).
inline constexpr uint32_t kExchangeDoubles = 512;
inline constexpr uint32_t kInputsAt = 256;

struct ControllerShape {
  uint32_t state_width = 0;  // 1..256
  uint32_t input_count = 0;  // 1..256
};

// The C translation unit compiled to wasm: `#include "SOURCE"` (an
// absolute path), the exchange buffer, the declaration of `control` for
// `shape` and the exports plimsoll_buffer, plimsoll_state_width,
// plimsoll_input_count and plimsoll_control.
std::string GlueSource(const std::filesystem::path& source, ControllerShape shape);

// Whether `module` is what the glue makes: no import of any kind, and the
// exports memory, _initialize () -> (), plimsoll_buffer,
// plimsoll_state_width and plimsoll_input_count () -> i32, and
// plimsoll_control (i32) -> (). Errors (kInvalidArgument) name the first
// import ("env.printf", "wasi_snapshot_preview1.fd_write") or the export.
Status CheckControllerModule(const WasmModuleInfo& module);

struct CompileOptions {
  std::filesystem::path source;  // the controller's C file
  std::filesystem::path output;  // the module to write (replaced)
  ControllerShape shape;
  // Scratch space for the glue (created if needed; the glue stays there).
  std::filesystem::path work_directory;
  // The compiler, by name on PATH or by path.
  std::string clang = "clang-14";
};

// Compiles and checks. The compiler's diagnostics go to this process's
// stderr as it prints them. Errors: kInvalidArgument for what the
// controller's author must fix (it does not compile, a refused import or
// export, an unreadable source; the module is then removed);
// kFailedPrecondition for a missing compiler; system errors for the work
// directory.
Status CompileCController(const CompileOptions& options);

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_CONTROLLER_C_CONTROLLER_H_
