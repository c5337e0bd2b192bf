// The quick start: run a small data-crunching JavaScript snippet through the
// library on the embedded provider and print what the result says. It links
// the Sandbox and the embedded provider only (plimsoll_sandbox,
// plimsoll_embedded_provider), so `make demo` builds no OS-level provider;
// a program that chooses its provider by name uses Sandbox::Open (libplimsoll).
//
//   make demo      (or build/release/bin/plimsoll-minimal-example)
//
// The isolation line is read from the result, never assumed: `process` means
// the code ran inside this process behind a WebAssembly wall, which is no
// wall for hostile code. For hostile code choose a stronger provider.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <string>

#include "plimsoll/embedded_provider.h"
#include "plimsoll/sandbox.h"

namespace {

constexpr const char* kSnippet = R"js(
const sales = [
  {department: "tools", amount: 1200.50},
  {department: "garden", amount: 310.00},
  {department: "tools", amount: 99.95},
  {department: "kitchen", amount: 450.25},
  {department: "garden", amount: 89.10},
];
const totals = {};
for (const {department, amount} of sales) {
  totals[department] = (totals[department] ?? 0) + amount;
}
for (const [department, total] of Object.entries(totals).sort()) {
  console.log(`${department.padEnd(8)} ${total.toFixed(2).padStart(9)}`);
}
)js";

// A duration with the precision that makes it true: the result's
// duration_ms is whole milliseconds, and an embedded run takes a few hundredths
// of one, which "0 ms" would misstate.
std::string DescribeDuration(std::chrono::steady_clock::duration elapsed) {
  const double ms = std::chrono::duration<double, std::milli>(elapsed).count();
  char text[32];
  std::snprintf(text, sizeof text, ms < 1 ? "%.2f ms" : ms < 10 ? "%.1f ms" : "%.0f ms", ms);
  return text;
}

}  // namespace

int main() {
  plimsoll::Sandbox sandbox(plimsoll::MakeEmbeddedProvider(plimsoll::Limits{}));

  plimsoll::Request request;
  request.javascript = plimsoll::JavascriptPayload{kSnippet};
  // The first run would collect the evidence (preflight and smoke test) itself;
  // collected here first, the duration below is the run's alone.
  auto evidence = sandbox.CollectEvidence();
  if (!evidence.ok()) {
    std::cout << "nothing ran: the embedded engine failed its own check: "
              << evidence.error().message() << "\n";
    return 3;
  }
  const auto started = std::chrono::steady_clock::now();
  auto result = sandbox.Run(request);
  const auto elapsed = std::chrono::steady_clock::now() - started;
  if (!result.ok()) {
    if (auto reason = plimsoll::NotDispatchedReason(result.error())) {
      std::cout << "nothing ran: " << plimsoll::NotDispatchedName(*reason) << ": "
                << result.error().message() << "\n";
      return 3;
    }
    std::cout << "error (the code may have run): " << result.error().message() << "\n";
    return 4;
  }
  bool truncated = result->stdout_truncated || result->stderr_truncated;
  std::cout << "provider:   " << result->provider << "\n"
            << "isolation:  " << plimsoll::TierName(result->isolation) << "\n"
            << "exit code:  " << result->exit_code << "\n"
            << "timed out:  " << (result->timed_out ? "yes" : "no") << "\n"
            << "truncated:  " << (truncated ? "yes" : "no") << "\n"
            << "duration:   " << DescribeDuration(elapsed) << " (the whole Sandbox::Run call)\n"
            << "stdout:\n"
            << result->stdout_bytes;
  if (!result->stderr_bytes.empty()) std::cout << "stderr:\n" << result->stderr_bytes;
  if (result->isolation == plimsoll::Tier::kProcess) {
    std::cout << "warning: isolation `process` is no wall for hostile code; use a container, "
                 "kernel or vm provider for that.\n";
  }
  return result->exit_code == 0 ? 0 : 1;
}
