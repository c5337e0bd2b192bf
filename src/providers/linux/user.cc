#include "providers/linux/user.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "os/kernel_file.h"

namespace plimsoll::linux_sandbox {
namespace {

Status WriteProcFile(pid_t pid, const char* name, const std::string& text) {
  return os::WriteKernelFile("/proc/" + std::to_string(pid) + "/" + name, text);
}

}  // namespace

Identities DefaultIdentities() {
  std::vector<IdMapping> both = {{0, kHostRootId, 1}, {1000, kHostGuestId, 1}};
  return Identities{both, both};
}

std::string MapText(const std::vector<IdMapping>& mappings) {
  std::string text;
  for (const IdMapping& mapping : mappings) {
    text += std::to_string(mapping.inside) + " " + std::to_string(mapping.outside) + " " +
            std::to_string(mapping.count) + "\n";
  }
  return text;
}

Status WriteIdMaps(pid_t pid, const Identities& identities) {
  PLIMSOLL_RETURN_IF_ERROR(WriteProcFile(pid, "uid_map", MapText(identities.uids)));
  return WriteProcFile(pid, "gid_map", MapText(identities.gids));
}

int BecomeInsideRoot(const char** what) {
  // Raw system calls: glibc's set*id wrappers broadcast to every thread of
  // the (multi-threaded) parent image, which this forked child cannot do.
  *what = "setgroups(0) to drop the host's supplementary groups";
  if (syscall(SYS_setgroups, 0, nullptr) != 0) return errno;
  *what = "setresgid(0, 0, 0)";
  if (syscall(SYS_setresgid, 0, 0, 0) != 0) return errno;
  *what = "setresuid(0, 0, 0)";
  if (syscall(SYS_setresuid, 0, 0, 0) != 0) return errno;
  return 0;
}

}  // namespace plimsoll::linux_sandbox
