// The quick start: run a small data-crunching JavaScript snippet through the
// library on the embedded provider and print what the result says.
//
//   make demo      (or build/release/bin/plimsoll-minimal-example)
//
// The isolation line is read from the result, never assumed: `process` means
// the code ran inside this process behind a WebAssembly wall, which is no
// wall for hostile code. For hostile code choose a stronger provider.
#include <cstdlib>
#include <iostream>

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

}  // namespace

int main() {
  const char* chosen = std::getenv("SANDBOX_PROVIDER");
  std::string provider = (chosen != nullptr && *chosen != '\0') ? chosen : "embedded";
  auto sandbox = plimsoll::Sandbox::Open(provider);
  if (!sandbox.ok()) {
    std::cerr << "cannot open provider " << provider << ": " << sandbox.error().message() << "\n";
    return 2;
  }

  plimsoll::Request request;
  request.javascript = plimsoll::JavascriptPayload{kSnippet};
  auto result = sandbox->Run(request);
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
            << "duration:   " << result->duration_ms << " ms\n"
            << "stdout:\n"
            << result->stdout_bytes;
  if (!result->stderr_bytes.empty()) std::cout << "stderr:\n" << result->stderr_bytes;
  if (result->isolation == plimsoll::Tier::kProcess) {
    std::cout << "warning: isolation `process` is no wall for hostile code; use a container, "
                 "kernel or vm provider for that.\n";
  }
  return result->exit_code == 0 ? 0 : 1;
}
