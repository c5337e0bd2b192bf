// qjs_native_bench: native QuickJS (same source, same driver as the engine's
// wasm module, built -O2 for the host) for speed comparisons only.
//
//   qjs_native_bench [--repeat N] FILE
//
// Runs FILE N times (default 1), each in a fresh runtime; prints the first
// run's stdout/stderr and, on stderr, one line per run: "run I: MS ms".
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "native_imports.h"

int main(int argc, char** argv) {
  int repeat = 1;
  std::string path;
  for (int i = 1; i < argc; i++) {
    std::string argument = argv[i];
    if (argument == "--repeat" && i + 1 < argc) {
      repeat = std::atoi(argv[++i]);
    } else {
      path = argument;
    }
  }
  if (path.empty() || repeat < 1) {
    std::fprintf(stderr, "usage: qjs_native_bench [--repeat N] FILE\n");
    return 2;
  }
  std::ifstream file(path, std::ios::binary);
  std::string code((std::istreambuf_iterator<char>(file)), {});
  int exit_code = 0;
  for (int i = 0; i < repeat; i++) {
    auto start = std::chrono::steady_clock::now();
    auto run = plimsoll::bench::RunNative(code);
    double ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (i == 0) {
      std::fwrite(run.stdout_bytes.data(), 1, run.stdout_bytes.size(), stdout);
      std::fwrite(run.stderr_bytes.data(), 1, run.stderr_bytes.size(), stderr);
      exit_code = run.exit_code;
    }
    std::fprintf(stderr, "run %d: %.3f ms\n", i, ms);
  }
  return exit_code;
}
