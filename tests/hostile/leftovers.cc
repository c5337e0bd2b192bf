#include "hostile/leftovers.h"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "os/owner.h"

namespace plimsoll::hostile {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string Trimmed(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  return text;
}

std::string ReadLink(const std::string& path) {
  std::error_code error;
  fs::path target = fs::read_symlink(path, error);
  return error ? "(" + error.message() + ")" : target.string();
}

struct ProcessInfo {
  std::string pid;
  std::string ppid;
  std::string state;
  std::string comm;
  std::string starttime;
  bool nested_pid_namespace = false;
  std::string cmdline;
  bool carries_token = false;
};

bool ReadProcess(const std::string& pid, const std::string& token, ProcessInfo* info) {
  std::string stat = ReadFile("/proc/" + pid + "/stat");
  size_t open = stat.find('(');
  size_t close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) return false;
  info->pid = pid;
  info->comm = stat.substr(open + 1, close - open - 1);
  std::istringstream rest(stat.substr(close + 2));
  std::vector<std::string> fields{std::istream_iterator<std::string>(rest), {}};
  // Fields after the command: state(3) ppid(4) ... starttime(22).
  if (fields.size() < 20) return false;
  info->state = fields[0];
  info->ppid = fields[1];
  info->starttime = fields[19];
  std::string status = ReadFile("/proc/" + pid + "/status");
  size_t nspid = status.find("\nNSpid:");
  if (nspid != std::string::npos) {
    std::istringstream line(status.substr(nspid + 7, status.find('\n', nspid + 1) - nspid - 7));
    std::vector<std::string> ids{std::istream_iterator<std::string>(line), {}};
    info->nested_pid_namespace = ids.size() > 1;
  }
  info->cmdline = ReadFile("/proc/" + pid + "/cmdline");
  if (!token.empty()) {
    info->carries_token = info->cmdline.find(token) != std::string::npos ||
                          ReadFile("/proc/" + pid + "/environ").find(token) != std::string::npos;
  }
  std::replace(info->cmdline.begin(), info->cmdline.end(), '\0', ' ');
  if (info->cmdline.size() > 200) info->cmdline.resize(200);
  return true;
}

void SnapshotProcesses(const std::string& token, HostSnapshot* snapshot) {
  std::vector<ProcessInfo> processes;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    std::string pid = entry.path().filename().string();
    if (pid.empty() || !std::all_of(pid.begin(), pid.end(), ::isdigit)) continue;
    ProcessInfo info;
    if (ReadProcess(pid, token, &info)) processes.push_back(std::move(info));
  }
  // Descendants of this process, by walking parent links to a fixed point.
  std::set<std::string> ours = {std::to_string(getpid())};
  for (bool grew = true; grew;) {
    grew = false;
    for (const ProcessInfo& process : processes) {
      if (ours.count(process.ppid) != 0 && ours.insert(process.pid).second) grew = true;
    }
  }
  const std::string self = std::to_string(getpid());
  for (const ProcessInfo& process : processes) {
    std::string key = process.pid + " " + process.starttime;
    snapshot->processes[key] = "pid " + process.pid + " (" + process.comm + ") state " +
                               process.state + ", parent " + process.ppid + ": " + process.cmdline;
    bool descendant = process.pid != self && ours.count(process.pid) != 0;
    bool orphaned_sandbox = process.ppid == "1" && process.nested_pid_namespace;
    if (descendant || orphaned_sandbox || process.carries_token) {
      snapshot->suspect_processes.insert(key);
    }
  }
}

void SnapshotMounts(HostSnapshot* snapshot) {
  std::istringstream mountinfo(ReadFile("/proc/self/mountinfo"));
  for (std::string line; std::getline(mountinfo, line);) {
    // Drop the mount ID and parent ID: the rest names the mount.
    size_t first = line.find(' ');
    size_t second = first == std::string::npos ? first : line.find(' ', first + 1);
    snapshot->mounts.insert(second == std::string::npos ? line : line.substr(second + 1));
  }
}

void SnapshotCgroups(HostSnapshot* snapshot) {
  std::error_code error;
  for (const auto& hierarchy : fs::directory_iterator("/sys/fs/cgroup", error)) {
    if (hierarchy.is_symlink() || !hierarchy.is_directory()) continue;
    std::error_code walk_error;
    fs::recursive_directory_iterator it(hierarchy.path(),
                                        fs::directory_options::skip_permission_denied, walk_error);
    for (; !walk_error && it != fs::recursive_directory_iterator(); it.increment(walk_error)) {
      std::error_code type_error;
      if (it->is_symlink(type_error) || !it->is_directory(type_error)) {
        it.disable_recursion_pending();
        continue;
      }
      if (it.depth() >= 6) it.disable_recursion_pending();
      snapshot->cgroups.insert(fs::relative(it->path(), "/sys/fs/cgroup", type_error).string());
    }
  }
}

