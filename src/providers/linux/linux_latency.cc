// plimsoll-linux-latency: runs one snippet N times through the linux
// provider and prints p50/p95/p99 of the end-to-end latency (Sandbox::Run).
// The benchmark suite (make bench) owns the comparison with raw baselines;
// this is the provider author's quick check.
//
//   plimsoll-linux-latency [N] [javascript code]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "plimsoll/sandbox.h"

int main(int argc, char** argv) {
  int count = argc > 1 ? std::atoi(argv[1]) : 200;
  std::string code = argc > 2 ? argv[2] : "console.log(6*7)";
  auto sandbox = plimsoll::Sandbox::Open("linux");
  if (!sandbox.ok()) return 2;
  auto evidence = sandbox->CollectEvidence();
  if (!evidence.ok()) {
    std::fprintf(stderr, "%s\n", evidence.error().ToString().c_str());
    return 2;
  }
  std::vector<double> millis;
  plimsoll::Request request;
  request.javascript = plimsoll::JavascriptPayload{code};
  for (int i = 0; i < count; ++i) {
    auto start = std::chrono::steady_clock::now();
    auto result = sandbox->Run(request);
    auto elapsed = std::chrono::steady_clock::now() - start;
    if (!result.ok() || result->exit_code != 0) {
      std::fprintf(stderr, "run %d failed\n", i);
      return 1;
    }
    millis.push_back(std::chrono::duration<double, std::milli>(elapsed).count());
  }
  std::sort(millis.begin(), millis.end());
  auto at = [&](double q) { return millis[static_cast<size_t>(q * (millis.size() - 1))]; };
  std::printf("runs %d  p50 %.2f ms  p95 %.2f ms  p99 %.2f ms  min %.2f ms\n", count, at(0.5),
              at(0.95), at(0.99), millis.front());
  return 0;
}
