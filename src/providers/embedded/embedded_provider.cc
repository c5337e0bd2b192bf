#include "providers/embedded/embedded_provider.h"

#include <chrono>

#include "engine/engine.h"

namespace plimsoll {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kWallWarning =
    "Tier process: the code runs inside this process behind a WebAssembly wall; this is no wall "
    "for hostile code.";

int64_t MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

class EmbeddedProvider final : public Provider {
 public:
  explicit EmbeddedProvider(const Limits& limits)
      : limits_(limits), identity_(engine::Identity()) {}

  std::string_view name() const override { return "embedded"; }

  Description Describe() const override {
    Description description;
    description.provider = "embedded";
    description.tier = Tier::kProcess;
    description.environment = EmbeddedEnvironment();
    description.capabilities.payloads = {PayloadKind::kJavascript};
    description.limits = limits_;
    description.details = Facts();
    return description;
  }

  Status Reconcile() override { return Status::Ok(); }  // nothing outlives a run
  Status Preflight() override { return Status::Ok(); }

  // Runs real snippets through the engine and checks what the wall must hold:
  // the engine answers, the memory limit stops a hoarder, a busy loop stops at
  // the deadline, and no host API is reachable.
  Expected<Evidence> SmokeTest(Deadline deadline) override {
    Evidence evidence;
    evidence.tier = Tier::kProcess;
    evidence.summary = std::string(kWallWarning);
    evidence.facts = Facts();
    evidence.collected_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();

    struct Probe {
      const char* name;
      const char* code;
      int64_t memory_bytes;
      int64_t timeout_ms;
      int want_exit;
      const char* want_stdout;
    };
    const Probe probes[] = {
        {"engine_answers", "console.log(6*7)", limits_.memory_bytes, 2000, 0, "42\n"},
        {"memory_limit_enforced", "const a = []; for (;;) a.push(new Array(1 << 16).fill(1));",
         static_cast<int64_t>(engine::kMinimumMemoryBytes), 2000,
         static_cast<int>(kExitOutOfMemory), ""},
        {"deadline_enforced", "for (;;) {}", limits_.memory_bytes, 5,
         static_cast<int>(kExitTimedOut), ""},
        {"no_host_api",
         "console.log(['require','process','std','os','fetch'].filter(n => typeof globalThis[n] "
         "!== 'undefined').length)",
         limits_.memory_bytes, 2000, 0, "0\n"},
    };
    for (const Probe& probe : probes) {
      if (Clock::now() >= deadline) {
        return Failure(ErrorCode::kDeadlineExceeded, "The smoke test ran out of time.");
      }
      engine::Limits limits;
      limits.memory_bytes = static_cast<size_t>(probe.memory_bytes);
      limits.output_cap_bytes = 4096;
      limits.deadline =
          std::min(deadline, Clock::now() + std::chrono::milliseconds(probe.timeout_ms));
      auto outcome = engine::EvaluateJavascript(probe.code, limits);
      if (!outcome.ok()) return outcome.error().WithContext(probe.name);
      bool passed =
          outcome->exit_code == probe.want_exit && outcome->stdout_bytes == probe.want_stdout;
      evidence.checks.push_back({probe.name, passed,
                                 "exit " + std::to_string(outcome->exit_code) + ", stdout " +
                                     std::to_string(outcome->stdout_bytes.size()) + " bytes"});
    }
    return evidence;
  }

  Expected<Result> Run(const Request& request, Deadline deadline) override {
    if (!request.javascript) {
      std::string kind(request.kind() ? PayloadKindName(*request.kind()) : "this");
      return Refusal(
          NotDispatched::kUnsupported,
          "The embedded provider runs JavaScript snippets only; " + kind +
              " payloads need a container, kernel or vm provider (e.g. --provider linux).");
    }
    engine::Limits limits;
    limits.memory_bytes = static_cast<size_t>(limits_.memory_bytes);
    limits.output_cap_bytes = static_cast<size_t>(limits_.output_cap_bytes);
    limits.deadline = deadline;

    Clock::time_point start = Clock::now();
    auto outcome = engine::EvaluateJavascript(request.javascript->code, limits);
    if (!outcome.ok()) return outcome.error();

    Result result;
    result.isolation = Tier::kProcess;
    result.environment = EmbeddedEnvironment();
    result.kind = PayloadKind::kJavascript;
    result.exit_code = outcome->exit_code;
    result.timed_out = outcome->timed_out;
    result.stdout_bytes = std::move(outcome->stdout_bytes);
    result.stderr_bytes = std::move(outcome->stderr_bytes);
    result.stdout_truncated = outcome->stdout_truncated;
    result.stderr_truncated = outcome->stderr_truncated;
    result.duration_ms = MillisecondsSince(start);
    return result;
  }

 private:
  std::vector<std::pair<std::string, std::string>> Facts() const {
    return {{"engine", identity_.engine},
            {"wasm_sha256", identity_.wasm_sha256},
            {"wasm2c_sha256", identity_.wasm2c_sha256},
            {"wall", identity_.wall},
            {"warning", std::string(kWallWarning)}};
  }

  Limits limits_;
  engine::EngineIdentity identity_;
};

}  // namespace

std::unique_ptr<Provider> MakeEmbeddedProvider(const Limits& limits) {
  return std::make_unique<EmbeddedProvider>(limits);
}

std::string EmbeddedEnvironment() {
  return "sha256:" + engine::Identity().wasm_sha256;
}

}  // namespace plimsoll
