// Runs one step: a program with its argv, as the guest identity, in its own
// session and process group, with rlimits, a clean environment, cwd at the
// work directory, stdin from /dev/null and stdout/stderr captured through
// pipes up to a cap (drained and discarded beyond it so the step never
// blocks on a full pipe). Every other descriptor is closed before exec.
//
// When the step's main process exits, or the deadline passes, everything
// the step started is killed and reaped (reaper.h) before RunStep returns;
// that sweep and the last read of the pipes end by `wrap_up` at the latest
// (the job's deadline plus kAgentWrapUpMs), so the report is never late.
//
// Before exec the child raises its oom_score_adj to 1000 (best effort: it
// needs /proc), so the memory cgroup's OOM killer picks a step, not the
// agent; the provider protects the agent itself (docs/linux-provider.md).
#ifndef PLIMSOLL_GUEST_AGENT_STEP_RUNNER_H_
#define PLIMSOLL_GUEST_AGENT_STEP_RUNNER_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "guest/agent/reaper.h"
#include "plimsoll/result.h"

namespace plimsoll::guest::agent {

struct StepOptions {
  std::string work_directory;
  bool change_identity = true;  // false: run as the agent's own user (tests)
  uid_t uid = 0;
  gid_t gid = 0;
  int64_t nofile = 256;
  int64_t fsize_bytes = 0;  // 0: no RLIMIT_FSIZE
  int64_t nproc = 0;        // 0: no RLIMIT_NPROC
  int64_t output_cap_bytes = 0;
  std::vector<std::string> environment;  // complete "KEY=VALUE" list
  // A compiled seccomp filter (raw struct sock_filter array, a multiple of 8
  // bytes) installed in the child after no_new_privs, just before exec;
  // empty: none. A filter the kernel refuses fails the step's start (126).
  std::string seccomp_filter;
  SweepScope sweep_scope = SweepScope::kDescendants;  // how leftovers are found (reaper.h)
  // Processes every sweep leaves alone (a session's kept interpreters).
  std::vector<pid_t> spared;
  // Start with SIGHUP ignored (a kept interpreter: its process group holds
  // it stopped between calls, and a kernel may send such an orphaned group
  // SIGHUP and SIGCONT when a sweep kills one of its other members; gVisor
  // does).
  bool ignore_hangup = false;
};

enum class StepEnd {
  kExited,       // the main process ended (exit_code holds its status)
  kTimedOut,     // killed at the deadline (exit code 124)
  kCannotStart,  // exec or the pre-exec setup failed (126/127, reason on stderr)
};

struct StepRun {
  StepResult result;
  StepEnd end = StepEnd::kExited;
  // The sweep after the step found the agent without any child: nothing
  // the step started is left (the agent is a subreaper).
  bool nothing_left = false;
};

// The environment steps get: PATH=/usr/local/bin:/usr/bin:/bin, HOME=`home`
// (the work directory), LANG=C.UTF-8, then `extra` ("KEY=VALUE", replacing
// an earlier entry with the same key). Nothing of the agent's own
// environment leaks in.
std::vector<std::string> StepEnvironment(const std::vector<std::string>& extra,
                                         const std::string& home);

// A process started as a step is (identity, limits, seccomp, its own
// session, cwd, environment, stdin /dev/null or a pipe), not waited for.
struct Launched {
  pid_t pid = -1;              // -1: it could not start; exit_code and failure say why
  base::UniqueFd stdout_read;  // non-blocking read ends of its stdout ...
  base::UniqueFd stderr_read;  // ... and stderr
  base::UniqueFd stdin_write;  // non-blocking write end of its stdin (stdin_pipe only)
  int64_t exit_code = 0;       // kExitNotFound or kExitCannotExecute
  std::string failure;         // one sentence
};

// Runs `argv` as a step (LaunchStep without descriptors to hand on), waits
// for it until `deadline`, captures its output and sweeps what it left.
//
// `launched` (optional): the step's process, started earlier by
// LaunchStep(..., stdin_pipe = true) with these `options` (a prestarted
// step, prestart.h); RunStep then starts nothing, writes `stdin_bytes` to
// its stdin and closes it, and otherwise treats it exactly as a process it
// started itself. `argv` is what the result names.
StepRun RunStep(const std::vector<std::string>& argv, const StepOptions& options,
                std::chrono::steady_clock::time_point deadline,
                std::chrono::steady_clock::time_point wrap_up, Launched* launched = nullptr,
                std::string_view stdin_bytes = {});

// The signals whose disposition in the agent is not SIG_DFL (ignored or
// handled), read at the first call and kept: the agent sets its dispositions
// once at startup. Each step's child resets just these to SIG_DFL instead of
// all 64 (each call is costly under gVisor's ptrace platform). The agent's
// hard limits (which it never changes) are read once the same way.
const std::vector<int>& AgentSignalsToReset();
// Reads both now (main.cc, right after the dispositions are set: a pooled
// agent then has them before its job).
void PrepareStepLaunches();

// Starts `argv` with `inherit` (at most 4 descriptors) as its 3, 4, ...;
// every other descriptor above 2 is closed at exec. RunStep is this plus
// the wait, the capture and the sweep. The caller owns the child: it must
// reap it. `stdin_pipe`: the child's stdin is a pipe whose write end
// (non-blocking) is Launched::stdin_write, instead of /dev/null.
Launched LaunchStep(const std::vector<std::string>& argv, const StepOptions& options,
                    const std::vector<int>& inherit, bool stdin_pipe = false);

// A stream captured up to a cap; bytes beyond it are read and dropped.
struct OutputCapture {
  int64_t cap = 0;
  std::string bytes;
  bool truncated = false;
  void Add(const char* data, size_t size);
};

// Reads what `fd` (non-blocking) has now, a bounded amount so that a flood
// cannot starve a deadline check; closes `fd` at end of file or on an error.
void Drain(base::UniqueFd& fd, OutputCapture& capture);

}  // namespace plimsoll::guest::agent

#endif  // PLIMSOLL_GUEST_AGENT_STEP_RUNNER_H_
