// The agent's work for one job: write the files, run the steps, sweep what
// they left, collect the artifacts, and produce the report (protocol.h has
// the decisions the report encodes).
//
// Usage (main.cc):
//   auto job = DecodeJob(frame);
//   Report report = RunJob(*job, options);
//   WriteFrame(channel, EncodeReport(report), ...);
#ifndef PLIMSOLL_GUEST_AGENT_AGENT_H_
#define PLIMSOLL_GUEST_AGENT_AGENT_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "guest/agent/kept_interpreter.h"
#include "guest/agent/prestart.h"
#include "guest/agent/step_runner.h"
#include "guest/displays.h"
#include "guest/protocol.h"
#include "plimsoll/error.h"

namespace plimsoll::guest::agent {

struct AgentOptions {
  std::string work_directory = kWorkDirectory;
  // Where the steps write displays (guest/displays.h); "" for none.
  std::string displays_directory = kDisplaysDirectory;
  bool change_identity = true;  // false (--no-setuid): steps run as the agent's user
  uid_t uid = kGuestUid;
  gid_t gid = kGuestGid;
  // The agent owns the sandbox's pid namespace (it is its pid 1, or pid 2
  // under `--init`): sweeps use kill(-1) (reaper.h).
  bool owns_pid_namespace = false;
};

// All steps together capture at most this many output bytes (so the report
// stays below kMaxFrameBytes and the agent's memory stays bounded); a step
// whose streams are cut by it is flagged truncated like any other cut.
inline constexpr int64_t kTotalOutputBytes = int64_t{8} << 20;

// What a session agent (--session) keeps from job to job besides /work:
// its interpreters, by language, stopped while no cell runs.
struct SessionState {
  std::map<std::string, std::unique_ptr<KeptInterpreter>> interpreters;

  std::vector<pid_t> Spared() const;       // the living servers' pids
  std::vector<std::string> Alive() const;  // their languages, sorted
  void FreezeAll();
};

// The options a job's steps start with (`displays`: the displays directory
// is ready, so the steps get its variable).
StepOptions StepOptionsFor(const Job& job, const AgentOptions& options, bool displays);

// What every job of a one-shot agent starts with, whatever the job: /work
// opened and handed to the guest user, the displays directory made (or why
// not, as RunJob words it). A warm pool's agent makes them while it waits
// (main.cc), which is the same as making them when the job comes: nothing
// runs in between.
struct JobDirectories {
  Expected<base::UniqueFd> work;
  base::UniqueFd displays_directory;  // not valid: no displays (displays_note says why)
  std::string displays_note;
};
JobDirectories PrepareJobDirectories(const AgentOptions& options);

// Runs one job. With `session` (a session agent) the job's files replace
// what /work holds, a cell runs in the session's interpreter for its
// language, every sweep spares the (stopped) interpreters and the report
// lists the ones alive. A cell without a session is a setup failure.
// `prestarted` (one-shot agents of a warm pool, prestart.h): runs the first
// step when it Fits, else is discarded before any step runs. `prepared`
// (one-shot agents only): PrepareJobDirectories made earlier, taken over.
Report RunJob(const Job& job, const AgentOptions& options, SessionState* session = nullptr,
              PrestartedStep* prestarted = nullptr, JobDirectories* prepared = nullptr);

// Makes EncodeReport(*report) fit in kMaxFrameBytes: empties artifact
// contents (last first), then step outputs (first step first), flagging each
// as truncated and saying so in detail.
void FitReport(Report* report);

}  // namespace plimsoll::guest::agent

#endif  // PLIMSOLL_GUEST_AGENT_AGENT_H_
