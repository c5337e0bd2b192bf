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
#include <string>

#include "guest/protocol.h"

namespace plimsoll::guest::agent {

struct AgentOptions {
  std::string work_directory = kWorkDirectory;
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

Report RunJob(const Job& job, const AgentOptions& options);

// Makes EncodeReport(*report) fit in kMaxFrameBytes: empties artifact
// contents (last first), then step outputs (first step first), flagging each
// as truncated and saying so in detail.
void FitReport(Report* report);

}  // namespace plimsoll::guest::agent

#endif  // PLIMSOLL_GUEST_AGENT_AGENT_H_
