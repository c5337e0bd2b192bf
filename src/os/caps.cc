#include "os/caps.h"

#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>

namespace plimsoll::os {

uint64_t AgentCapabilities() {
  uint64_t keep = 0;
  for (int cap : {CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_KILL, CAP_SETGID, CAP_SETUID}) {
    keep |= uint64_t{1} << cap;
  }
  return keep;
}

uint64_t SessionAgentCapabilities() {
  return AgentCapabilities() | uint64_t{1} << CAP_SYS_PTRACE;
}

int LastCapability() {
  std::ifstream file("/proc/sys/kernel/cap_last_cap");
  int last = 0;
  if (file >> last && last > 0 && last < 64) return last;
  return 40;
}

int DropCapabilities(uint64_t keep, int last_capability, const char** what) {
  for (int cap = 0; cap <= last_capability; ++cap) {
    if (keep & (uint64_t{1} << cap)) continue;
    *what = "prctl(PR_CAPBSET_DROP)";
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno != EINVAL) return errno;
  }
  *what = "prctl(PR_CAP_AMBIENT_CLEAR_ALL)";
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) != 0) return errno;
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  for (int word = 0; word < 2; ++word) {
    auto bits = static_cast<uint32_t>(keep >> (32 * word));
    data[word].effective = bits;
    data[word].permitted = bits;
    data[word].inheritable = 0;  // nothing passes to programs the agent starts
  }
  *what = "capset";
  if (syscall(SYS_capset, &header, data) != 0) return errno;
  return 0;
}

int SetNoNewPrivileges(const char** what) {
  *what = "prctl(PR_SET_NO_NEW_PRIVS)";
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  return 0;
}

}  // namespace plimsoll::os
