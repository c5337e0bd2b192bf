// How the trial runner starts a child it does not trust (the controller,
// controller_process.h; the build command, build_command.h): one place for
// the discipline both get, so neither can get less.
//
// The child gets the runner's environment; descriptors 0 and 1 as given and
// 2 the runner's (every other descriptor is closed at exec); default signal
// dispositions and an empty signal mask; its own process group (so the
// runner can kill what it forks with it); and SIGKILL if the runner's thread
// dies (PR_SET_PDEATHSIG).
//
// Usage:
//   Expected<pid_t> pid = StartChild({"python3", "c.py"}, stdin_fd, stdout_fd);
//   if (!pid.ok()) { pid.error().message(): "python3 could not be started: ..." }
//   ... kill(-*pid, SIGKILL); waitpid(*pid, ...);   // the caller reaps it
//
// Thread-safety: any thread; the child is the calling thread's (its death
// signal follows that thread).
#ifndef PLIMSOLL_TRIAL_CHILD_START_H_
#define PLIMSOLL_TRIAL_CHILD_START_H_

#include <sys/types.h>

#include <string>
#include <vector>

#include "plimsoll/error.h"

namespace plimsoll::trial {

// Starts `argv` (argv[0] found on PATH when it has no '/') with `stdin_fd`
// and `stdout_fd` as its descriptors 0 and 1 (any descriptors; they stay
// open here) and returns its pid once execve succeeded. Errors
// (kFailedPrecondition), the child already reaped: empty argv; "<argv[0]>
// could not be started: <strerror>." (errno reported by the child: not
// found, not executable); a failed pipe, fcntl or fork.
Expected<pid_t> StartChild(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd);

}  // namespace plimsoll::trial

#endif  // PLIMSOLL_TRIAL_CHILD_START_H_