bool NamedLikeOurs(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower.find("plimsoll") != std::string::npos;
}

void SnapshotTemporary(HostSnapshot* snapshot) {
  std::vector<std::string> roots = {"/tmp", "/var/tmp", "/dev/shm", "/run"};
  if (const char* tmpdir = std::getenv("TMPDIR"); tmpdir != nullptr && *tmpdir != '\0') {
    roots.emplace_back(tmpdir);
  }
  for (const std::string& root : roots) {
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(root, error)) {
      if (!NamedLikeOurs(entry.path().filename().string())) continue;
      snapshot->temporary.insert(entry.path().string());
      std::error_code type_error;
      if (entry.is_symlink(type_error) || !entry.is_directory(type_error)) continue;
      std::error_code walk_error;
      fs::recursive_directory_iterator it(
          entry.path(), fs::directory_options::skip_permission_denied, walk_error);
      for (; !walk_error && it != fs::recursive_directory_iterator(); it.increment(walk_error)) {
        if (it.depth() >= 1) it.disable_recursion_pending();
        snapshot->temporary.insert(it->path().string());
      }
    }
  }
}

void SnapshotSelf(HostSnapshot* snapshot) {
  auto& self = snapshot->self;
  static const std::pair<const char*, int> kLimits[] = {{"RLIMIT_CPU", RLIMIT_CPU},
                                                        {"RLIMIT_FSIZE", RLIMIT_FSIZE},
                                                        {"RLIMIT_DATA", RLIMIT_DATA},
                                                        {"RLIMIT_STACK", RLIMIT_STACK},
                                                        {"RLIMIT_CORE", RLIMIT_CORE},
                                                        {"RLIMIT_NOFILE", RLIMIT_NOFILE},
                                                        {"RLIMIT_AS", RLIMIT_AS},
                                                        {"RLIMIT_NPROC", RLIMIT_NPROC},
                                                        {"RLIMIT_MEMLOCK", RLIMIT_MEMLOCK},
                                                        {"RLIMIT_SIGPENDING", RLIMIT_SIGPENDING},
                                                        {"RLIMIT_MSGQUEUE", RLIMIT_MSGQUEUE}};
  for (const auto& [name, resource] : kLimits) {
    rlimit limit{};
    getrlimit(resource, &limit);
    self[name] = std::to_string(limit.rlim_cur) + "/" + std::to_string(limit.rlim_max);
  }
  self["cwd"] = ReadLink("/proc/self/cwd");
  std::istringstream status(ReadFile("/proc/self/status"));
  static const char* const kStatusKeys[] = {"Umask",   "Uid",    "Gid",    "Groups", "CapInh",
                                            "CapPrm",  "CapEff", "CapBnd", "CapAmb", "NoNewPrivs",
                                            "Seccomp", "SigBlk", "SigIgn", "Threads"};
  for (std::string line; std::getline(status, line);) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, colon);
    if (std::find(std::begin(kStatusKeys), std::end(kStatusKeys), key) == std::end(kStatusKeys)) {
      continue;
    }
    std::string value = Trimmed(line.substr(colon + 1));
    if (key == "SigIgn") {
      // Signals 32 and 33 are glibc's own (thread cancellation, setxid): it
      // installs their handlers when the process starts its first thread
      // (the provider's background threads do), so an inherited "ignore"
      // of them changes by design. Every other signal is compared.
      uint64_t ignored = std::strtoull(value.c_str(), nullptr, 16);
      ignored &= ~((uint64_t{1} << 31) | (uint64_t{1} << 32));
      char masked[17];
      std::snprintf(masked, sizeof masked, "%016llx", static_cast<unsigned long long>(ignored));
      value = masked;
    }
    self["status." + key] = value;
  }
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc/self/ns", error)) {
    self["ns." + entry.path().filename().string()] = ReadLink(entry.path().string());
  }
  // Open descriptors (the directory iterator's own descriptor excluded).
  std::vector<std::string> descriptors;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd", error)) {
    std::string target = ReadLink(entry.path().string());
    if (target.rfind("/proc/", 0) == 0 && target.find("/fd") != std::string::npos) continue;
    descriptors.push_back(entry.path().filename().string() + "->" + target);
  }
  std::sort(descriptors.begin(), descriptors.end());
  std::string joined;
  for (const auto& descriptor : descriptors) joined += descriptor + " ";
  self["descriptors"] = joined;
  utsname names{};
  uname(&names);
  self["host.nodename"] = names.nodename;
  for (const char* setting : {"/proc/sys/kernel/core_pattern", "/proc/sys/kernel/modprobe",
                              "/proc/sys/kernel/hostname", "/proc/sys/kernel/domainname"}) {
    self[setting] = Trimmed(ReadFile(setting));
  }
}

}  // namespace

