#include "providers/oci/runtime.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "guest/protocol.h"

namespace plimsoll::oci {
namespace {

constexpr const char* kSearchPath[] = {"/usr/sbin",      "/usr/bin", "/usr/local/sbin",
                                       "/usr/local/bin", "/sbin",    "/bin"};
// systrap appeared in gVisor's releases of spring 2023.
constexpr int kFirstRunscWithSystrap = 20230500;

Error EnvironmentRefusal(const std::string& message) {
  return Refusal(NotDispatched::kEnvironment, message);
}

bool IsExecutableFile(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
}

Status MakePrivateDirectory(const std::string& path) {
  if (mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
    return EnvironmentRefusal("Cannot create " + path + ": " + std::strerror(errno));
  }
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return EnvironmentRefusal(path + " is not a directory.");
  }
  if (st.st_uid != geteuid() || (st.st_mode & 0077) != 0) {
    return EnvironmentRefusal(path + " must be owned by us and private (mode 0700).");
  }
  return Status::Ok();
}

}  // namespace

std::string DefaultRunscPlatform(std::string_view version) {
  // Versions look like "runsc version release-20230605.0" or
  // "runsc version 0.0~20221219.0": the first run of 8 digits is the date.
  for (size_t i = 0; i + 8 <= version.size(); ++i) {
    bool digits = true;
    for (size_t j = i; j < i + 8 && digits; ++j) digits = std::isdigit(version[j]) != 0;
    if (!digits) continue;
    int date = std::stoi(std::string(version.substr(i, 8)));
    return date >= kFirstRunscWithSystrap ? "systrap" : "ptrace";
  }
  return "ptrace";
}

std::string HybridCgroup2MountPoint() {
  std::ifstream mountinfo("/proc/self/mountinfo");
  std::string line, cgroup2;
  bool v1 = false;
  while (std::getline(mountinfo, line)) {
    size_t separator = line.find(" - ");
    if (separator == std::string::npos) continue;
    std::istringstream left(line.substr(0, separator)), right(line.substr(separator + 3));
    std::string id, parent, device, root, point, fstype;
    left >> id >> parent >> device >> root >> point;
    right >> fstype;
    if (fstype == "cgroup2" && cgroup2.empty()) cgroup2 = point;
    if (fstype == "cgroup") v1 = true;
  }
  return v1 ? cgroup2 : "";
}

std::vector<std::string> Runtime::AgentArgv(bool pooled) const {
  // --announce: the agent says when it is up (oci_sandbox.h waits for it).
  std::vector<std::string> argv = {guest::kAgentPath, "--init", "--channel",
                                   std::to_string(channel_fd()), "--announce"};
  if (pooled) {
    // A pooled sandbox waits for its job as long as the provider keeps its
    // end of the channel open.
    argv.insert(argv.end(), {"--job-wait-ms", "0"});
  }
  return argv;
}

std::vector<std::string> Runtime::RunArgv(const std::string& bundle, const std::string& pid_file,
                                          const std::string& id) const {
  if (kind_ == RuntimeKind::kRunsc) {
    // --oci-seccomp: gVisor applies config.json's linux.seccomp (our policy)
    // to the guest's calls; without it runsc ignores the section.
    return {binary_,          "--root",        state_root_, "--platform=" + platform_,
            "--network=none", "--oci-seccomp", "run",       "-bundle",
            bundle,           "-pid-file",     pid_file,    id};
  }
  return {binary_,      "--root", state_root_,      "run", "--bundle", bundle,
          "--pid-file", pid_file, "--preserve-fds", "1",   id};
}

std::vector<std::string> Runtime::DeleteArgv(const std::string& id) const {
  if (kind_ == RuntimeKind::kRunsc) return {binary_, "--root", state_root_, "delete", "-force", id};
  return {binary_, "--root", state_root_, "delete", "--force", id};
}

std::vector<std::string> Runtime::ListArgv() const {
  if (kind_ == RuntimeKind::kRunsc) return {binary_, "--root", state_root_, "list", "-quiet"};
  return {binary_, "--root", state_root_, "list", "--quiet"};
}

