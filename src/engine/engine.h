// The JavaScript engine behind the `embedded` provider: QuickJS compiled to
// one wasm32-wasi module, translated to C by wasm2c and compiled into this
// process, behind a wall of bounds-checked linear memory (guard pages).
//
// Every call gets a fresh module instance (its own linear memory, a QuickJS
// runtime no other run used) that is thrown away afterwards: nothing a script
// does survives into the next run. The instance starts from the process's
// snapshot of a freshly initialised one (snapshot.h: a sealed image mapped
// copy-on-write), so a run does not pay for initialisation. A run is bounded by
//   - memory twice: QuickJS's own allocation limit (memory_bytes) and the
//     linear memory's maximum (memory_bytes plus a fixed allowance for the
//     guest's stack and static data);
//   - time twice: a soft deadline that QuickJS's interrupt handler polls
//     (also inside regex matching), and a hard deadline (soft + hard_grace)
//     enforced by a per-thread timer signal that stops the guest wherever it
//     is; the trapped instance is discarded;
//   - output: each stream is captured up to output_cap_bytes; truncation is
//     flagged, never silent.
//
// The script sees the language (ES2023, BigInt, top-level await), console.*
// (log/info/debug/dir/table to stdout, warn/error/trace/assert to stderr),
// real-time setTimeout/setInterval (the run sleeps until the next timer, no
// CPU spent; pending timers keep it alive as in Node; a wait that reaches the
// deadline ends the run as timed out), queueMicrotask, the web APIs of
// kJavascriptGlobals below (performance, crypto, TextEncoder/TextDecoder,
// URL, structuredClone, atob/btoa, AbortController, EventTarget, fetch that
// rejects: no network), a frozen `host` object (host.call/get/post) that
// throws `Error` with code "no_grant" when the run has no grant, and
// display(value[, mime]) (rich outputs: Outcome::displays). There is no
// std/os module, require, process, file or network API, and no Intl
// (docs/javascript.md).
//
// Exit codes: 0 success; 1 uncaught exception, unhandled promise rejection
// or an engine trap (message and stack on stderr); 124 deadline (timed_out);
// 137 out of memory (out_of_memory).
//
// Usage:
//
//   plimsoll::engine::Limits limits;
//   limits.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
//   auto outcome = plimsoll::engine::EvaluateJavascript("console.log(6*7)", limits);
//   if (!outcome.ok()) return outcome.error();   // the engine could not run
//   // outcome->exit_code == 0, outcome->stdout_bytes == "42\n"
//
// Thread-safety: EvaluateJavascript may run on many threads at once; each
// run belongs to the calling thread for its whole duration. The engine uses
// the real-time signal wasm::HardDeadlineSignal() (SIGRTMIN+4) and installs
// SIGSEGV/SIGBUS handlers that claim only faults inside guest memory.
#ifndef PLIMSOLL_ENGINE_ENGINE_H_
#define PLIMSOLL_ENGINE_ENGINE_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/javascript_globals.h"
#include "plimsoll/error.h"
#include "plimsoll/result.h"

