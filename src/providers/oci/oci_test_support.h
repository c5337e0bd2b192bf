// Test support for the `oci` provider's integration tests (oci_provider_test,
// oci_crash_test): host parameters, a private state directory, and what a
// provider may have left on the host (containers under its state root,
// bundles, cgroups under /plimsoll-oci, processes naming its state dir).
// Header-only; used by tests only.
#ifndef PLIMSOLL_PROVIDERS_OCI_OCI_TEST_SUPPORT_H_
#define PLIMSOLL_PROVIDERS_OCI_OCI_TEST_SUPPORT_H_

#include <dirent.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/host_preconditions.h"
#include "image/image.h"
#include "os/spawn.h"
#include "plimsoll/limits.h"
#include "plimsoll/provider.h"
#include "providers/oci/runtime.h"

namespace plimsoll::oci::testing {

using TestClock = std::chrono::steady_clock;

inline const std::vector<RuntimeKind>& AllRuntimes() {
  static const std::vector<RuntimeKind> kinds = {RuntimeKind::kRunc, RuntimeKind::kCrun,
                                                 RuntimeKind::kRunsc};
  return kinds;
}

inline std::string RuntimeName(RuntimeKind kind) {
  return std::string(RuntimeKindName(kind));
}

inline Tier ExpectedTier(RuntimeKind kind) {
  return kind == RuntimeKind::kRunsc ? Tier::kKernel : Tier::kContainer;
}

// The runtime probed with `state_dir`, or the error.
inline Expected<Runtime> Probe(RuntimeKind kind, const std::string& state_dir) {
  RuntimeOptions options;
  options.state_dir = state_dir;
  return ProbeRuntime(kind, options, TestClock::now() + std::chrono::seconds(20));
}

// The suite parameter of a runtime ("oci:runc"), for PLIMSOLL_REQUIRE_HOST.
inline std::string HostParameter(RuntimeKind kind) {
  return "oci:" + RuntimeName(kind);
}

// Every cgroup directory named like one of our containers, in every
// hierarchy: /sys/fs/cgroup/<hierarchy>/plimsoll-oci/plimsoll-*.
inline std::set<std::string> ContainerCgroups() {
  std::set<std::string> found;
  std::error_code error;
  for (const auto& hierarchy : std::filesystem::directory_iterator("/sys/fs/cgroup", error)) {
    std::filesystem::path parent = hierarchy.path() / std::string(kCgroupParent).substr(1);
    std::error_code inner;
    for (const auto& child : std::filesystem::directory_iterator(parent, inner)) {
      std::string name = child.path().filename().string();
      if (name.rfind(kContainerIdPrefix, 0) == 0) found.insert(child.path().string());
    }
  }
  return found;
}

// The containers under the runtime's state root (`<runtime> --root <state>/<rt> list`);
// a failing list is reported as an entry, so it never reads as "nothing".
inline std::vector<std::string> ListedContainers(const Runtime& runtime) {
  auto listed = os::RunCommand(runtime.SpawnFor(runtime.ListArgv()),
                               TestClock::now() + std::chrono::seconds(20));
  if (!listed.ok()) return {"(list failed: " + listed.error().message() + ")"};
  if (!WIFEXITED(listed->status) || WEXITSTATUS(listed->status) != 0) {
    return {"(list failed: " + listed->output + ")"};
  }
  std::vector<std::string> ids;
  std::istringstream lines(listed->output);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) ids.push_back(line);
  }
  return ids;
}

inline std::vector<std::string> DirectoryEntries(const std::string& directory) {
  std::vector<std::string> names;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(directory, error)) {
    names.push_back(entry.path().filename().string());
  }
  return names;
}

// The bytes of a /proc file, or "" when the process is gone (reading the
// file of a process that exits meanwhile fails with ESRCH, which an
// istreambuf_iterator would throw as an exception).
inline std::string ReadProcFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();  // a read error sets failbit here, never throws
  return bytes.str();
}

// Processes (other than this one) whose command line contains `text`, as
// "pid: cmdline".
inline std::vector<std::string> ProcessesMentioning(const std::string& text) {
  std::vector<std::string> found;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return {"(cannot read /proc)"};
  const std::string self = std::to_string(getpid());
  while (dirent* entry = readdir(proc)) {
    std::string name = entry->d_name;
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (name == self) continue;
    std::string cmdline = ReadProcFile("/proc/" + name + "/cmdline");
    for (char& c : cmdline) {
      if (c == '\0') c = ' ';
    }
    if (cmdline.find(text) != std::string::npos) found.push_back(name + ": " + cmdline);
  }
  closedir(proc);
  return found;
}

