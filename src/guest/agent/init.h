// `plimsoll-guest --init`: the agent binary as pid 1 of a sandbox's pid
// namespace.
//
// A provider that builds a pid namespace execs the agent binary as the
// namespace's first process with --init, so pid 1 is a small static binary
// and not a copy of the (possibly huge) host process that built the wall:
// it shares no pages with the host, and a memory cgroup never charges it
// the host's address space. The init forks once; the child goes on as the
// agent (pid 2) and owns the namespace (its sweeps use kill(-1), reaper.h);
// the init closes every descriptor (the channel and the report key are the
// agent's alone), reaps every process re-parented to it and exits with the
// agent's status (exit code, or 128 + signal) once the agent is gone. When
// pid 1 exits, the kernel kills whatever is left in the namespace, so a run
// can never leave a process behind even if the agent forgets one.
//
// Usage (main.cc):
//   if (init_mode) {
//     if (!ForkAgentUnderInit(&problem)) { report problem; exit }
//     options.owns_pid_namespace = true;   // only the agent gets here
//   }
#ifndef PLIMSOLL_GUEST_AGENT_INIT_H_
#define PLIMSOLL_GUEST_AGENT_INIT_H_

namespace plimsoll::guest::agent {

// Precondition: this process is pid 1 (of a non-initial pid namespace) and
// single-threaded. Returns true in the agent (pid 2); the init never
// returns. Returns false, with `*problem` set, when this is not pid 1 or the
// fork failed (nothing was started then).
bool ForkAgentUnderInit(const char** problem);

}  // namespace plimsoll::guest::agent

#endif  // PLIMSOLL_GUEST_AGENT_INIT_H_
