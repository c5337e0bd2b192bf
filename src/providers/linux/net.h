// The network of a linux sandbox: a fresh network namespace (CLONE_NEWNET)
// in which only the loopback interface exists and is brought up. There is no
// route out: no other interface, no veth, no gateway. A granted run reaches
// the broker through the agent's relay socket inside the sandbox and the
// agent's channel (guest/host_calls.h), never an IP.
#ifndef PLIMSOLL_PROVIDERS_LINUX_NET_H_
#define PLIMSOLL_PROVIDERS_LINUX_NET_H_

namespace plimsoll::linux_sandbox {

// Child side (inside the new network namespace), async-signal-safe: sets
// IFF_UP on "lo". Returns 0 or an errno; `*what` names the call.
int BringUpLoopback(const char** what);

}  // namespace plimsoll::linux_sandbox

#endif  // PLIMSOLL_PROVIDERS_LINUX_NET_H_
