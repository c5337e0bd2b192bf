#include "providers/microvm/microvm_reconcile.h"

#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "base/unique_fd.h"
#include "os/owner.h"
#include "providers/microvm/microvm_vm.h"

namespace plimsoll::microvm {
namespace {

using base::UniqueFd;

// How long Reconcile waits for a killed QEMU (not its child: no waitpid) to go.
constexpr int kGoneWaitMs = 5000;

std::string ReadText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The real uid in /proc/<pid>/status, or -1.
long long RealUid(pid_t pid) {
  std::istringstream status(ReadText("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    long long uid = -1;
    fields >> uid;
    return uid;
  }
  return -1;
}

bool InOurVmCgroup(pid_t pid) {
  const std::string marker = std::string("/") + kMicrovmCgroupParent + "/";
  std::istringstream lines(ReadText("/proc/" + std::to_string(pid) + "/cgroup"));
  for (std::string line; std::getline(lines, line);) {
    // "<id>:<controllers>:<path>"
    size_t path = line.find(':', line.find(':') + 1);
    if (path != std::string::npos && line.find(marker, path) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

std::string WhyNotOurQemu(pid_t pid, const std::string& directory, const VmReconcileScope& scope) {
  const std::string proc = "/proc/" + std::to_string(pid);
  if (ReadText(proc + "/cmdline").find(directory + "/") == std::string::npos) {
    return "its command line does not name " + directory;
  }
  if (scope.qemu.empty()) return "no QEMU is configured to compare its executable with";
  struct stat exe {
  }, qemu{};
  if (stat((proc + "/exe").c_str(), &exe) != 0) return "its executable cannot be read";
  if (stat(scope.qemu.c_str(), &qemu) != 0)
    return "the configured QEMU " + scope.qemu + " is missing";
  if (exe.st_dev != qemu.st_dev || exe.st_ino != qemu.st_ino) {
    return "its executable is not " + scope.qemu;
  }
  long long uid = RealUid(pid);
  if (uid <= 0 || uid < static_cast<long long>(scope.uids.base) ||
      uid >= static_cast<long long>(scope.uids.base) + scope.uids.count) {
    return "its uid " + std::to_string(uid) + " is not a jail uid";
  }
  struct stat owned {};
  if (lstat(directory.c_str(), &owned) != 0 || !S_ISDIR(owned.st_mode) ||
      static_cast<long long>(owned.st_uid) != uid) {
    return "the VM directory is not owned by its uid " + std::to_string(uid);
  }
  if (!InOurVmCgroup(pid)) return "it is not in a microvm cgroup of ours";
  return "";
}

VmReconcileOutcome ReconcileVmDirectories(const VmReconcileScope& scope) {
  VmReconcileOutcome outcome;
  std::error_code error;
  std::vector<std::string> directories;
  for (const auto& entry : std::filesystem::directory_iterator(scope.state_dir, error)) {
    std::string name = entry.path().filename().string();
    std::string_view prefix = kVmDirectoryPrefix;
    if (name.rfind(prefix, 0) != 0) continue;
    // A live owner's VMs (another daemon or CLI with this state directory)
    // are left alone.
    if (os::LeftByDeadOwner(std::string_view(name).substr(prefix.size()))) {
      directories.push_back(entry.path().string());
    }
  }
  // Lease files of uids whose provider crashed (the flock went with it).
  (void)RemoveStaleLeases(scope.uids);
  if (directories.empty()) return outcome;
  std::error_code listing;
  for (const auto& process : std::filesystem::directory_iterator("/proc", listing)) {
    std::string name = process.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    pid_t pid = static_cast<pid_t>(std::atol(name.c_str()));
    std::string cmdline = ReadText(process.path().string() + "/cmdline");
    for (const std::string& directory : directories) {
      if (cmdline.find(directory + "/") == std::string::npos) continue;
      // Pinned first: everything below is about the process this names.
      UniqueFd pidfd(static_cast<int>(syscall(SYS_pidfd_open, pid, 0)));
      if (!pidfd.valid()) break;  // gone already
      std::string why = WhyNotOurQemu(pid, directory, scope);
      if (!why.empty()) {
        outcome.spared.push_back("pid " + name + ": " + why);
        break;
      }
      if (syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0) != 0) break;
      // Not our child (its parent crashed): the pidfd turns readable once
      // it has exited.
      pollfd gone{pidfd.get(), POLLIN, 0};
      if (poll(&gone, 1, kGoneWaitMs) == 1) {
        outcome.killed.push_back(pid);
      } else {
        outcome.problems += "QEMU pid " + name + " did not exit after SIGKILL; ";
      }
      break;
    }
  }
  for (const std::string& directory : directories) {
    std::error_code removing;
    std::filesystem::remove_all(directory, removing);
    if (removing) {
      outcome.problems += "could not remove " + directory + ": " + removing.message() + "; ";
    } else {
      outcome.removed.push_back(directory);
    }
  }
  return outcome;
}

}  // namespace plimsoll::microvm
