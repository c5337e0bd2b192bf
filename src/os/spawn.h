// Starting and owning a provider's helper process: an OCI runtime (runc,
// crun, runsc) for the oci provider, the jailer that becomes QEMU for
// microvm.
//
// The helper is a child of the provider: its stdin is /dev/null, its stdout
// and stderr go to one pipe the provider drains for diagnostics (never a
// file: a container's output written to a regular file was seen overwriting
// itself here), and the agent's channel is handed over at a fixed descriptor
// (3 with `--preserve-fds 1` for runc and crun; 0 for runsc, which passes its
// stdio through to the sandbox but has no --preserve-fds). No other
// descriptor of the provider reaches the runtime.
//
// crun and this host: crun 1.8.1 refuses a hybrid cgroup layout ("cgroups in
// hybrid mode not supported, drop all controllers from cgroupv2") even when
// the v2 hierarchy carries no controller. With SpawnOptions::hide_mount set
// (the cgroup2 mount point, e.g. /sys/fs/cgroup/unified) the child first
// enters a private mount namespace (changes there never propagate back) and
// detaches that mount, so crun sees a pure v1 layout; the host's mount table
// is untouched.
//
// The child is started with vfork (the provider may be a large, threaded
// daemon: nothing is copied) and does only system calls before execve.
// It gets SIGKILL when the thread that spawned it ends (PR_SET_PDEATHSIG),
// so a crashed provider leaves no runtime or jailer behind: spawn
// long-lived children only from threads that live as long as the child
// should (a run's worker, the warm pool's worker, the main thread).
//
// Usage:
//   SpawnOptions options{.argv = {"/usr/sbin/runc", "run", ...}, .channel = fd, .channel_target =
//   3}; auto child = Spawn(options);                 // Expected<ChildProcess>
//   child->Wait(deadline);                       // exit status or nullopt
//   // ~ChildProcess: SIGKILL and reap if still running.
#ifndef PLIMSOLL_OS_SPAWN_H_
#define PLIMSOLL_OS_SPAWN_H_

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "plimsoll/error.h"

namespace plimsoll::os {

using Deadline = std::chrono::steady_clock::time_point;

struct SpawnOptions {
  std::vector<std::string> argv;  // argv[0] is an absolute path
  std::vector<std::string> environment = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
  int channel = -1;        // a descriptor to hand over, or -1
  int channel_target = 3;  // its number in the child (0 or >= 3)
  int output = -1;         // the child's stdout and stderr; -1: /dev/null
  std::string hide_mount;  // detached in a private mount namespace; "": none
};

// A started child. Move-only; the destructor SIGKILLs it if it still runs
// and reaps it.
class ChildProcess {
 public:
  ChildProcess(pid_t pid, int pidfd) : pid_(pid), pidfd_(pidfd) {}
  ChildProcess(ChildProcess&& other) noexcept;
  ChildProcess& operator=(ChildProcess&& other) noexcept;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;
  ~ChildProcess();

  pid_t pid() const { return pid_; }
  // Whether it has exited (without reaping it).
  bool Exited() const;
  // Waits until it exits or `deadline`; its wait status, or nullopt at the
  // deadline. Once reaped, returns the same status again.
  std::optional<int> Wait(Deadline deadline);
  // SIGKILL, then reap.
  void KillAndReap();

 private:
  void Close();
  pid_t pid_ = -1;
  int pidfd_ = -1;
  std::optional<int> status_;
};

// Starts the child. Errors (nothing started): a relative argv[0], a failed
// pipe/vfork/pidfd, or an exec failure reported by the child (the message
// names the step and errno).
Expected<ChildProcess> Spawn(const SpawnOptions& options);

// Runs a short command to completion (e.g. `runc --version`, `runc delete`)
// with its stdout and stderr captured (at most `output_cap` bytes). At the
// deadline the child is killed and the result is kDeadlineExceeded.
struct CommandOutput {
  int status = 0;  // wait status
  std::string output;
};
Expected<CommandOutput> RunCommand(SpawnOptions options, Deadline deadline,
                                   size_t output_cap = 64 * 1024);

// The descriptors of an agent's host side (the oci containers, the microvm
// VMs): the agent's channel, a socketpair whose `child_channel` end is
// handed over as SpawnOptions::channel, and the child's stdout+stderr pipe,
// its read end `output` non-blocking, `child_output` as
// SpawnOptions::output. All close-on-exec; the child_ ends are closed by
// the caller once Spawn returned. Errors are refusals (kEnvironment).
struct AgentDescriptors {
  base::UniqueFd channel, child_channel;
  base::UniqueFd output, child_output;
};
Expected<AgentDescriptors> MakeAgentDescriptors();

// Reads what is available on a non-blocking descriptor, appending at most
// up to `cap` bytes in total to `*into` (the rest is discarded).
void DrainAvailable(int fd, std::string* into, size_t cap);

}  // namespace plimsoll::os

#endif  // PLIMSOLL_OS_SPAWN_H_
