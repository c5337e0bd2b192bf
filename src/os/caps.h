// Capabilities of a linux sandbox.
//
// Every capability here exists only inside the sandbox's user namespace; on
// the host the sandbox holds none. Still, the sandbox keeps only what the
// agent needs to hand work to the unprivileged guest user (switch to uid
// 1000, give it files): kAgentCapabilities. The bounding set is cut to that
// set, ambient and inheritable capabilities are cleared, and effective/permitted
// are set to it; steps run as uid 1000, and that switch clears every
// capability they could have (no ambient, no file capabilities under
// no_new_privs and nosuid mounts).
#ifndef PLIMSOLL_OS_CAPS_H_
#define PLIMSOLL_OS_CAPS_H_

#include <cstdint>

namespace plimsoll::os {

// CAP_CHOWN, CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_KILL, CAP_SETGID, CAP_SETUID.
uint64_t AgentCapabilities();

// A session agent's: the above plus CAP_SYS_PTRACE, only so that /proc
// (mounted hidepid=invisible) shows it every process of the sandbox: its
// sweeps between calls spare the kept interpreters and so cannot be
// kill(-1) (src/guest/agent/reaper.h). The seccomp policy still refuses
// ptrace(2) and process_vm_*; steps never have any capability.
uint64_t SessionAgentCapabilities();

// The highest capability number this kernel knows (/proc/sys/kernel/cap_last_cap).
// Parent side; falls back to 40 when the file cannot be read.
int LastCapability();

// Child side, async-signal-safe: shrinks the bounding set to `keep`, clears
// ambient and inheritable capabilities and sets effective/permitted to `keep`.
// Returns 0 or an errno; `*what` names the call.
int DropCapabilities(uint64_t keep, int last_capability, const char** what);

// Child side: PR_SET_NO_NEW_PRIVS, so no execve can gain privileges.
int SetNoNewPrivileges(const char** what);

}  // namespace plimsoll::os

#endif  // PLIMSOLL_OS_CAPS_H_
