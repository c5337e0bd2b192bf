#include "providers/linux/pid.h"

#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace plimsoll::linux_sandbox {

pid_t RawFork() {
  return static_cast<pid_t>(syscall(SYS_clone, SIGCHLD, nullptr, nullptr, nullptr, nullptr));
}

void RunInit(pid_t agent) {
  int agent_status = 0;
  for (;;) {
    int status = 0;
    pid_t reaped = static_cast<pid_t>(syscall(SYS_wait4, -1, &status, __WALL, nullptr));
    if (reaped < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing left
    }
    if (reaped == agent) {
      agent_status = status;
      break;  // leaving kills the rest of the namespace
    }
  }
  int code = WIFEXITED(agent_status)     ? WEXITSTATUS(agent_status)
             : WIFSIGNALED(agent_status) ? 128 + WTERMSIG(agent_status)
                                         : 1;
  syscall(SYS_exit_group, code);
  __builtin_unreachable();
}

}  // namespace plimsoll::linux_sandbox
