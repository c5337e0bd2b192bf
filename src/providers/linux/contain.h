// Building the wall: the sequence that turns a clone into a linux sandbox.
//
// Parent (the provider):
//   1. on cgroup v2 only, the per-run cgroup with the limits (cgroup.h), so
//      that the clone lands in it (CLONE_INTO_CGROUP);
//   2. clone3(CLONE_NEWUSER|NEWPID|NEWNS|NEWNET|NEWIPC|NEWUTS, CLONE_PIDFD)
//      -- the child blocks on a sync pipe; with a network namespace made
//      ahead (ContainConfig::network), no NEWNET: the clone joins that one;
//   3. writes the child's uid/gid maps (user.h), sets its oom_adj to -17
//      where the host may (oom_score_adj -1000: the OOM killer never picks
//      the init or the agent; the agent raises steps to +1000), and releases
//      it for phase 1;
//   4. on cgroup v1, creates the per-run cgroup with the limits while the
//      child builds its filesystem, and moves the child into it; releases
//      phase 2;
//   5. waits for the error pipe: a record means a step failed (the child has
//      exited; nothing ran: Refusal kEnvironment naming the step), EOF means
//      the agent's execve succeeded.
// Child (pid 1 of the new pid namespace):
//   phase 1: become inside root, drop host groups -> parent-death signal ->
//   mounts and pivot_root (mount.h) -> hostname -> lo up (net.h; a namespace
//   made ahead has it up already) -> rlimits
//   (rlimit.h); phase 2 (now in the run's cgroup, so nothing the guest runs
//   is ever outside it): unshare(CLONE_NEWCGROUP) (rooted at the run's
//   cgroup) -> descriptors (0 /dev/null, 1 /dev/null or a test's fd, 2
//   diagnostics pipe, 3 channel; every other descriptor closed) ->
//   capabilities cut to the agent's set (caps.h) -> no_new_privs -> seccomp
//   (seccomp.h) -> execve(argv): pid 1 becomes the static agent binary in
//   --init mode, which forks the agent as pid 2 and stays as a tiny init
//   (src/guest/agent/init.h). So nothing of the host process's address
//   space survives in the sandbox.
// FAIL CLOSED: every step's failure is reported with its errno over the
// error pipe and the child exits; the parent kills and reaps whatever exists
// and returns a refusal. Nothing runs in a weaker wall.
//
// Everything the child touches is prepared before clone: the child never
// allocates (the parent image is multi-threaded) and uses only
// async-signal-safe calls.
//
// Usage:
//   ContainConfig config{...};
//   auto sandbox = Contain(config, deadline);   // Expected<Container>
//   WriteFrame(sandbox->channel(), ...);        // talk to the agent
//   // ~Container kills the cgroup, reaps init, removes the cgroup.
#ifndef PLIMSOLL_PROVIDERS_LINUX_CONTAIN_H_
#define PLIMSOLL_PROVIDERS_LINUX_CONTAIN_H_

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "os/caps.h"
#include "os/cgroup.h"
#include "os/seccomp.h"
#include "plimsoll/error.h"
#include "plimsoll/limits.h"
#include "providers/linux/mount.h"
#include "providers/linux/netns_pool.h"
#include "providers/linux/user.h"

namespace plimsoll::linux_sandbox {

using Deadline = std::chrono::steady_clock::time_point;

// The descriptor number the channel has inside the sandbox.
inline constexpr int kChannelFd = 3;

struct ContainConfig {
  std::string rootfs;  // absolute host path of the image tree
  // What pid 1 executes after the wall is up (argv[0] is the path inside):
  // the agent with --init, which forks the agent proper as pid 2.
  std::vector<std::string> argv;
  std::vector<std::string> environment;
  Limits limits;
  const os::SeccompProgram* seccomp = nullptr;  // required
  const os::CgroupLayout* cgroups = nullptr;    // required
  std::string hostname = "plimsoll";
  Identities identities = DefaultIdentities();
  std::vector<BindFile> binds;
  int stdout_fd = -1;  // a host descriptor to give the agent as stdout (tests); -1: /dev/null
  // A network namespace made ahead (netns_pool.h) for the sandbox to join;
  // invalid: the clone makes its own (CLONE_NEWNET) and brings lo up.
  NamespaceFd network;
  // The capabilities the agent keeps (os/caps.h): AgentCapabilities(), or
  // SessionAgentCapabilities() for a session's agent, which must see every
  // process of the sandbox to sweep around its kept interpreters.
  uint64_t agent_capabilities = os::AgentCapabilities();
  // A granted run: /run is a tmpfs for the agent's relay socket (mount.h).
  bool host_calls = false;
};

// A running sandbox. Move-only; the destructor kills the init (and with it
// the pid namespace: every process of the sandbox), reaps it and removes the
// cgroup.
class Container {
 public:
  Container(Container&&) noexcept;
  Container& operator=(Container&&) = delete;
  Container(const Container&) = delete;
  Container& operator=(const Container&) = delete;
  ~Container();

  pid_t pid() const { return pid_; }        // host pid of the sandbox's init
  int channel() const { return channel_; }  // host end of the socketpair
  os::RunCgroup& cgroup() { return cgroup_; }

  // Closes the host end of the channel (the agent sees EOF).
  void CloseChannel();
  // Waits until the init exits or `deadline`; returns its wait status, or
  // nullopt at the deadline.
  std::optional<int> Wait(Deadline deadline);
  // SIGKILLs the init (and so the pid namespace) without waiting; Kill()
  // reaps and removes the cgroup later.
  void Signal();
  // Kills every process of the sandbox, reaps the init and removes the
  // cgroup (falling back to killing through the cgroup if it is not empty).
  Status Kill();
  // Whatever the agent wrote on its stderr (at most 4 KiB), without blocking.
  std::string Diagnostics();
  // Whether the init has exited (or was never started), without reaping or
  // blocking: the warm pool's health check (warm_sandbox.h).
  bool Exited() const;

 private:
  friend Expected<Container> Contain(const ContainConfig& config, Deadline deadline);
  Container(pid_t pid, int pidfd, int channel, int diagnostics, os::RunCgroup cgroup)
      : pid_(pid),
        pidfd_(pidfd),
        channel_(channel),
        diagnostics_(diagnostics),
        cgroup_(std::move(cgroup)) {}
  void Reap(bool block);

  pid_t pid_ = -1;
  int pidfd_ = -1;
  int channel_ = -1;
  int diagnostics_ = -1;
  bool reaped_ = false;
  int status_ = 0;
  os::RunCgroup cgroup_;
};

// Builds the wall and starts the agent (see the file comment). Every failure
// before the agent's execve is a Refusal(kEnvironment) naming the step.
Expected<Container> Contain(const ContainConfig& config, Deadline deadline);

}  // namespace plimsoll::linux_sandbox

#endif  // PLIMSOLL_PROVIDERS_LINUX_CONTAIN_H_