HostSnapshot SnapshotHost(const std::string& token) {
  HostSnapshot snapshot;
  SnapshotProcesses(token, &snapshot);
  SnapshotMounts(&snapshot);
  SnapshotCgroups(&snapshot);
  SnapshotTemporary(&snapshot);
  SnapshotSelf(&snapshot);
  return snapshot;
}

std::vector<std::string> Leftovers(const HostSnapshot& before, const HostSnapshot& after) {
  std::vector<std::string> found;
  for (const std::string& key : after.suspect_processes) {
    if (before.processes.count(key) == 0) {
      found.push_back("A process was left behind: " + after.processes.at(key) + ".");
    }
  }
  std::multiset<std::string> added, removed;
  std::set_difference(after.mounts.begin(), after.mounts.end(), before.mounts.begin(),
                      before.mounts.end(), std::inserter(added, added.end()));
  std::set_difference(before.mounts.begin(), before.mounts.end(), after.mounts.begin(),
                      after.mounts.end(), std::inserter(removed, removed.end()));
  for (const auto& mount : added) found.push_back("A mount was left behind: " + mount + ".");
  for (const auto& mount : removed) found.push_back("A host mount disappeared: " + mount + ".");
  for (const auto& cgroup : after.cgroups) {
    if (before.cgroups.count(cgroup) == 0) {
      found.push_back("A cgroup was left behind: /sys/fs/cgroup/" + cgroup + ".");
    }
  }
  for (const auto& entry : after.temporary) {
    if (before.temporary.count(entry) == 0) {
      found.push_back("A temporary file or directory was left behind: " + entry + ".");
    }
  }
  for (const auto& [key, value] : after.self) {
    auto it = before.self.find(key);
    std::string was = it == before.self.end() ? "(absent)" : it->second;
    if (was != value) {
      found.push_back("The host process changed: " + key + " was \"" + was + "\", now \"" + value +
                      "\".");
    }
  }
  for (const auto& [key, value] : before.self) {
    if (after.self.count(key) == 0) {
      found.push_back("The host process changed: " + key + " disappeared (was \"" + value + "\").");
    }
  }
  return found;
}

bool NamesALiveOwner(const std::string& text) {
  // An owner tag "<pid>-<start time>" begins a name or follows a '-' in it
  // ("run-<tag>-3", "vm-<tag>-<hex>", "plimsoll-<tag>-<hex>").
  for (size_t i = 0; i < text.size(); ++i) {
    bool starts = i == 0 || text[i - 1] == '-' || text[i - 1] == '/' || text[i - 1] == ' ';
    if (!starts || !std::isdigit(static_cast<unsigned char>(text[i]))) continue;
    size_t end = text.find_first_of("/ ", i);
    std::string_view name(text.data() + i, (end == std::string::npos ? text.size() : end) - i);
    if (os::OwnerAlive(name)) return true;
  }
  return false;
}

namespace {

// Whether a '-'-separated number in the last component of `path` is the pid
// of a live process other than this one: other tests name their temporary
// directories after their pid ("/run/plimsoll-test-oci-<pid>").
bool NamesAnotherLiveProcess(const std::string& path) {
  std::string name = fs::path(path).filename().string();
  std::istringstream parts(name);
  for (std::string part; std::getline(parts, part, '-');) {
    if (part.empty() || !std::all_of(part.begin(), part.end(), ::isdigit) || part.size() > 9) {
      continue;
    }
    long pid = std::stol(part);
    if (pid > 1 && pid != getpid() && os::ProcessStartTime(static_cast<pid_t>(pid)) >= 0) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> LeftoversOfDeadOwners(const HostSnapshot& before,
                                               const HostSnapshot& after) {
  HostSnapshot filtered = after;
  auto drop_live = [](auto& entries) {
    for (auto it = entries.begin(); it != entries.end();) {
      it = NamesALiveOwner(*it) ? entries.erase(it) : std::next(it);
    }
  };
  drop_live(filtered.cgroups);
  drop_live(filtered.temporary);
  for (auto it = filtered.temporary.begin(); it != filtered.temporary.end();) {
    it = NamesAnotherLiveProcess(*it) ? filtered.temporary.erase(it) : std::next(it);
  }
  drop_live(filtered.mounts);
  return Leftovers(before, filtered);
}

}  // namespace plimsoll::hostile
