// Finding, killing and reaping every process a step left behind.
//
// The agent marks itself a child subreaper at start, so a step's orphans
// (a double-forked daemon that left the step's process group with setsid)
// are re-parented to the agent instead of escaping to the host's init.
//
// When the agent owns the sandbox's pid namespace (it is pid 1 of it, or
// pid 2 under `plimsoll-guest --init`, see init.h) a sweep is
// kill(-1, SIGKILL): inside a pid namespace that reaches every process of
// the namespace except the caller and pid 1, so it needs no /proc (which,
// mounted hidepid=invisible, hides the guest's processes from an agent
// without CAP_SYS_PTRACE) and finds a daemon wherever it went. The agent
// keeps no helper process, so nothing of its own is hit.
//
// Otherwise (unit tests, providers that run the agent as neither), a sweep
// SIGKILLs the step's process group and every child of the agent found in
// /proc; a daemon it cannot see there cannot be found, and the provider's
// cgroup kill (or the pid namespace dying with its pid 1) is the backstop
// the providers rely on.
//
// Either way a sweep then reaps until the agent has no child left, `give_up`
// passes, or nothing more can be signalled or reaped for a short while
// (so an invisible leftover costs ~0.1 s, not the whole bound).
#ifndef PLIMSOLL_GUEST_AGENT_REAPER_H_
#define PLIMSOLL_GUEST_AGENT_REAPER_H_

#include <sys/types.h>

#include <chrono>
#include <vector>

namespace plimsoll::guest::agent {

// Makes this process a child subreaper (best effort; pid 1 is one anyway).
void BecomeSubreaper();

// Reaps every child that has changed state, without blocking. When
// `watched` is among them, stores its wait status in `*status` and sets
// `*exited`. Returns false when the agent has no children at all.
bool ReapAvailable(pid_t watched, int* status, bool* exited);

// How a sweep finds what to kill.
enum class SweepScope {
  kDescendants,    // the step's process group and the agent's children in /proc
  kWholeNamespace  // kill(-1): the agent owns the pid namespace (see above)
};

// Kills process group `group` (when > 0) and every other leftover within
// `scope`, then reaps them until none is left, `give_up` passes (at least
// one round is always made) or no progress is made for a short while.
// Returns true when no child is left.
//
// With `spared` processes (a session's kept interpreters, the agent's own
// children, stopped by the caller so they cannot fork meanwhile), the sweep
// cannot be kill(-1): it reads /proc (the session agent may see every
// process of the namespace: it keeps CAP_SYS_PTRACE for that) and kills
// every process but pid 1, the agent and the spared ones, until a scan
// finds none (zombies other than the agent's children are not counted:
// their parent reaps them). Returns true when none is left.
bool KillAndReapAll(pid_t group, SweepScope scope, std::chrono::steady_clock::time_point give_up,
                    const std::vector<pid_t>& spared = {});

// The state letter of /proc/<pid>/stat ('R', 'S', 'T', 'Z', ...); '?' when
// the process is gone or cannot be read.
char ProcessState(pid_t pid);

// When a sweep must end: 2 s from now, but never after `wrap_up` (the job's
// deadline plus kAgentWrapUpMs), so the report always leaves in time.
std::chrono::steady_clock::time_point SweepUntil(std::chrono::steady_clock::time_point wrap_up);

}  // namespace plimsoll::guest::agent

#endif  // PLIMSOLL_GUEST_AGENT_REAPER_H_
