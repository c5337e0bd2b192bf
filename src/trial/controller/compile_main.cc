// plimsoll-cc: compiles a C controller for a plant into a checked
// WebAssembly module, inside the sandbox (SPEC §10; docs/exams.md
// "C controllers"; c_controller.h says how).
//
//   plimsoll-cc --plant NAME [--work-dir DIR] SOURCE.c -o OUTPUT.wasm
//
//   --plant NAME     a plant linked into plimsoll-trial: its state width and
//                    input count choose control()'s signature
//   --work-dir DIR   where the generated glue goes (default OUTPUT.build)
//   SOURCE.c         the controller (defines control())
//   -o OUTPUT.wasm   the module to write
//
// Then: plimsoll-trial --plant NAME --trajectory T -- plimsoll-wasm-controller OUTPUT.wasm
//
// Exit status: 0 compiled; 1 the controller must change (it does not
// compile, it imports something; the compiler's messages or one line say
// why); 2 usage error; 3 an unknown plant; 70 the compiler could not run.
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "trial/controller/c_controller.h"
#include "trial/plant_registry.h"

namespace {

constexpr int kControllerError = 1;
constexpr int kUsageError = 2;
constexpr int kPlantError = 3;
constexpr int kToolchainError = 70;  // EX_SOFTWARE

constexpr const char* kUsage =
    "usage: plimsoll-cc --plant NAME [--work-dir DIR] SOURCE.c -o OUTPUT.wasm\n"
    "  one input:      double control(double s0, ..., int k);\n"
    "  several inputs: void control(const double *state, double *inputs, int k);\n";

int Usage(const std::string& problem) {
  std::fprintf(stderr, "plimsoll-cc: %s\n%s", problem.c_str(), kUsage);
  return kUsageError;
}

}  // namespace

int main(int argc, char** argv) {
  namespace trial = plimsoll::trial;
  const std::vector<std::string> arguments(argv + 1, argv + argc);
  std::string plant, source, output, work;
  for (size_t i = 0; i < arguments.size(); ++i) {
    const std::string& flag = arguments[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    std::string* value = flag == "--plant"      ? &plant
                         : flag == "-o"         ? &output
                         : flag == "--work-dir" ? &work
                                                : nullptr;
    if (value != nullptr) {
      if (i + 1 == arguments.size()) return Usage(flag + " needs a value");
      if (!value->empty()) return Usage(flag + " is given twice");
      *value = arguments[++i];
    } else if (flag.starts_with("-")) {
      return Usage("unknown option " + flag);
    } else if (!source.empty()) {
      return Usage("one source file only");
    } else {
      source = flag;
    }
  }
  if (plant.empty() || source.empty() || output.empty()) {
    return Usage("--plant, SOURCE.c and -o are required");
  }
  auto created = trial::CreatePlant(plant);
  if (!created.ok()) {
    std::fprintf(stderr, "plimsoll-cc: %s\n", created.error().message().c_str());
    return kPlantError;
  }
  const trial::PlantShape& shape = (*created)->shape();
  trial::CompileOptions options;
  options.source = source;
  options.output = output;
  options.shape = {static_cast<uint32_t>(shape.state_width),
                   static_cast<uint32_t>(shape.input_count)};
  options.work_directory = work.empty() ? output + ".build" : work;
  const plimsoll::Status compiled = trial::CompileCController(options);
  if (!compiled.ok()) {
    std::fprintf(stderr, "plimsoll-cc: %s\n", compiled.error().message().c_str());
    return compiled.error().code() == plimsoll::ErrorCode::kInvalidArgument ? kControllerError
                                                                            : kToolchainError;
  }
  return 0;
}
