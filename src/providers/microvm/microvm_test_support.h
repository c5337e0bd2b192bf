// Shared by the microvm tests that boot real VMs: why this machine cannot
// (QEMU or the guest artifacts missing), "" when it can. Header-only.
#ifndef PLIMSOLL_PROVIDERS_MICROVM_MICROVM_TEST_SUPPORT_H_
#define PLIMSOLL_PROVIDERS_MICROVM_MICROVM_TEST_SUPPORT_H_

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace plimsoll::microvm {

inline std::string MicrovmSkipReason() {
  if (access("/usr/bin/qemu-system-x86_64", X_OK) != 0) {
    return "skipped: qemu-system-x86_64 is not installed (scripts/bootstrap installs it)";
  }
  const char* dir = std::getenv("PLIMSOLL_MICROVM_DIR");
  if (dir == nullptr || *dir == '\0') return "skipped: PLIMSOLL_MICROVM_DIR is not set";
  if (access((std::string(dir) + "/inputs").c_str(), R_OK) != 0) {
    return std::string("skipped: no complete microvm guest build in ") + dir;
  }
  return "";
}

}  // namespace plimsoll::microvm

#endif  // PLIMSOLL_PROVIDERS_MICROVM_MICROVM_TEST_SUPPORT_H_
