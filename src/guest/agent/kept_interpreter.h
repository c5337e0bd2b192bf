// A session's kept interpreter for one language: a REPL server the agent
// starts on a cell's first use and keeps from call to call (SPEC §9).
//
// Servers: python is python_repl.py (src/guest/repl, embedded in the agent
// and started as `python3 -I -c SOURCE`); javascript is `qjs
// --repl-server`. Both read request frames on their fd 3 and write answer
// frames on their fd 4 (a 4-byte big-endian length, then UTF-8 JSON), and
// write a cell's output on their stdout and stderr, which the agent drains
// like a step's, before they answer. A request is {code, value_cap_bytes,
// cell} (javascript also gets timeout_ms: qjs keeps the soft deadline
// itself; its caps are on its command line); an answer is {exit_code,
// value?, value_truncated?, interpreter_ended?} (javascript adds
// interpreter_started and state_kept: its server keeps the instance and
// throws it away after 124 or 137 itself, so only it knows).
//
// A server runs as a step does (identity, limits, seccomp, its own session)
// and is as untrusted as the code it runs: an answer is bounded and parsed
// strictly, and one that breaks the rules ends the server (the cell then
// reports exit 1 and the next cell starts afresh). A cell past its deadline
// kills the server (124); a server that dies mid-cell reports its status
// (137 for the OOM killer's SIGKILL).
//
// Between cells the server is stopped (SIGSTOP, Freeze), so nothing it runs
// in the background acts while no call is running and a sweep can kill
// everything else without a race; Run continues it.
#ifndef PLIMSOLL_GUEST_AGENT_KEPT_INTERPRETER_H_
#define PLIMSOLL_GUEST_AGENT_KEPT_INTERPRETER_H_

#include <sys/types.h>

#include <chrono>
#include <string>

#include "base/unique_fd.h"
#include "guest/agent/step_runner.h"
#include "guest/protocol.h"
#include "plimsoll/result.h"

namespace plimsoll::guest::agent {

struct CellRun {
  StepResult result;  // command CellCommand(language); exit code and streams
  ReportCell cell;
  bool timed_out = false;
};

class KeptInterpreter {
 public:
  explicit KeptInterpreter(std::string language) : language_(std::move(language)) {}
  ~KeptInterpreter();  // kills and reaps the server
  KeptInterpreter(const KeptInterpreter&) = delete;
  KeptInterpreter& operator=(const KeptInterpreter&) = delete;

  const std::string& language() const { return language_; }
  bool alive() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  // Runs one cell, starting the server first when none is alive. `options`
  // are the steps' (identity, limits, environment, output cap); `deadline`
  // the job's, `wrap_up` when every sweep and drain must be over.
  CellRun Run(const JobCell& cell, const StepOptions& options,
              std::chrono::steady_clock::time_point deadline,
              std::chrono::steady_clock::time_point wrap_up);

  // Stops the server (SIGSTOP) and waits, briefly, until it is stopped. A
  // server that is gone is reaped and forgotten.
  void Freeze();

  // SIGKILLs the server and reaps it.
  void Kill();

 private:
  bool Start(const JobCell& cell, const StepOptions& options, CellRun* run);

  const std::string language_;
  pid_t pid_ = -1;
  base::UniqueFd requests_;  // our write end of its fd 3
  base::UniqueFd answers_;   // our read end of its fd 4 (non-blocking)
  base::UniqueFd stdout_;
  base::UniqueFd stderr_;
  base::UniqueFd pidfd_;
};

// The source of python_repl.py, as built into the agent.
extern const char* const kPythonReplSource;

}  // namespace plimsoll::guest::agent

#endif  // PLIMSOLL_GUEST_AGENT_KEPT_INTERPRETER_H_
