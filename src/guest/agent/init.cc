#include "guest/agent/init.h"

#include <errno.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "os/descriptors.h"

namespace plimsoll::guest::agent {
namespace {

[[noreturn]] void ReapUntilTheAgentExits(pid_t agent) {
  int agent_status = 0;
  for (;;) {
    int status = 0;
    pid_t reaped = waitpid(-1, &status, __WALL);
    if (reaped < 0) {
      if (errno == EINTR) continue;
      break;  // ECHILD: nothing left (the agent is gone without a status)
    }
    if (reaped == agent) {
      agent_status = status;
      break;  // leaving kills the rest of the namespace
    }
  }
  int code = WIFEXITED(agent_status)     ? WEXITSTATUS(agent_status)
             : WIFSIGNALED(agent_status) ? 128 + WTERMSIG(agent_status)
                                         : 1;
  _exit(code);
}

}  // namespace

bool ForkAgentUnderInit(const char** problem) {
  // Only as pid 1 is the namespace ours: elsewhere the agent's kill(-1)
  // sweeps could reach processes that are not the sandbox's.
  if (getpid() != 1) {
    *problem = "--init must be the first process (pid 1) of a fresh pid namespace";
    return false;
  }
  pid_t agent = fork();
  if (agent < 0) {
    *problem = "fork of the agent failed";
    return false;
  }
  if (agent == 0) return true;
  // The init keeps nothing: not the channel, not stdout/stderr.
  os::CloseFrom(0);
  ReapUntilTheAgentExits(agent);
}

}  // namespace plimsoll::guest::agent
