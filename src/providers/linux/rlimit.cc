#include "providers/linux/rlimit.h"

#include <cerrno>

namespace plimsoll::linux_sandbox {

RlimitPlan RlimitPlanFor(const Limits& limits) {
  RlimitPlan plan;
  plan.fsize = static_cast<rlim_t>(limits.work_bytes > 0 ? limits.work_bytes : 0);
  return plan;
}

int ApplyRlimits(const RlimitPlan& plan, const char** what) {
  struct Entry {
    int resource;
    rlim_t value;
    const char* what;
  };
  const Entry entries[] = {
      {RLIMIT_CORE, plan.core, "setrlimit(RLIMIT_CORE)"},
      {RLIMIT_NOFILE, plan.nofile, "setrlimit(RLIMIT_NOFILE)"},
      {RLIMIT_FSIZE, plan.fsize, "setrlimit(RLIMIT_FSIZE)"},
  };
  for (const Entry& entry : entries) {
    rlimit value{entry.value, entry.value};
    *what = entry.what;
    if (setrlimit(entry.resource, &value) != 0) return errno;
  }
  return 0;
}

}  // namespace plimsoll::linux_sandbox
