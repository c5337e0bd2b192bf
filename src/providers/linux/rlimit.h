// Resource limits (setrlimit) of the whole linux sandbox.
//
// cgroups bound memory, pids and CPU; rlimits add what cgroups do not: no
// core dumps, a bounded descriptor table, and no file larger than /work.
// The agent may lower them further per step (guest::Job::nofile etc.).
//
// Usage (parent, before clone): RlimitPlan plan = RlimitPlanFor(limits);
//        (child): int err = ApplyRlimits(plan, &what);
#ifndef PLIMSOLL_PROVIDERS_LINUX_RLIMIT_H_
#define PLIMSOLL_PROVIDERS_LINUX_RLIMIT_H_

#include <sys/resource.h>

#include "plimsoll/limits.h"

namespace plimsoll::linux_sandbox {

struct RlimitPlan {
  rlim_t core = 0;
  rlim_t nofile = 1024;
  rlim_t fsize = 0;  // bytes; set from Limits::work_bytes
};

RlimitPlan RlimitPlanFor(const Limits& limits);

// Child side, async-signal-safe. Returns 0 or an errno; `*what` names the call.
int ApplyRlimits(const RlimitPlan& plan, const char** what);

}  // namespace plimsoll::linux_sandbox

#endif  // PLIMSOLL_PROVIDERS_LINUX_RLIMIT_H_
