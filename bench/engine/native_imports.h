// The guest driver's imports for the native (benchmark-only) QuickJS build,
// and a C++ entry point to run one script natively. Not thread-safe: the
// driver keeps per-run globals (one wasm instance each, in the engine).
#ifndef PLIMSOLL_BENCH_ENGINE_NATIVE_IMPORTS_H_
#define PLIMSOLL_BENCH_ENGINE_NATIVE_IMPORTS_H_

#include <string>
#include <string_view>

namespace plimsoll::bench {

struct NativeRun {
  int exit_code = 0;
  std::string stdout_bytes;
  std::string stderr_bytes;
};

// Runs `code` in a fresh native QuickJS runtime (no time limit).
NativeRun RunNative(std::string_view code, size_t memory_bytes = size_t{256} << 20);

}  // namespace plimsoll::bench

#endif  // PLIMSOLL_BENCH_ENGINE_NATIVE_IMPORTS_H_
