// Shared by the microvm tests that boot real VMs: why this machine cannot
// (QEMU, the guest artifacts, root or cgroups missing), the VmConfig of a
// TCG VM from PLIMSOLL_MICROVM_DIR (ctest sets it to <build>/microvm), and
// the host-side looks that nothing was left behind. Header-only.
#ifndef PLIMSOLL_PROVIDERS_MICROVM_MICROVM_TEST_SUPPORT_H_
#define PLIMSOLL_PROVIDERS_MICROVM_MICROVM_TEST_SUPPORT_H_

#include <dirent.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "common/host_preconditions.h"
#include "providers/microvm/microvm_vm.h"

namespace plimsoll::microvm {

// Whether microvm's VMs can start here, once the host preconditions hold
// (PLIMSOLL_REQUIRE_HOST("microvm"), tests/common/host_preconditions.h):
// MicrovmVm::Start needs the cgroups of the jailer besides. A failure, not a
// skip: the cgroups are no precondition a machine may lack.
inline Status MicrovmVmCanStart() {
  auto layout = MicrovmCgroupLayout();
  if (!layout.ok()) return layout.error();
  return Status::Ok();
}

// A TCG VM of the artifacts in PLIMSOLL_MICROVM_DIR, its directory made
// under `state_dir` (call after PLIMSOLL_REQUIRE_HOST("microvm")).
inline VmConfig TcgVmConfig(const std::string& state_dir) {
  const std::string artifacts = std::getenv("PLIMSOLL_MICROVM_DIR");
  VmConfig config;
  config.qemu = "/usr/bin/qemu-system-x86_64";
  config.kernel = artifacts + "/vmlinuz";
  config.initramfs = artifacts + "/initramfs.cpio.gz";
  config.disk = artifacts + "/rootfs.erofs";
  config.accelerator = "tcg";
  config.state_dir = state_dir;
  return config;
}

inline std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// Pids of live processes whose command line mentions `needle`.
inline std::vector<pid_t> ProcessesMentioning(const std::string& needle) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return found;
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::string cmdline = ReadWholeFile(std::string("/proc/") + entry->d_name + "/cmdline");
    if (cmdline.find(needle) != std::string::npos) found.push_back(std::atoi(entry->d_name));
  }
  closedir(proc);
  return found;
}

}  // namespace plimsoll::microvm

#endif  // PLIMSOLL_PROVIDERS_MICROVM_MICROVM_TEST_SUPPORT_H_
