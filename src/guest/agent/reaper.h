// Finding, killing and reaping every process a step left behind.
//
// The agent marks itself a child subreaper at start, so a step's orphans
// (a double-forked daemon that left the step's process group with setsid)
// are re-parented to the agent instead of escaping to the host's init; when
// the agent is pid 1 of a pid namespace they are its children anyway. Each
// sweep SIGKILLs the step's process group, every child of the agent (found
// in /proc), and, when the agent is pid 1, every process of the namespace
// (kill(-1) there reaches only the namespace), then reaps, until the agent
// has no child left or `bound` passes.
//
// Without /proc and outside a pid namespace a daemon that escaped the
// process group cannot be found here: the provider's cgroup kill (or the
// pid namespace dying with its pid 1) is the backstop, and the providers
// rely on it.
#ifndef PLIMSOLL_GUEST_AGENT_REAPER_H_
#define PLIMSOLL_GUEST_AGENT_REAPER_H_

#include <sys/types.h>

#include <chrono>

namespace plimsoll::guest::agent {

// Makes this process a child subreaper (best effort; pid 1 is one anyway).
void BecomeSubreaper();

// Reaps every child that has changed state, without blocking. When
// `watched` is among them, stores its wait status in `*status` and sets
// `*exited`. Returns false when the agent has no children at all.
bool ReapAvailable(pid_t watched, int* status, bool* exited);

// Kills process group `group` (when > 0) and every other descendant, then
// reaps them, giving up after `bound`. Returns true when no child is left.
bool KillAndReapAll(pid_t group, std::chrono::milliseconds bound);

}  // namespace plimsoll::guest::agent

#endif  // PLIMSOLL_GUEST_AGENT_REAPER_H_
