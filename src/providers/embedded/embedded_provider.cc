#include "plimsoll/embedded_provider.h"

#include <chrono>

#include "engine/engine.h"
#include "engine/session.h"
#include "providers/embedded/exam_project.h"
#include "providers/embedded/host_call_bridge.h"

namespace plimsoll {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view kWallWarning =
    "Tier process: the code runs inside this process behind a WebAssembly wall; this is no wall "
    "for hostile code.";

int64_t MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

Result ResultOf(engine::Outcome outcome, PayloadKind kind, Clock::time_point start) {
  Result result;
  result.isolation = Tier::kProcess;
  result.environment = EmbeddedEnvironment();
  result.kind = kind;
  result.exit_code = outcome.exit_code;
  result.timed_out = outcome.timed_out;
  result.stdout_bytes = std::move(outcome.stdout_bytes);
  result.stderr_bytes = std::move(outcome.stderr_bytes);
  result.stdout_truncated = outcome.stdout_truncated;
  result.stderr_truncated = outcome.stderr_truncated;
  result.displays = std::move(outcome.displays);
  result.displays_truncated = outcome.displays_truncated;
  MeasureDisplays(result.displays);
  result.duration_ms = MillisecondsSince(start);
  return result;
}

Error OnlyJavascript(const Request& request) {
  std::string kind(request.kind() ? PayloadKindName(*request.kind()) : "this");
  if (request.cell) kind = request.cell->language + " cell";
  if (request.project) {
    return Refusal(
        NotDispatched::kUnsupported,
        "The embedded provider runs JavaScript, and of projects only exams (one plimsoll-trial "
        "step with a `qjs --controller FILE` controller, docs/exams.md); other projects need a "
        "container, kernel or vm provider (e.g. --provider linux).");
  }
  return Refusal(NotDispatched::kUnsupported,
                 "The embedded provider runs JavaScript only; " + kind +
                     " payloads need a container, kernel or vm provider (e.g. --provider linux).");
}

// A session: one kept engine instance for JavaScript cells. The wall is the
// instance's bounds-checked memory inside this process, so there is no
// host-side state to re-read before a call and no /work.
class EmbeddedSession final : public ProviderSession {
 public:
  EmbeddedSession(std::unique_ptr<engine::JavascriptSession> javascript, const Limits& limits)
      : javascript_(std::move(javascript)), limits_(limits) {}

  Tier tier() const override { return Tier::kProcess; }
  std::string environment() const override { return EmbeddedEnvironment(); }
  Status CheckBoundary() override { return Status::Ok(); }
  int64_t DiskUsedBytes() override { return 0; }
  std::vector<std::string> InterpretersAlive() override {
    if (javascript_->interpreter_alive()) return {"javascript"};
    return {};
  }

  Expected<Result> Run(const Request& request, Deadline deadline) override {
    return Evaluate(request, deadline, nullptr);
  }

  // host.* reaches `calls` for this call only, in a fresh instance or in
  // the kept one (engine/session.h).
  Expected<Result> RunGranted(const Request& request, Deadline deadline,
                              GrantedCalls& calls) override {
    return Evaluate(request, deadline, &calls);
  }

 private:
  Expected<Result> Evaluate(const Request& request, Deadline deadline, GrantedCalls* calls) {
    const Clock::time_point start = Clock::now();
    engine::HostCallHandler host_call;
    if (calls != nullptr) host_call = HostCallBridge(*calls, deadline);
    if (request.javascript) {
      engine::Limits limits;
      limits.memory_bytes = static_cast<size_t>(limits_.memory_bytes);
      limits.output_cap_bytes = static_cast<size_t>(limits_.output_cap_bytes);
      limits.deadline = deadline;
      limits.host_call = std::move(host_call);
      auto outcome = engine::EvaluateJavascript(request.javascript->code, limits);
      if (!outcome.ok()) return outcome.error();
      return ResultOf(std::move(*outcome), PayloadKind::kJavascript, start);
    }
    if (!request.cell || request.cell->language != "javascript") return OnlyJavascript(request);
    auto cell = javascript_->RunCell(request.cell->code, deadline, &host_call);
    if (!cell.ok()) return cell.error();
    Result result = ResultOf(std::move(cell->outcome), PayloadKind::kCell, start);
    result.cell = CellResult{std::move(cell->value), cell->value_truncated,
                             cell->interpreter_started, cell->state_kept};
    return result;
  }