namespace plimsoll::engine {

// Answer of a host call (the broker's side of host.call). `ok` false makes
// the script's call throw Error(message) with code "refused".
struct HostAnswer {
  bool ok = false;
  std::string body;  // JSON when ok, else a whole-sentence message
};

// Called on the running thread, synchronously, with the script's request as
// JSON. Must not call back into the engine.
using HostCallHandler = std::function<HostAnswer(std::string_view request)>;

struct Limits {
  // QuickJS heap limit. At least kMinimumMemoryBytes, at most
  // kMaximumMemoryBytes.
  size_t memory_bytes = size_t{256} << 20;
  // Per stream (stdout and stderr each).
  size_t output_cap_bytes = size_t{64} << 10;
  // Soft deadline. The default (time_point{}) means 5 s after the call.
  std::chrono::steady_clock::time_point deadline{};
  // The hard deadline is deadline + hard_grace.
  std::chrono::milliseconds hard_grace{250};
  // Absent: host calls are refused ("no grant").
  HostCallHandler host_call;
  // false: only the language, console, timers and `host` (the benchmark's
  // baseline for the start-up cost of the web APIs). Runs always use true.
  bool web_apis = true;
  // true: the instance starts from the process's snapshot (snapshot.h); the
  // first run with these flags makes it. false: the module is instantiated
  // and QuickJS initialised from scratch (the benchmark's comparison). The
  // script sees the same fresh state either way (engine_test checks).
  bool from_snapshot = true;
};

// The globals a script finds beyond the ECMAScript built-ins
// (base/javascript_globals.h, which describe lists). The same list on every
// tier (the image's qjs is this engine); engine_test checks it against the
// engine's globalThis.
using base::kJavascriptGlobals;

inline constexpr size_t kMinimumMemoryBytes = size_t{4} << 20;
inline constexpr size_t kMaximumMemoryBytes = size_t{3} << 30;
inline constexpr std::chrono::milliseconds kDefaultTimeout{5000};

inline constexpr int kExitOk = 0;
inline constexpr int kExitUncaught = 1;
inline constexpr int kExitTimeout = 124;
inline constexpr int kExitOutOfMemory = 137;

struct Outcome {
  int exit_code = 0;
  bool timed_out = false;
  bool out_of_memory = false;
  std::string stdout_bytes;
  std::string stderr_bytes;
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  // What display() showed, in order (mime and data; no sizes: whoever
  // reports them measures the bytes), at most kMaxDisplays and
  // kMaxDisplayBytes together; displays_truncated when more were dropped.
  std::vector<Display> displays;
  bool displays_truncated = false;
};

// Runs `code` in a fresh instance. A non-zero exit code is an Outcome, not
// an error. Errors: invalid limits (a refusal, kRequest: nothing ran), or
// the host could not build the wall (address space, timer, signal handler:
// kResourceExhausted / kInternal, nothing ran).
Expected<Outcome> EvaluateJavascript(std::string_view code, const Limits& limits);

// A fresh instance made and initialised ahead of its script, for a process
// that has to wait for the script (qjs reading it from stdin in a pooled
// sandbox): Prepare before the wait, Run after it, so the instantiation, the
// QuickJS runtime and context and their page faults are off the run's path.
// What the script sees and how it ends are as with EvaluateJavascript (the
// same driver path as a run from the snapshot). Prepare and Run must be
// called on the same thread (the instance's memory belongs to it); one Run
// per instance. The destructor frees the instance, run or not, so a process
// that exits after its one run may leave that to its exit (src/exe/qjs_main.cc).
//
//   auto prepared = PreparedInstance::Prepare(limits);   // before reading
//   ... read the script ...
//   auto outcome = (*prepared)->Run(code, limits);       // same memory limit
class PreparedInstance {
 public:
  // `limits`: the memory limit and web_apis the run will have (its deadline
  // and host_call are Run's). Errors as EvaluateJavascript's.
  static Expected<std::unique_ptr<PreparedInstance>> Prepare(const Limits& limits);
  ~PreparedInstance();
  PreparedInstance(const PreparedInstance&) = delete;
  PreparedInstance& operator=(const PreparedInstance&) = delete;

  // As EvaluateJavascript(code, limits); limits.memory_bytes and web_apis
  // must be Prepare's (else kInvalidArgument), and only once.
  Expected<Outcome> Run(std::string_view code, const Limits& limits);

 private:
  struct State;
  PreparedInstance();
  std::unique_ptr<State> state_;
};

struct EngineIdentity {
  std::string engine;         // "QuickJS 2025-04-26 (Debian quickjs 2025.04.26-1)"
  std::string wasm_sha256;    // of the guest module, hex
  std::string wasm2c_sha256;  // of the generated C, hex
  std::string wall;           // "bounds-checked linear memory (guard pages)"
};

// Fixed at build time. Thread-safe.
EngineIdentity Identity();

}  // namespace plimsoll::engine

#endif  // PLIMSOLL_ENGINE_ENGINE_H_
