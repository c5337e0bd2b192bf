// A kept JavaScript interpreter for sessions (SPEC §9): one module instance
// and one QuickJS context that live from cell to cell, so a variable set by
// one cell is there for the next.
//
// The instance is made by the first cell (interpreter_started), from the
// process's snapshot when there is one (snapshot.h: the prepared context
// becomes the session's, in the instance's own copy-on-write memory), and thrown
// away whole after a cell that ends with a deadline (124), memory (137) or
// a trap of the engine: the next cell then gets a fresh one and says so. An
// uncaught exception (exit 1) keeps the context and its variables, as a REPL
// does. Each cell is bounded as a run is (engine.h): the memory limit holds
// for the whole instance (all cells together), the soft and hard deadlines
// per cell, output per stream per cell.
//
// The instance's linear memory belongs to the thread that made it (the
// fault handler claims only the faulting thread's reservations), so the
// interpreter lives on a thread of its own; RunCell hands the cell to it and
// waits.
//
// Usage:
//
//   auto session = plimsoll::engine::JavascriptSession::Start(limits);
//   auto first = (*session)->RunCell("let x = 41", deadline);   // no value
//   auto second = (*session)->RunCell("x + 1", deadline);       // value "42"
//
// Thread-safety: RunCell may be called from any thread, one call at a time
// (a second concurrent call waits for the first).
#ifndef PLIMSOLL_ENGINE_SESSION_H_
#define PLIMSOLL_ENGINE_SESSION_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "engine/engine.h"
#include "plimsoll/error.h"

namespace plimsoll::engine {

struct KeptInstance;  // session.cc

struct SessionLimits {
  // For the whole instance; kMinimumMemoryBytes..kMaximumMemoryBytes.
  size_t memory_bytes = size_t{256} << 20;
  size_t output_cap_bytes = size_t{64} << 10;  // per stream, per cell
  size_t value_cap_bytes = size_t{64} << 10;   // the printed value, per cell
  std::chrono::milliseconds hard_grace{250};
};

struct CellOutcome {
  Outcome outcome;                   // exit code, streams, as for a run
  std::optional<std::string> value;  // the completion value as a REPL prints it
  bool value_truncated = false;
  bool interpreter_started = false;  // a fresh instance ran this cell
  bool state_kept = false;           // the instance lives on for the next cell
};

class JavascriptSession {
 public:
  // Checks the limits (a refusal, kRequest, when they are out of range) and
  // starts the interpreter's thread; the instance itself is made by the
  // first cell.
  static Expected<std::unique_ptr<JavascriptSession>> Start(const SessionLimits& limits);
  ~JavascriptSession();  // frees the instance, joins the thread
  JavascriptSession(const JavascriptSession&) = delete;
  JavascriptSession& operator=(const JavascriptSession&) = delete;

  // Runs one cell with `deadline` as its soft deadline. Errors: a script
  // above the memory limit (kRequest), or the host could not make the
  // instance (kCapacity: nothing ran). `host_call` (a granted call, null for
  // none) answers the cell's host.* for this cell only: a later cell without
  // one gets the "no grant" refusal even through a kept reference.
  Expected<CellOutcome> RunCell(std::string_view code, std::chrono::steady_clock::time_point deadline,
                                const HostCallHandler* host_call = nullptr);

  // Whether an instance is kept (a cell ran and nothing threw it away).
  bool interpreter_alive() const;

  // Throws the kept instance away (the next cell starts a fresh one), as a
  // crash of the interpreter would. For tests and for the owner's "restart".
  void DiscardInterpreter();

 private:
  struct Job;
  explicit JavascriptSession(const SessionLimits& limits);
  void Serve();                                       // the interpreter's thread
  Expected<CellOutcome> RunOnThread(const Job& job);  // on that thread only
  void FreeInstance();                                // on that thread only

  const SessionLimits limits_;
  std::unique_ptr<KeptInstance> instance_;  // touched only by the thread

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::mutex calls_;  // one RunCell at a time
  Job* job_ = nullptr;
  bool discard_ = false;
  bool stop_ = false;
  bool alive_ = false;
  std::thread thread_;
};

}  // namespace plimsoll::engine

#endif  // PLIMSOLL_ENGINE_SESSION_H_