  std::unique_ptr<engine::JavascriptSession> javascript_;
  Limits limits_;
};

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
    description.capabilities.sessions = true;
    description.capabilities.grants = true;
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
        // A hoarder whose first buffer is already past the 4 MiB limit: the
        // limit refuses it before a page is touched (hoarders that fill the
        // memory first are engine_test's and the conformance suite's; here,
        // on every start of the CLI, they cost 5 to 10 ms of page faults).
        {"memory_limit_enforced", "const a = []; for (;;) a.push(new ArrayBuffer(16 << 20));",
         static_cast<int64_t>(engine::kMinimumMemoryBytes), 2000,
         static_cast<int>(kExitOutOfMemory), ""},
        {"deadline_enforced", "for (;;) {}", limits_.memory_bytes, 1,
         static_cast<int>(kExitTimedOut), ""},
        // fetch exists (as on the hosts snippets are written for) but must
        // reject without touching a network.
        {"no_host_api",
         "const n = ['require','process','std','os'].filter(n => typeof globalThis[n] "
         "!== 'undefined').length; fetch('http://127.0.0.1/').then(() => console.log('fetched'), "
         "e => console.log(e.code === 'ERR_NO_NETWORK' ? n : 'fetch: ' + e))",
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
    return Evaluate(request, deadline, nullptr);
  }

  // host.call reaches `calls` through the engine's host_call import, on the
  // running thread (host_call_bridge.h).
  Expected<Result> RunGranted(const Request& request, Deadline deadline,
                              GrantedCalls& calls) override {
    return Evaluate(request, deadline, &calls);
  }

  Expected<std::unique_ptr<ProviderSession>> OpenSession(const SessionSpec& spec,
                                                         Deadline /*deadline*/) override {
    if (!spec.environment.empty() && spec.environment != EmbeddedEnvironment()) {
      return Refusal(NotDispatched::kEnvironment, "The request requires environment " +
                                                      spec.environment + "; this engine is " +
                                                      EmbeddedEnvironment() + ".");
    }
    engine::SessionLimits limits;
    limits.memory_bytes = static_cast<size_t>(limits_.memory_bytes);
    limits.output_cap_bytes = static_cast<size_t>(limits_.output_cap_bytes);
    limits.value_cap_bytes = static_cast<size_t>(limits_.output_cap_bytes);
    auto javascript = engine::JavascriptSession::Start(limits);
    if (!javascript.ok()) return javascript.error();
    return std::unique_ptr<ProviderSession>(
        std::make_unique<EmbeddedSession>(std::move(*javascript), limits_));
  }

 private:
  // A fresh engine instance for one run; host calls go to `calls`, or are
  // refused ("no grant") when it is null.
  Expected<Result> Evaluate(const Request& request, Deadline deadline, GrantedCalls* calls) {
    if (request.project && IsExamProject(*request.project) && calls == nullptr) {
      auto exam = RunExamProject(*request.project, deadline, limits_);
      if (!exam.ok()) return exam;
      exam->isolation = Tier::kProcess;
      exam->environment = EmbeddedEnvironment();
      return exam;
    }
    if (!request.javascript) return OnlyJavascript(request);
    engine::Limits limits;
    limits.memory_bytes = static_cast<size_t>(limits_.memory_bytes);
    limits.output_cap_bytes = static_cast<size_t>(limits_.output_cap_bytes);
    limits.deadline = deadline;
    if (calls != nullptr) limits.host_call = HostCallBridge(*calls, deadline);

    Clock::time_point start = Clock::now();
    auto outcome = engine::EvaluateJavascript(request.javascript->code, limits);
    if (!outcome.ok()) return outcome.error();
    return ResultOf(std::move(*outcome), PayloadKind::kJavascript, start);
  }

  std::vector<std::pair<std::string, std::string>> Facts() const {
    return {{"engine", identity_.engine},
            {"wasm_sha256", identity_.wasm_sha256},
            {"wasm2c_sha256", identity_.wasm2c_sha256},
            {"wall", identity_.wall},
            {"instances",
             "one per run, thrown away after: its own memory, started from a sealed "
             "copy-on-write snapshot of an instance prepared once per process "
             "(src/engine/snapshot.h)"},
            {"exams",
             "in process: projects whose one step is plimsoll-trial with a qjs --controller "
             "controller (docs/exams.md)"},
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
