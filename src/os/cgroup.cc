#include "os/cgroup.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "os/kernel_file.h"

namespace plimsoll::os {
namespace {

using Clock = std::chrono::steady_clock;

bool Exists(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0;
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string Trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

Status MakeDirectory(const std::string& path) {
  if (mkdir(path.c_str(), 0755) != 0 && errno != EEXIST) return SystemError("mkdir " + path, errno);
  return Status::Ok();
}

std::vector<pid_t> ReadProcs(const std::string& directory) {
  std::vector<pid_t> pids;
  std::ifstream file(directory + "/cgroup.procs");
  for (pid_t pid; file >> pid;) pids.push_back(pid);
  return pids;
}

void Pause() {
  std::this_thread::sleep_for(std::chrono::microseconds(500));
}

}  // namespace

std::vector<std::string> CgroupLayout::ParentDirectories() const {
  std::vector<std::string> parents;
  if (version == CgroupVersion::kV2) {
    parents.push_back(unified + "/" + parent);
    return parents;
  }
  for (const std::string* root : {&memory, &pids, &cpu, &freezer}) {
    if (!root->empty()) parents.push_back(*root + "/" + parent);
  }
  return parents;
}

std::string CgroupLayout::Describe() const {
  if (version == CgroupVersion::kV2) return "v2 (" + unified + ")";
  std::string controllers = "memory, pids";
  if (!cpu.empty()) controllers += ", cpu";
  if (!freezer.empty()) controllers += ", freezer";
  return "v1 (" + controllers + ")";
}

Expected<CgroupLayout> DetectCgroups() {
  CgroupLayout layout;
  std::ifstream mountinfo("/proc/self/mountinfo");
  for (std::string line; std::getline(mountinfo, line);) {
    // "... mount_point options - fstype source super_options"
    std::istringstream fields(line);
    std::string id, parent, devices, root, mount_point, options;
    fields >> id >> parent >> devices >> root >> mount_point >> options;
    std::string token;
    while (fields >> token && token != "-") {
    }
    std::string fstype, source, super_options;
    fields >> fstype >> source >> super_options;
    if (fstype == "cgroup2" && layout.unified.empty()) layout.unified = mount_point;
    if (fstype != "cgroup") continue;
    std::stringstream list(super_options);
    for (std::string option; std::getline(list, option, ',');) {
      if (option == "memory") layout.memory = mount_point;
      if (option == "pids") layout.pids = mount_point;
      if (option == "cpu") layout.cpu = mount_point;
      if (option == "freezer") layout.freezer = mount_point;
    }
  }
  if (!layout.memory.empty() && !layout.pids.empty()) {
    layout.version = CgroupVersion::kV1;
    layout.unified.clear();
    layout.swap_accounting = Exists(layout.memory + "/memory.memsw.limit_in_bytes");
    return layout;
  }
  if (!layout.unified.empty()) {
    std::string controllers = " " + Trim(ReadFile(layout.unified + "/cgroup.controllers")) + " ";
    if (controllers.find(" memory ") != std::string::npos &&
        controllers.find(" pids ") != std::string::npos) {
      CgroupLayout v2;
      v2.version = CgroupVersion::kV2;
      v2.unified = layout.unified;
      if (controllers.find(" cpu ") != std::string::npos) v2.cpu = v2.unified;
      v2.swap_accounting = true;  // checked per run: memory.swap.max exists when swap is accounted
      return v2;
    }
  }
  return Failure(ErrorCode::kFailedPrecondition,
                 "No cgroup hierarchy offers the memory and pids controllers (cgroup v1 needs both "
                 "mounted; cgroup v2 needs them in the root's cgroup.controllers).");
}

Status EnsureCgroupParents(const CgroupLayout& layout) {
  if (layout.version == CgroupVersion::kV2) {
    std::string controllers = "+memory +pids";
    if (!layout.cpu.empty()) controllers += " +cpu";
    std::string path = layout.unified;
    PLIMSOLL_RETURN_IF_ERROR(WriteKernelFile(path + "/cgroup.subtree_control", controllers));
    std::stringstream parts(layout.parent);
    for (std::string part; std::getline(parts, part, '/');) {
      path += "/" + part;
      PLIMSOLL_RETURN_IF_ERROR(MakeDirectory(path));
      PLIMSOLL_RETURN_IF_ERROR(WriteKernelFile(path + "/cgroup.subtree_control", controllers));
    }
    return Status::Ok();
  }
  for (const std::string* root : {&layout.memory, &layout.pids, &layout.cpu, &layout.freezer}) {
    if (root->empty()) continue;
    std::string path = *root;
    std::stringstream parts(layout.parent);
    for (std::string part; std::getline(parts, part, '/');) {
      path += "/" + part;
      PLIMSOLL_RETURN_IF_ERROR(MakeDirectory(path));
    }
  }
  return Status::Ok();
}

std::string NextRunName() {
  static std::atomic<uint64_t> sequence{0};
  return OwnerTag() + "-" + std::to_string(++sequence);
}

Expected<RunCgroup> RunCgroup::Create(const CgroupLayout& layout, const std::string& name,
                                      const Limits& limits) {
  std::vector<std::string> directories;
  for (const std::string& parent : layout.ParentDirectories()) {
    directories.push_back(parent + "/" + name);
  }
  RunCgroup cgroup(layout, {});
  for (const std::string& directory : directories) {
    if (mkdir(directory.c_str(), 0755) != 0) {
      return SystemError("mkdir " + directory, errno);
    }
    cgroup.directories_.push_back(directory);  // from now on the destructor removes it
  }
  const std::string memory = std::to_string(limits.memory_bytes);
  const std::string pids = std::to_string(limits.pids);
  constexpr int64_t kPeriodMicros = 100'000;
  const int64_t quota = limits.cpus_millis * kPeriodMicros / 1000;
  if (layout.version == CgroupVersion::kV2) {
    const std::string& dir = directories[0];
    PLIMSOLL_RETURN_IF_ERROR(WriteKernelFile(dir + "/memory.max", memory));
    if (Exists(dir + "/memory.swap.max"))
      PLIMSOLL_RETURN_IF_ERROR(WriteKernelFile(dir + "/memory.swap.max", "0"));
    PLIMSOLL_RETURN_IF_ERROR(WriteKernelFile(dir + "/pids.max", pids));
    if (!layout.cpu.empty() && quota > 0) {
      PLIMSOLL_RETURN_IF_ERROR(WriteKernelFile(
          dir + "/cpu.max", std::to_string(quota) + " " + std::to_string(kPeriodMicros)));
    }
    return cgroup;
  }
  for (const std::string& dir : directories) {
    if (dir.rfind(layout.memory + "/", 0) == 0) {
      PLIMSOLL_RETURN_IF_ERROR(WriteKernelFile(dir + "/memory.limit_in_bytes", memory));
      if (layout.swap_accounting) {
        PLIMSOLL_RETURN_IF_ERROR(WriteKernelFile(dir + "/memory.memsw.limit_in_bytes", memory));
      }
      (void)WriteKernelFile(dir + "/memory.swappiness",
                            "0");  // best effort: no swap is the memsw limit's job
    } else if (dir.rfind(layout.pids + "/", 0) == 0) {
      PLIMSOLL_RETURN_IF_ERROR(WriteKernelFile(dir + "/pids.max", pids));
    } else if (!layout.cpu.empty() && dir.rfind(layout.cpu + "/", 0) == 0 && quota > 0) {
      PLIMSOLL_RETURN_IF_ERROR(
          WriteKernelFile(dir + "/cpu.cfs_period_us", std::to_string(kPeriodMicros)));
      PLIMSOLL_RETURN_IF_ERROR(WriteKernelFile(dir + "/cpu.cfs_quota_us", std::to_string(quota)));
    }
  }
  return cgroup;
}

RunCgroup::RunCgroup(RunCgroup&& other) noexcept
    : layout_(std::move(other.layout_)), directories_(std::move(other.directories_)) {
  other.directories_.clear();
}

RunCgroup& RunCgroup::operator=(RunCgroup&& other) noexcept {
  if (this != &other) {
    (void)Kill();
    (void)Remove();
    layout_ = std::move(other.layout_);
    directories_ = std::move(other.directories_);
    other.directories_.clear();
  }
  return *this;
}

RunCgroup::~RunCgroup() {
  if (directories_.empty()) return;
  (void)Kill();
  (void)Remove();
}

Status RunCgroup::AddProcess(pid_t pid) {
  for (const std::string& dir : directories_) {
    PLIMSOLL_RETURN_IF_ERROR(WriteKernelFile(dir + "/cgroup.procs", std::to_string(pid)));
  }
  return Status::Ok();
}

std::vector<pid_t> RunCgroup::Processes() const {
  std::set<pid_t> all;
  for (const std::string& dir : directories_) {
    for (pid_t pid : ReadProcs(dir)) all.insert(pid);
  }
  return {all.begin(), all.end()};
}

Status RunCgroup::Kill(std::chrono::milliseconds budget) {
  if (directories_.empty()) return Status::Ok();
  Clock::time_point give_up = Clock::now() + budget;
  if (layout_.version == CgroupVersion::kV2 && Exists(directories_[0] + "/cgroup.kill")) {
    if (Processes().empty()) return Status::Ok();
    PLIMSOLL_RETURN_IF_ERROR(WriteKernelFile(directories_[0] + "/cgroup.kill", "1"));
    while (!Processes().empty()) {
      if (Clock::now() > give_up)
        return Failure(ErrorCode::kInternal, "The cgroup did not empty after cgroup.kill.");
      Pause();
    }
    return Status::Ok();
  }
  std::string freezer;
  if (layout_.version == CgroupVersion::kV1 && !layout_.freezer.empty()) {
    for (const std::string& dir : directories_) {
      if (dir.rfind(layout_.freezer + "/", 0) == 0) freezer = dir;
    }
  }
  for (;;) {
    std::vector<pid_t> pids = Processes();
    if (pids.empty()) return Status::Ok();
    if (Clock::now() > give_up) {
      return Failure(ErrorCode::kInternal, "The cgroup " + directories_[0] + " still holds " +
                                               std::to_string(pids.size()) +
                                               " processes after SIGKILL.");
    }
    // Freeze first so nothing forks between reading cgroup.procs and the kills.
    if (!freezer.empty() && WriteKernelFile(freezer + "/freezer.state", "FROZEN").ok()) {
      while (Trim(ReadFile(freezer + "/freezer.state")) == "FREEZING" && Clock::now() < give_up)
        Pause();
      pids = Processes();
    }
    for (pid_t pid : pids) {
      for (const std::string& dir : directories_) {
        if (SignalCgroupMember(dir, pid, SIGKILL)) break;
      }
    }
    if (!freezer.empty()) (void)WriteKernelFile(freezer + "/freezer.state", "THAWED");
    Pause();
  }
}

bool SignalCgroupMember(const std::string& cgroup, pid_t pid, int signal) {
  // The cgroup's path inside its hierarchy is a suffix of `cgroup` (after
  // the hierarchy's mount point, e.g. /sys/fs/cgroup/memory). Our run
  // cgroups always sit under a parent, so only suffixes of two components
  // or more are candidates (a name alone could match a stranger's).
  std::vector<std::string> candidates;
  for (size_t slash = cgroup.find('/'); slash != std::string::npos;
       slash = cgroup.find('/', slash + 1)) {
    std::string suffix = cgroup.substr(slash);
    if (suffix.find('/', 1) != std::string::npos) candidates.push_back(std::move(suffix));
  }
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  if (pidfd < 0) return false;  // gone
  // Read after the pidfd pinned the process: if the pid was recycled
  // meanwhile, this is the new process's membership, and the signal below
  // reaches (only) the process the pidfd names.
  bool member = false;
  std::istringstream lines(ReadFile("/proc/" + std::to_string(pid) + "/cgroup"));
  for (std::string line; std::getline(lines, line) && !member;) {
    // "<id>:<controllers>:<path>"
    size_t colon = line.find(':', line.find(':') + 1);
    if (colon == std::string::npos) continue;
    std::string path = line.substr(colon + 1);
    for (const std::string& candidate : candidates) {
      if (path == candidate || path.rfind(candidate + "/", 0) == 0) member = true;
    }
  }
  bool sent = member && syscall(SYS_pidfd_send_signal, pidfd, signal, nullptr, 0) == 0;
  close(pidfd);
  return sent;
}

Status RunCgroup::Remove(std::chrono::milliseconds budget) {
  Clock::time_point give_up = Clock::now() + budget;
  while (!directories_.empty()) {
    const std::string& dir = directories_.back();
    if (rmdir(dir.c_str()) == 0 || errno == ENOENT) {
      directories_.pop_back();
      continue;
    }
    if (errno != EBUSY || Clock::now() > give_up) return SystemError("rmdir " + dir, errno);
    Pause();
  }
  return Status::Ok();
}

std::vector<std::pair<std::string, std::string>> RunCgroup::ReadLimits() const {
  std::vector<std::pair<std::string, std::string>> values;
  const char* files[] = {"memory.max",       "memory.swap.max",       "pids.max",
                         "cpu.max",          "memory.limit_in_bytes", "memory.memsw.limit_in_bytes",
                         "cpu.cfs_quota_us", "cpu.cfs_period_us"};
  for (const std::string& dir : directories_) {
    for (const char* file : files) {
      std::string path = dir + "/" + file;
      if (Exists(path)) values.emplace_back(file, Trim(ReadFile(path)));
    }
  }
  return values;
}

std::vector<std::string> RemoveCgroupEverywhere(const std::string& path,
                                                std::chrono::steady_clock::time_point deadline) {
  std::vector<std::string> pending;
  std::error_code error;
  if (std::filesystem::exists("/sys/fs/cgroup/cgroup.controllers", error)) {
    pending.push_back("/sys/fs/cgroup" + path);
  }
  for (const auto& hierarchy : std::filesystem::directory_iterator("/sys/fs/cgroup", error)) {
    std::error_code inner;
    if (hierarchy.is_symlink(inner) || !hierarchy.is_directory(inner)) continue;
    pending.push_back(hierarchy.path().string() + path);
  }
  while (true) {
    std::vector<std::string> left;
    for (const std::string& directory : pending) {
      if (::rmdir(directory.c_str()) == 0 || errno == ENOENT || errno == ENOTDIR) continue;
      std::ifstream procs(directory + "/cgroup.procs");
      for (pid_t pid = 0; procs >> pid;) (void)SignalCgroupMember(directory, pid, SIGKILL);
      left.push_back(directory);
    }
    if (left.empty() || std::chrono::steady_clock::now() >= deadline) return left;
    pending = std::move(left);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Expected<int> ReconcileCgroups(const CgroupLayout& layout) {
  std::set<std::string> stale;
  for (const std::string& parent : layout.ParentDirectories()) {
    DIR* dir = opendir(parent.c_str());
    if (dir == nullptr) continue;
    while (dirent* entry = readdir(dir)) {
      if (entry->d_type != DT_DIR || entry->d_name[0] == '.') continue;
      std::string name = entry->d_name;
      long long pid = 0, start = 0, sequence = 0;
      char tail = 0;
      if (std::sscanf(name.c_str(), "%lld-%lld-%lld%c", &pid, &start, &sequence, &tail) != 3)
        continue;
      if (OwnerAlive(name)) continue;
      stale.insert(name);
    }
    closedir(dir);
  }
  int removed = 0;
  for (const std::string& name : stale) {
    std::vector<std::string> directories;
    for (const std::string& parent : layout.ParentDirectories()) {
      if (Exists(parent + "/" + name)) directories.push_back(parent + "/" + name);
    }
    RunCgroup leftover = RunCgroup::Adopt(layout, directories);
    PLIMSOLL_RETURN_IF_ERROR(leftover.Kill());
    PLIMSOLL_RETURN_IF_ERROR(leftover.Remove());
    ++removed;
  }
  return removed;
}

}  // namespace plimsoll::os
