// The OCI bundle of an `oci` sandbox: config.json written by us, no Docker.
//
// One pure function turns a BundleConfig (the guest image's rootfs, the run's
// Limits, the agent's argv, environment, host name, runtime kind, seccomp
// policy) into config.json text; a second writes that text into a fresh
// bundle directory. Nothing else goes into the bundle: the rootfs is referenced
// by absolute path and mounted read-only by the runtime.
//
// The wall config.json asks for mirrors the `linux` provider
// (docs/linux-provider.md; the choices are listed in docs/oci-provider.md,
// "Bundle"):
//   root      the image rootfs, readonly
//   mounts    /proc (nosuid,noexec,nodev), /dev (tiny tmpfs, nosuid,noexec,
//             mode 755, read-only once runc/crun made the five device nodes
//             of linux.devices in it; writable under runsc, whose /dev is
//             gVisor's own),
//             /tmp and /work (tmpfs, noexec,nosuid,nodev, sized from Limits;
//             /work owned by 1000:1000); no /sys
//   process   the agent as pid 1, uid 0 gid 0 inside, the agent's capability
//             set only (bounding/permitted/effective; inheritable and ambient
//             empty), noNewPrivileges, rlimits CORE 0, NOFILE 1024,
//             FSIZE = Limits::work_bytes, no terminal, cwd "/"
//   linux     namespaces pid, network (no path: a fresh one with only lo),
//             ipc, uts, mount, cgroup [, user with the `linux` provider's
//             id mapping]; maskedPaths/readonlyPaths for /proc as runc's
//             defaults; resources: memory = swap = Limits::memory_bytes (no
//             swap), pids = BundleConfig::pids_limit, CPU quota
//             cpus_millis x 100 us per 100 ms; device cgroup: deny all but the
//             five nodes; seccomp from our policy when given (for runsc,
//             which applies it inside gVisor with --oci-seccomp but ignores
//             errnoRet, a deny ENOSYS rule becomes an allowance that gVisor
//             answers with ENOSYS itself; any other non-default errno is
//             refused)
//
// Field order is fixed (nlohmann::ordered_json): the same config gives the
// same bytes, so the text can be digested into evidence.
//
// Usage:
//
//   plimsoll::oci::BundleConfig config;
//   config.rootfs = "/var/cache/plimsoll/image/rootfs";
//   config.limits = limits;
//   config.runtime = plimsoll::oci::RuntimeKind::kRunc;
//   config.pids_limit = plimsoll::oci::DefaultPidsLimit(config.runtime, limits);
//   config.seccomp = *plimsoll::os::ParseSeccompPolicy(text);
//   auto json = plimsoll::oci::BuildConfigJson(config);   // Expected<std::string>
//   auto status = plimsoll::oci::WriteBundle("/run/plimsoll/oci/run-1", config);
#ifndef PLIMSOLL_PROVIDERS_OCI_BUNDLE_H_
#define PLIMSOLL_PROVIDERS_OCI_BUNDLE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "os/seccomp.h"
#include "plimsoll/error.h"
#include "plimsoll/limits.h"

namespace plimsoll::oci {

enum class RuntimeKind { kRunc, kCrun, kRunsc };

// "runc", "crun", "runsc".
std::string_view RuntimeKindName(RuntimeKind kind);
std::optional<RuntimeKind> ParseRuntimeKind(std::string_view name);

// Extra pids the runsc sandbox itself needs inside the container's cgroup
// (gVisor's Sentry/Gofer threads count against pids.max; FIELD-NOTES: a limit
// of 16 breaks sandbox start). The guest's own process limit is then enforced
// inside by the agent, not by this cgroup value.
inline constexpr int64_t kRunscPidsHeadroom = 256;

// Limits::pids for runc/crun; Limits::pids + kRunscPidsHeadroom for runsc.
int64_t DefaultPidsLimit(RuntimeKind kind, const Limits& limits);

// A user namespace mapping inside uid/gid 0 -> host_base and 1000 ->
// host_base + 1000, one id each (as the `linux` provider does).
struct UserNamespace {
  int64_t host_base = 1'500'000'000;
};

struct BundleConfig {
  std::string rootfs;  // absolute path of the image's root tree
  Limits limits;
  // The container's process (pid 1): the agent as init.
  std::vector<std::string> args = {"/usr/local/bin/plimsoll-guest", "--init", "--channel", "3"};
  std::vector<std::string> env = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/work",
                                  "LANG=C.UTF-8"};
  std::string hostname = "plimsoll";
  RuntimeKind runtime = RuntimeKind::kRunc;
  // The cgroup pids limit. For runsc it must leave room for gVisor's own
  // threads: use DefaultPidsLimit(). Must be > 0.
  int64_t pids_limit = 256;
  // Our seccomp policy (image/seccomp.policy). Written to linux.seccomp when
  // present; the same policy on every runtime (runsc applies it to the
  // guest's calls inside gVisor, see Runtime::RunArgv's --oci-seccomp).
  std::optional<os::SeccompPolicy> seccomp;
  // A user namespace (capabilities then exist only inside it); empty: none,
  // inside uid 0 is host uid 0 (still capability-limited and seccomp'd).
  std::optional<UserNamespace> user_namespace;
  // linux.cgroupsPath; empty: the runtime's default.
  std::string cgroups_path;
  // A granted run: /run is a 64 KiB tmpfs for the agent's relay socket
  // (guest/host_calls.h). Never in a pooled sandbox's bundle.
  bool host_calls = false;
};

// The config.json text (pretty-printed, 2 spaces, trailing newline).
// Errors (refusals, nothing ran): a relative or empty rootfs, empty args or
// an argv[0] that is not absolute, an empty hostname, a non-positive pids
// limit or memory/tmp/work size or CPU share, a capability or seccomp
// condition OCI cannot express.
Expected<std::string> BuildConfigJson(const BundleConfig& config);

// Writes `bundle_dir`/config.json (mode 0600) and nothing else. `bundle_dir`
// must be absolute; it is created (mode 0700) when missing and must be empty
// when present. Errors are refusals (kEnvironment) naming the path.
Status WriteBundle(const std::string& bundle_dir, const BundleConfig& config);

}  // namespace plimsoll::oci

#endif  // PLIMSOLL_PROVIDERS_OCI_BUNDLE_H_
