// plimsoll-hide-mount: runs a command in a private mount namespace in which
// one mount point is detached: what the `oci` provider does for crun on a
// hybrid-cgroup host (crun 1.8 refuses cgroup v1 controllers next to a
// cgroup2 mount), so the raw crun baseline (bench/scenarios.py,
// crun-qjs-equivalent) pays the same per-run cost as the driver.
//
//   plimsoll-hide-mount MOUNTPOINT -- ARGV...
//
// The same system calls, in the same order, as the driver's spawn child
// (src/providers/oci/spawn.cc): unshare(CLONE_NEWNS); mount("/", MS_REC |
// MS_PRIVATE); umount2(MOUNTPOINT, MNT_DETACH) (EINVAL/ENOENT ignored); then
// execvp(ARGV). An empty MOUNTPOINT (not a hybrid host) skips all three, as the
// driver does. The one cost the driver does not have is this extra execve;
// the binary is linked statically to keep it small (about 0.4 ms here).
// Exit status: ARGV's; 126 when a step fails (stderr says which); 2 for
// usage errors.
#include <sched.h>
#include <sys/mount.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc < 4 || std::strcmp(argv[2], "--") != 0) {
    std::fprintf(stderr, "usage: plimsoll-hide-mount MOUNTPOINT -- ARGV...\n");
    return 2;
  }
  const char* hide = argv[1];
  if (*hide != '\0') {
    if (unshare(CLONE_NEWNS) != 0) {
      std::fprintf(stderr, "plimsoll-hide-mount: unshare: %s\n", std::strerror(errno));
      return 126;
    }
    if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
      std::fprintf(stderr, "plimsoll-hide-mount: mount --make-rprivate /: %s\n",
                   std::strerror(errno));
      return 126;
    }
    if (umount2(hide, MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
      std::fprintf(stderr, "plimsoll-hide-mount: umount %s: %s\n", hide, std::strerror(errno));
      return 126;
    }
  }
  execvp(argv[3], argv + 3);
  std::fprintf(stderr, "plimsoll-hide-mount: exec %s: %s\n", argv[3], std::strerror(errno));
  return 126;
}
