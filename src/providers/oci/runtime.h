// The OCI runtime binary the `oci` provider drives: which one, where it is,
// its version, and the command lines we give it.
//
// Every container we start lives under our own state root
// (`--root <state_dir>/<runtime>`), with a bundle under
// `<state_dir>/bundles/<runtime>/<id>` and a cgroup under `/plimsoll-oci/<id>`,
// and has an id that starts with kContainerIdPrefix, so Reconcile can find
// and remove what a crashed provider left without touching anything else.
//
//   runc  --root R run --bundle B --pid-file P --preserve-fds 1 ID   (channel on fd 3)
//   crun  --root R run --bundle B --pid-file P --preserve-fds 1 ID   (channel on fd 3,
//         started with the cgroup2 mount hidden on a hybrid host: spawn.h)
//   runsc --root R --platform=ptrace --network=none run -bundle B -pid-file P ID
//         (channel on fd 0: runsc passes its stdio through but has no --preserve-fds)
//
// Usage:
//   auto runtime = ProbeRuntime(RuntimeKind::kRunsc, {}, deadline);   // Expected<Runtime>
//   os::SpawnOptions spawn{.argv = runtime->RunArgv(bundle, pid_file, id), ...};
#ifndef PLIMSOLL_PROVIDERS_OCI_RUNTIME_H_
#define PLIMSOLL_PROVIDERS_OCI_RUNTIME_H_

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "os/spawn.h"
#include "plimsoll/error.h"
#include "providers/oci/bundle.h"

namespace plimsoll::oci {

using Deadline = std::chrono::steady_clock::time_point;

inline constexpr std::string_view kContainerIdPrefix = "plimsoll-";
// The cgroup parent (cgroupfs path) of every container.
inline constexpr std::string_view kCgroupParent = "/plimsoll-oci";

struct RuntimeOptions {
  // Absolute path of the binary; "": looked up in /usr/sbin, /usr/bin,
  // /usr/local/sbin, /usr/local/bin, /sbin, /bin.
  std::string binary;
  // Where state roots and bundles live (absolute). Default /run/plimsoll/oci.
  std::string state_dir = "/run/plimsoll/oci";
  // runsc only: "ptrace", "systrap" or "kvm"; "": DefaultRunscPlatform().
  std::string platform;
};

// The platform runsc uses when none is configured: "systrap" when the
// version has it (releases from 2023-05 on), else "ptrace". (Only ptrace
// works on the development machine: its KVM is a nested variant gVisor's
// kvm platform hangs on, and its runsc predates systrap.)
std::string DefaultRunscPlatform(std::string_view version);

class Runtime {
 public:
  RuntimeKind kind() const { return kind_; }
  const std::string& binary() const { return binary_; }
  const std::string& version() const { return version_; }    // first line of --version
  const std::string& platform() const { return platform_; }  // runsc only
  const std::string& state_root() const { return state_root_; }
  const std::string& bundles_dir() const { return bundles_dir_; }

  // The descriptor number the agent's channel has inside the container.
  int channel_fd() const { return kind_ == RuntimeKind::kRunsc ? 0 : 3; }
  // The agent's argv (pid 1 of the container).
  std::vector<std::string> AgentArgv(bool pooled) const;

  std::vector<std::string> RunArgv(const std::string& bundle, const std::string& pid_file,
                                   const std::string& id) const;
  std::vector<std::string> DeleteArgv(const std::string& id) const;  // forced
  std::vector<std::string> ListArgv() const;                         // ids, one per line

  // A spawn of `argv` with this runtime's needs (crun's hidden cgroup2).
  os::SpawnOptions SpawnFor(std::vector<std::string> argv) const;

  // For display and evidence: "runc 1.1.5+ds1 (/usr/sbin/runc)".
  std::string Describe() const;

 private:
  friend Expected<Runtime> ProbeRuntime(RuntimeKind, const RuntimeOptions&, Deadline);
  RuntimeKind kind_ = RuntimeKind::kRunc;
  std::string binary_, version_, platform_, state_root_, bundles_dir_;
  std::string hide_mount_;  // crun on a hybrid host: the cgroup2 mount point
};

// Finds the binary, runs `--version`, creates the state root and bundles
// directory (0700). Refusals (kEnvironment, nothing ran): binary missing or
// not executable, --version failing, state dir not creatable, an unknown
// runsc platform.
Expected<Runtime> ProbeRuntime(RuntimeKind kind, const RuntimeOptions& options, Deadline deadline);

// The mount point of a cgroup2 hierarchy when v1 hierarchies carry
// controllers too (a hybrid layout), else "".
std::string HybridCgroup2MountPoint();

}  // namespace plimsoll::oci

#endif  // PLIMSOLL_PROVIDERS_OCI_RUNTIME_H_
