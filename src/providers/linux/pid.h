// The pid namespace of a linux sandbox and its init.
//
// The first process of the sandbox is pid 1 of a fresh pid namespace. It is
// a tiny init of ours, not the agent: it starts the agent as pid 2, reaps
// every process re-parented to it (so no zombie outlives its step), and
// exits with the agent's status once the agent is gone. When it exits, the
// kernel kills whatever is left in the namespace, so a run can never leave a
// process behind even if the agent forgets one. The init holds no descriptor
// but its own, runs under the same seccomp filter and capabilities as the
// agent, and ignores every signal it does not handle (the kernel does that
// for a namespace's pid 1).
#ifndef PLIMSOLL_PROVIDERS_LINUX_PID_H_
#define PLIMSOLL_PROVIDERS_LINUX_PID_H_

#include <sys/types.h>

namespace plimsoll::linux_sandbox {

// Child side, async-signal-safe: a fork that bypasses glibc's atfork
// handlers and locks (the parent image is multi-threaded). Returns like fork.
pid_t RawFork();

// Child side: reaps every child until `agent` has exited, then exits with a
// status that mirrors the agent's (exit code, or 128 + signal).
[[noreturn]] void RunInit(pid_t agent);

}  // namespace plimsoll::linux_sandbox

#endif  // PLIMSOLL_PROVIDERS_LINUX_PID_H_
