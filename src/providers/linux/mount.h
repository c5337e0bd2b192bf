// The filesystem of a linux sandbox (SPEC §6).
//
// Inside a fresh mount namespace with private propagation, the child builds
// its root from a bind mount of the image's rootfs and pivots into it:
//
//   /          the image rootfs, bind-mounted READ-ONLY, nosuid, nodev
//   /proc      a fresh procfs of the sandbox's pid namespace,
//              hidepid=invisible (steps, as uid 1000, cannot even see the
//              agent's and init's /proc entries), nosuid, nodev, noexec;
//              masked as runc masks it (kMaskedProcPaths: files covered by
//              the host's /dev/null, directories by an empty read-only
//              tmpfs) and kReadOnlyProcPaths bind-remounted read-only (the
//              oci bundle lists the same paths, so both walls agree)
//   /dev       a tiny read-only tmpfs holding null, zero, full, random and
//              urandom (bind mounts of the host's nodes: mknod is impossible
//              in a user namespace; each bind remounted nosuid,noexec -- not
//              nodev, which would break the node), the
//              fd/stdin/stdout/stderr symlinks,
//              and shm -> /tmp (POSIX shared memory lands in /tmp's tmpfs,
//              so no third writable mount exists)
//   /tmp       tmpfs, Limits::tmp_bytes, mode 1777, noexec, nosuid, nodev
//   /work      tmpfs, Limits::work_bytes, owned by the guest user (1000),
//              noexec, nosuid, nodev
//   /run       granted runs only: tmpfs, 64 KiB, mode 0755 (root's: the
//              agent's relay makes /run/plimsoll/api.sock there, guest/
//              host_calls.h), noexec, nosuid, nodev
//   extra      read-write binds of single host files
//
// then detaches the old root. Nothing here is visible on the host, and the
// whole tree disappears with the namespace's last process, so a crashed
// provider leaves no mount behind. The image must contain the directories
// /proc, /dev, /tmp and /work (a missing one fails the run closed).
//
// Usage: MountPlan plan = MountPlanFor(rootfs, limits) (parent, may
// allocate); then in the child, after the user namespace is mapped:
// SetUpFilesystem(plan, &what).
#ifndef PLIMSOLL_PROVIDERS_LINUX_MOUNT_H_
#define PLIMSOLL_PROVIDERS_LINUX_MOUNT_H_

#include <string>
#include <vector>

#include "os/proc_masks.h"
#include "plimsoll/error.h"
#include "plimsoll/limits.h"

namespace plimsoll::linux_sandbox {

struct BindFile {
  std::string host_path;
  std::string sandbox_target;  // absolute path inside; its file must exist in the image
};

// Everything the child needs, computed before clone so the child never
// allocates. Paths are absolute host paths (rootfs-prefixed where inside).
struct MountPlan {
  std::string rootfs;
  unsigned long root_flags =
      0;  // MS_* flags the rootfs's host mount carries (kept: they may be locked)
  std::string proc, dev, tmp, work;
  std::string tmp_options, work_options, dev_options, proc_options;
  // A granted run's /run: a tiny tmpfs for the agent's relay socket; "" for
  // a run without a grant (no such mount at all).
  std::string run, run_options;
  std::vector<std::string> device_names;    // "null", ...
  std::vector<std::string> device_sources;  // "/dev/null", ...
  std::vector<std::string> device_targets;  // rootfs + "/dev/null", ...
  // MS_* flags each device bind is remounted with: nosuid, noexec, plus
  // what the host's mount of the node carries (kept: they may be locked).
  std::vector<unsigned long> device_flags;
  std::vector<std::string> symlink_targets;  // what each link points to
  std::vector<std::string> symlink_paths;    // rootfs + "/dev/fd", ...
  std::vector<std::string> bind_sources, bind_targets;
  // rootfs + "/proc/" + each of kMaskedProcPaths / kReadOnlyProcPaths.
  std::vector<std::string> masked_proc_paths, read_only_proc_paths;
};

// Fails when the rootfs is not a directory or lacks one of the mount points.
// `host_calls`: a granted run, whose /run is a tmpfs the agent's relay binds
// its socket in (guest/host_calls.h).
Expected<MountPlan> MountPlanFor(const std::string& rootfs, const Limits& limits,
                                 const std::vector<BindFile>& binds = {},
                                 bool host_calls = false);

// Child side, async-signal-safe. Returns 0 or an errno; `*what` names the
// step that failed. On success the process's root is the new tree and its
// working directory is "/".
int SetUpFilesystem(const MountPlan& plan, const char** what);

}  // namespace plimsoll::linux_sandbox

#endif  // PLIMSOLL_PROVIDERS_LINUX_MOUNT_H_
