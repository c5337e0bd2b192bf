#include "attest/replay.h"

#include "attest/verify.h"
#include "plimsoll/wire.h"

namespace plimsoll::attest {

std::vector<std::string> CheckBeforeReplay(const BundleFile& bundle, const VerifyingKey& key,
                                           const ReplayPolicy& policy) {
  Verdict verdict = VerifyBundle(bundle, key);
  if (!verdict.problems.empty()) return std::move(verdict.problems);
  std::vector<std::string> refusals;
  if (policy.allow_granted) return refusals;
  for (size_t i = 0; i < bundle.lines.size(); ++i) {
    // Verified: every line parses, and every run and call has its request.
    Expected<BundleEntry> entry = ParseEntryLine(bundle.lines[i]);
    if (!entry.ok() || entry->kind == EntryKind::kSessionClose) continue;
    Expected<Request> request = ParseRequestJson(entry->request_json);
    if (request.ok() && !request->grant_profile.empty()) {
      refusals.push_back("line " + std::to_string(i) + ": names the grant profile \"" +
                         request->grant_profile +
                         "\": a replay would make its calls to the operator's API again "
                         "(pass --allow-granted to send it)");
    }
  }
  return refusals;
}

ResultDifference DifferingFields(const Result& then, const Result& now) {
  ResultDifference difference;
  bool timing_only = true;
  auto compare = [&](const std::string& name, bool same, bool timing = false) {
    if (same) return;
    difference.fields.push_back(name);
    timing_only = timing_only && timing;
  };
  compare("provider", then.provider == now.provider);
  compare("isolation", then.isolation == now.isolation);
  compare("environment", then.environment == now.environment);
  compare("kind", then.kind == now.kind);
  compare("exit_code", then.exit_code == now.exit_code);
  compare("timed_out", then.timed_out == now.timed_out);
  compare("stdout", then.stdout_bytes == now.stdout_bytes);
  compare("stderr", then.stderr_bytes == now.stderr_bytes);
  compare("stdout_truncated", then.stdout_truncated == now.stdout_truncated);
  compare("stderr_truncated", then.stderr_truncated == now.stderr_truncated);
  compare("duration_ms", then.duration_ms == now.duration_ms, /*timing=*/true);
  compare("outcome", then.outcome == now.outcome);
  if (then.steps.size() != now.steps.size()) {
    compare("steps", false);
  } else {
    for (size_t i = 0; i < then.steps.size(); ++i) {
      StepResult a = then.steps[i], b = now.steps[i];
      const std::string name = "steps[" + std::to_string(i) + "]";
      compare(name + ".duration_ms", a.duration_ms == b.duration_ms, /*timing=*/true);
      a.duration_ms = b.duration_ms = 0;
      compare(name, a == b);
    }
  }
  compare("artifacts", then.artifacts == now.artifacts);
  compare("cell", then.cell == now.cell);
  compare("broker", then.broker == now.broker);
  compare("advice", then.advice == now.advice);
  compare("displays", then.displays == now.displays);
  compare("displays_truncated", then.displays_truncated == now.displays_truncated);
  difference.timing_only = !difference.fields.empty() && timing_only;
  return difference;
}

}  // namespace plimsoll::attest