os::SpawnOptions Runtime::SpawnFor(std::vector<std::string> argv) const {
  os::SpawnOptions options;
  options.argv = std::move(argv);
  options.hide_mount = hide_mount_;
  return options;
}

std::string Runtime::Describe() const {
  std::string text = version_ + " (" + binary_ + ")";
  if (kind_ == RuntimeKind::kRunsc) text += ", platform " + platform_ + ", network none";
  if (!hide_mount_.empty()) text += ", started with " + hide_mount_ + " hidden (hybrid cgroups)";
  return text;
}

Expected<Runtime> ProbeRuntime(RuntimeKind kind, const RuntimeOptions& options, Deadline deadline) {
  Runtime runtime;
  runtime.kind_ = kind;
  std::string name(RuntimeKindName(kind));
  if (!options.binary.empty()) {
    if (options.binary[0] != '/' || !IsExecutableFile(options.binary)) {
      return EnvironmentRefusal("The " + name + " binary " + options.binary +
                                " is not an executable file given by absolute path.");
    }
    runtime.binary_ = options.binary;
  } else {
    for (const char* directory : kSearchPath) {
      std::string candidate = std::string(directory) + "/" + name;
      if (IsExecutableFile(candidate)) {
        runtime.binary_ = candidate;
        break;
      }
    }
    if (runtime.binary_.empty()) {
      return EnvironmentRefusal(
          "The OCI runtime " + name +
          " is not installed (looked in /usr/sbin, /usr/bin, /usr/local/sbin, "
          "/usr/local/bin, /sbin, /bin; scripts/bootstrap installs it).");
    }
  }
  if (options.state_dir.empty() || options.state_dir[0] != '/') {
    return EnvironmentRefusal("The OCI state directory must be an absolute path.");
  }
  os::SpawnOptions version_command;
  version_command.argv = {runtime.binary_, "--version"};
  auto version = os::RunCommand(version_command, deadline);
  if (!version.ok()) return EnvironmentRefusal(name + " --version: " + version.error().message());
  if (!WIFEXITED(version->status) || WEXITSTATUS(version->status) != 0) {
    return EnvironmentRefusal(name + " --version failed: " + version->output.substr(0, 500));
  }
  runtime.version_ = version->output.substr(0, version->output.find('\n'));
  if (runtime.version_.empty()) return EnvironmentRefusal(name + " --version printed nothing.");
  if (kind == RuntimeKind::kRunsc) {
    runtime.platform_ =
        options.platform.empty() ? DefaultRunscPlatform(runtime.version_) : options.platform;
    if (runtime.platform_ != "ptrace" && runtime.platform_ != "systrap" &&
        runtime.platform_ != "kvm") {
      return EnvironmentRefusal("Unknown runsc platform \"" + runtime.platform_ +
                                "\"; valid: ptrace, systrap, kvm.");
    }
  }
  if (kind == RuntimeKind::kCrun) runtime.hide_mount_ = HybridCgroup2MountPoint();
  // The state directory's parent (e.g. /run/plimsoll) may be shared with
  // other parts of plimsoll; the directory itself and below are private.
  std::string parent = options.state_dir.substr(0, options.state_dir.find_last_of('/'));
  if (!parent.empty() && mkdir(parent.c_str(), 0755) != 0 && errno != EEXIST) {
    return EnvironmentRefusal("Cannot create " + parent + ": " + std::strerror(errno));
  }
  PLIMSOLL_RETURN_IF_ERROR(MakePrivateDirectory(options.state_dir));
  runtime.state_root_ = options.state_dir + "/" + name;
  // Bundles per runtime, like the state roots: Reconcile removes the
  // leftovers its bundles name, never another runtime's sharing the state dir.
  runtime.bundles_dir_ = options.state_dir + "/bundles/" + name;
  PLIMSOLL_RETURN_IF_ERROR(MakePrivateDirectory(runtime.state_root_));
  PLIMSOLL_RETURN_IF_ERROR(MakePrivateDirectory(options.state_dir + "/bundles"));
  PLIMSOLL_RETURN_IF_ERROR(MakePrivateDirectory(runtime.bundles_dir_));
  return runtime;
}

}  // namespace plimsoll::oci
