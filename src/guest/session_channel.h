// Host side of a kept agent (plimsoll-guest --session, SPEC §9): one call
// of a session over the channel of a sandbox that lives from call to call,
// as the linux and oci providers keep theirs.
//
// Usage (a ProviderSession's Run):
//   Status failure = Status::Ok();
//   auto result = channel_.Call(sandbox.channel(), request, deadline + grace, &failure);
//   if (failure.ok()) return result;          // an answer, or a refusal (nothing ran)
//   end the sandbox; return guest::AnswerFailedExchange(request, failure.error(), why, *result);
//
// Thread-safety: Call one at a time (a Session runs one call at a time);
// InterpretersAlive and Forget from any thread.
#ifndef PLIMSOLL_GUEST_SESSION_CHANNEL_H_
#define PLIMSOLL_GUEST_SESSION_CHANNEL_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "plimsoll/error.h"
#include "plimsoll/granted_calls.h"
#include "plimsoll/limits.h"
#include "plimsoll/request.h"
#include "plimsoll/result.h"
#include "plimsoll/tier.h"

namespace plimsoll::guest {

// What a provider adds to each job it sends, as its one-shot runs do.
struct SessionJobExtras {
  // The steps' RLIMIT_NPROC where no cgroup counts them (runsc, microvm).
  std::optional<int64_t> nproc;
  // A compiled seccomp filter the agent installs in each step and
  // interpreter (microvm: no host-side filter reaches inside the VM).
  std::string seccomp_filter;
};

class SessionChannel {
 public:
  SessionChannel(const Limits& limits, Tier tier, std::string environment,
                 SessionJobExtras extras = {})
      : limits_(limits),
        tier_(tier),
        environment_(std::move(environment)),
        extras_(std::move(extras)) {}

  // Builds the job (a fresh report key; cells numbered from 1), sends it on
  // `channel` and reads the sealed report by `report_deadline`. A job that
  // cannot be built is that error (a refusal: nothing ran). A failed
  // exchange sets `*exchange_failure` and returns the Result so far
  // (isolation, environment, kind, duration) for AnswerFailedExchange.
  // With `calls` (a granted call) the job's host calls are answered through
  // it while the job runs (host_calls.h); the sandbox needs its /run tmpfs.
  Expected<Result> Call(int channel, const Request& request,
                        std::chrono::steady_clock::time_point report_deadline,
                        Status* exchange_failure, GrantedCalls* calls = nullptr);

  // The interpreters the last report named alive; none after Forget().
  std::vector<std::string> InterpretersAlive() const;
  void Forget();

 private:
  const Limits limits_;
  const Tier tier_;
  const std::string environment_;
  const SessionJobExtras extras_;
  int64_t cells_ = 0;
  mutable std::mutex mutex_;
  std::vector<std::string> interpreters_;
};

// Bytes used on the sandbox's /work, seen from the host through its init's
// root (/proc/PID/root/work); 0 when it cannot be read.
int64_t WorkBytesUsed(pid_t init);

}  // namespace plimsoll::guest

#endif  // PLIMSOLL_GUEST_SESSION_CHANNEL_H_
