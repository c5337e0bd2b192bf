#include "common/host_preconditions.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "image/image.h"

namespace plimsoll::testing {
namespace {

bool Executable(const std::string& path) {
  return access(path.c_str(), X_OK) == 0;
}

// The directories the oci provider and scripts/bootstrap put runtimes in.
bool RuntimeInstalled(const std::string& runtime) {
  for (const char* directory :
       {"/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/sbin", "/bin"}) {
    if (Executable(std::string(directory) + "/" + runtime)) return true;
  }
  return false;
}

std::string MissingImage() {
  auto image = image::LocateDefaultImage();
  if (!image.ok()) return "no guest image (" + image.error().message() + ")";
  return "";
}

// The microvm guest build: PLIMSOLL_MICROVM_DIR, else beside the guest image
// (where the provider itself looks).
std::string MissingMicrovmGuest() {
  std::filesystem::path directory;
  if (const char* dir = std::getenv("PLIMSOLL_MICROVM_DIR"); dir != nullptr && *dir != '\0') {
    directory = dir;
  } else {
    auto image = image::LocateDefaultImage();
    if (!image.ok()) return "no guest image (" + image.error().message() + ")";
    directory = image->directory.parent_path() / "microvm";
  }
  for (const char* file : {"vmlinuz", "initramfs.cpio.gz", "rootfs.erofs"}) {
    if (access((directory / file).c_str(), R_OK) != 0) {
      return "no microvm guest build (" + (directory / file).string() + " is missing)";
    }
  }
  return "";
}

}  // namespace

std::string MissingHostPrecondition(const std::string& parameter) {
  const std::string provider = parameter.substr(0, parameter.find(':'));
  if (provider != "linux" && provider != "oci" && provider != "microvm") return "";
  if (geteuid() != 0) return "not root (provider " + provider + " needs root on the host)";
  if (provider == "oci") {
    std::string runtime = parameter.size() > 4 ? parameter.substr(4) : "runc";
    if (const char* chosen = std::getenv("SANDBOX_OCI_RUNTIME");
        parameter == "oci" && chosen != nullptr && *chosen != '\0') {
      runtime = chosen;
    }
    if (!RuntimeInstalled(runtime)) return "the OCI runtime " + runtime + " is not installed";
  }
  if (provider == "microvm") {
    if (!Executable("/usr/bin/qemu-system-x86_64")) return "qemu-system-x86_64 is not installed";
    return MissingMicrovmGuest();
  }
  return MissingImage();
}

std::vector<std::string> RequiredProviders() {
  std::vector<std::string> names;
  const char* listed = std::getenv("PLIMSOLL_REQUIRE_PROVIDERS");
  if (listed == nullptr) return names;
  std::stringstream list(listed);
  for (std::string name; std::getline(list, name, ',');) {
    if (!name.empty()) names.push_back(name);
  }
  return names;
}

bool IsRequired(const std::string& parameter) {
  std::vector<std::string> required = RequiredProviders();
  return std::find(required.begin(), required.end(), parameter) != required.end();
}

HostVerdict JudgeHost(const std::string& parameter) {
  std::string missing = MissingHostPrecondition(parameter);
  if (missing.empty()) return {false, ""};
  if (IsRequired(parameter)) {
    return {true, "provider " + parameter +
                      " is listed in PLIMSOLL_REQUIRE_PROVIDERS but cannot run here: " + missing};
  }
  return {false, "skipped: provider " + parameter + ": " + missing};
}

HostVerdict JudgeUnavailable(const std::string& parameter, const std::string& why) {
  HostVerdict host = JudgeHost(parameter);
  if (host.message.empty()) {
    return {true, "provider " + parameter +
                      " has every host precondition here but could not be opened or did not "
                      "pass its smoke test (a failure, not a skip): " +
                      why};
  }
  host.message += ": " + why;
  return host;
}

}  // namespace plimsoll::testing
