// C controllers (SPEC §10, docs/exams.md "C controllers"): compiling an
// agent's C file into a program that speaks the runner's line protocol,
// by way of WebAssembly, so the controller runs on the plants' runtime.
//
//   controller.c + glue --clang, wasm32-wasi, -O2 -ffp-contract=off--> controller.wasm
//   controller.wasm --ReadWasmModule: no import; the glue's exports--> (checked)
//   controller.wasm --wasm2c -n controller--> controller_wasm.{c,h}
//   controller_wasm.c + controller_shim.c --clang, native--> objects
//   objects + the host (controller_host.cc, plimsoll's wasm2c runtime) --static link--> OUTPUT
//
// The C file defines the law for the plant it is compiled for:
//   one input:     double control(double s0, ..., double s{W-1}, int k);
//   several:       void control(const double *state, double *inputs, int k);
// k counts ticks from 0. The glue (GlueSource) includes the file, so a
// `control` with another signature is a compile error naming both. A
// module that imports anything (printf, a clock, a file: WASI calls) is
// refused: a controller computes, it does not reach out.
//
// plimsoll-cc (compile_main.cc) is the command; this is its library.
#ifndef PLIMSOLL_SIMS_CONTROLLER_C_CONTROLLER_H_
#define PLIMSOLL_SIMS_CONTROLLER_C_CONTROLLER_H_

#include <cstdint>
#include <filesystem>
#include <string>

#include "controller/wasm_module.h"
#include "plimsoll/error.h"

namespace plimsoll::sims {

struct ControllerShape {
  uint32_t state_width = 0;  // 1..256
  uint32_t input_count = 0;  // 1..256
};

// The C translation unit compiled to wasm: `#include "SOURCE"` (an
// absolute path), the exchange buffer, the declaration of `control` for
// `shape` and the exports plimsoll_buffer and plimsoll_control.
std::string GlueSource(const std::filesystem::path& source, ControllerShape shape);

// Whether `module` is what the glue makes: no import of any kind, and the
// exports memory, _initialize () -> (), plimsoll_buffer () -> i32 and
// plimsoll_control (i32) -> (). Errors (kInvalidArgument) name the first
// import ("env.printf", "wasi_snapshot_preview1.fd_write") or the export.
Status CheckControllerModule(const WasmModuleInfo& module);

struct CompileOptions {
  std::filesystem::path source;  // the controller's C file
  std::filesystem::path output;  // the program to write (replaced)
  ControllerShape shape;
  // Scratch space: created if needed; the intermediate files (the wasm
  // module, its C translation, objects) stay there for whoever wants them.
  std::filesystem::path work_directory;
  // The tools, by name on PATH or by path.
  std::string clang = "clang-14";
  std::string wasm2c = "wasm2c";
};

// Runs the whole pipeline above. The tools' diagnostics go to this
// process's stderr as they print them. Errors: kInvalidArgument for what
// the controller's author must fix (it does not compile, a refused import
// or export, an unreadable source); kFailedPrecondition for a missing tool
// or a step that failed on a correct controller (a broken toolchain);
// system errors for the work directory.
Status CompileCController(const CompileOptions& options);

}  // namespace plimsoll::sims

#endif  // PLIMSOLL_SIMS_CONTROLLER_C_CONTROLLER_H_