inline std::string Join(const std::vector<std::string>& items) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// The ids of every container a provider creates while this lives: each one
// gets a bundle directory named after it before its runtime starts (other
// users' containers on the same host are not ours to judge).
class BundleWatch {
 public:
  explicit BundleWatch(const std::string& bundles_dir)
      : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {
    if (fd_ >= 0) inotify_add_watch(fd_, bundles_dir.c_str(), IN_CREATE | IN_MOVED_TO);
    for (const std::string& name : DirectoryEntries(bundles_dir)) ids_.insert(name);
  }
  BundleWatch(const BundleWatch&) = delete;
  BundleWatch& operator=(const BundleWatch&) = delete;
  ~BundleWatch() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }

  // Every id seen so far.
  const std::set<std::string>& Ids() {
    alignas(inotify_event) char buffer[16384];
    for (;;) {
      ssize_t got = read(fd_, buffer, sizeof buffer);
      if (got <= 0) break;
      for (char* at = buffer; at < buffer + got;) {
        auto* event = reinterpret_cast<inotify_event*>(at);
        if (event->len > 0) {
          std::string name(event->name);
          if (name.rfind(kContainerIdPrefix, 0) == 0) ids_.insert(name);
        }
        at += sizeof(inotify_event) + event->len;
      }
    }
    return ids_;
  }

 private:
  int fd_;
  std::set<std::string> ids_;
};

// The cgroup directories of `ids` that exist, in every hierarchy.
inline std::vector<std::string> CgroupsOf(const std::set<std::string>& ids) {
  std::vector<std::string> found;
  for (const std::string& cgroup : ContainerCgroups()) {
    if (ids.count(std::filesystem::path(cgroup).filename().string())) found.push_back(cgroup);
  }
  return found;
}

// What is left of `runtime`'s containers: "" when nothing. The cgroups
// judged are those of the containers `watch` saw created.
inline std::string Leftovers(const Runtime& runtime, const std::string& state_dir,
                             BundleWatch& watch) {
  std::string left;
  if (auto listed = ListedContainers(runtime); !listed.empty()) {
    left += "containers listed by " + runtime.binary() + ": " + Join(listed) + "; ";
  }
  if (auto bundles = DirectoryEntries(runtime.bundles_dir()); !bundles.empty()) {
    left += "bundles: " + Join(bundles) + "; ";
  }
  if (auto cgroups = CgroupsOf(watch.Ids()); !cgroups.empty()) {
    left += "cgroups: " + Join(cgroups) + "; ";
  }
  if (auto processes = ProcessesMentioning(state_dir + "/"); !processes.empty()) {
    left += "processes: " + Join(processes) + "; ";
  }
  return left;
}

// Polls Leftovers() until it is empty or `bound` passed; the last answer.
inline std::string WaitUntilNothingLeft(const Runtime& runtime, const std::string& state_dir,
                                        BundleWatch& watch, std::chrono::milliseconds bound) {
  auto give_up = TestClock::now() + bound;
  for (;;) {
    std::string left = Leftovers(runtime, state_dir, watch);
    if (left.empty() || TestClock::now() > give_up) return left;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// The "pool" detail of a provider's description.
inline std::string PoolDetail(const Provider& provider) {
  for (const auto& [key, value] : provider.Describe().details) {
    if (key == "pool") return value;
  }
  return "";
}

// The counts in a pool detail ("N of M ready (...); H handed out, E found
// empty, U discarded as unhealthy, F start failures").
struct PoolCounts {
  bool parsed = false;
  int ready = 0, size = 0;
  bool enabled = false;
  int handed_out = 0, empty = 0, unhealthy = 0, start_failures = 0;
};

inline PoolCounts ParsePool(const std::string& detail) {
  static const std::regex pattern(
      R"(^(\d+) of (\d+) ready \((enabled|disabled[^)]*)\); (\d+) handed out, (\d+) found empty, )"
      R"((\d+) discarded as unhealthy, (\d+) start failures)");
  PoolCounts counts;
  std::smatch match;
  if (!std::regex_search(detail, match, pattern)) return counts;
  counts.parsed = true;
  counts.ready = std::stoi(match[1]);
  counts.size = std::stoi(match[2]);
  counts.enabled = match[3] == "enabled";
  counts.handed_out = std::stoi(match[4]);
  counts.empty = std::stoi(match[5]);
  counts.unhealthy = std::stoi(match[6]);
  counts.start_failures = std::stoi(match[7]);
  return counts;
}

// Polls the provider's pool detail until `done` holds or `bound` passed.
template <typename Predicate>
bool WaitForPool(const Provider& provider, std::chrono::milliseconds bound, Predicate done,
                 std::string* last) {
  auto give_up = TestClock::now() + bound;
  for (;;) {
    *last = PoolDetail(provider);
    if (done(ParsePool(*last))) return true;
    if (TestClock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

// The value of evidence fact `key`, "" when there is none.
inline std::string Fact(const Evidence& evidence, const std::string& key) {
  for (const auto& [name, value] : evidence.facts) {
    if (name == key) return value;
  }
  return "";
}

// The check named `name`, or null.
inline const EvidenceCheck* FindCheck(const Evidence& evidence, const std::string& name) {
  for (const EvidenceCheck& check : evidence.checks) {
    if (check.name == name) return &check;
  }
  return nullptr;
}

// `request` validated against `limits` and run on `provider` within its
// own timeout.
inline Expected<Result> RunRequest(Provider& provider, const Limits& limits,
                                   const Request& request) {
  auto validated = ValidateRequest(request, limits);
  if (!validated.ok()) return validated.error();
  return provider.Run(*validated,
                      TestClock::now() + std::chrono::milliseconds(validated->timeout_ms));
}

}  // namespace plimsoll::oci::testing

#endif  // PLIMSOLL_PROVIDERS_OCI_OCI_TEST_SUPPORT_H_
