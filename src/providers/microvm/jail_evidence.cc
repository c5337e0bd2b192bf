#include "providers/microvm/jail_evidence.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace plimsoll::microvm {
namespace {

std::string Link(const std::string& path) {
  std::error_code error;
  auto target = std::filesystem::read_symlink(path, error);
  return error ? "" : target.string();
}

bool AllIds(const std::string& line, unsigned id) {
  std::istringstream fields(line);
  int count = 0;
  for (unsigned value; fields >> value; ++count) {
    if (value != id) return false;
  }
  return count == 4;
}

std::string Join(const std::vector<std::string>& parts) {
  std::string text;
  for (const std::string& part : parts) text += (text.empty() ? "" : " ") + part;
  return text;
}

}  // namespace

std::map<std::string, std::string> ReadProcStatus(pid_t pid) {
  std::map<std::string, std::string> fields;
  std::istringstream lines(ReadSmallTextFile("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(lines, line);) {
    size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    fields[line.substr(0, colon)] = value;
  }
  return fields;
}

std::string ReadSmallTextFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> JailRootEntries(const JailSpec& spec) {
  std::set<std::string> names;
  auto first = [&](const std::string& path) { names.insert(path.substr(1, path.find('/', 1) - 1)); };
  for (const std::string& path : spec.read_only) first(path);
  for (const std::string& path : spec.writable) first(path);
  if (!spec.devices.empty()) names.insert("dev");
  return {names.begin(), names.end()};
}

std::vector<EvidenceCheck> InspectJail(const MicrovmVm& vm) {
  std::vector<EvidenceCheck> checks;
  const pid_t pid = vm.pid();
  const JailSpec& spec = vm.jail();
  const std::string proc = "/proc/" + std::to_string(pid);
  auto status = ReadProcStatus(pid);
  if (pid <= 0 || status.empty() || status["Name"].rfind("qemu", 0) != 0) {
    checks.push_back({"jail_user", false,
                      "no QEMU process to inspect (pid " + std::to_string(pid) + ", name \"" +
                          status["Name"] + "\")"});
    return checks;
  }

  bool ids = spec.uid != 0 && spec.gid != 0 && AllIds(status["Uid"], spec.uid) &&
             AllIds(status["Gid"], spec.gid);
  std::string expected_groups;
  for (gid_t group : spec.groups) expected_groups += (expected_groups.empty() ? "" : " ") + std::to_string(group);
  std::string groups = status["Groups"];
  while (!groups.empty() && groups.back() == ' ') groups.pop_back();
  ids = ids && groups == expected_groups;
  checks.push_back({"jail_user", ids,
                    "QEMU (pid " + std::to_string(pid) + ") runs as Uid " + status["Uid"] +
                        ", Gid " + status["Gid"] + ", Groups [" + groups + "]; the VM's uid is " +
                        std::to_string(spec.uid)});

  bool no_caps = true;
  std::string caps;
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    const std::string& value = status[set];
    no_caps = no_caps && !value.empty() && value.find_first_not_of('0') == std::string::npos;
    caps += std::string(caps.empty() ? "" : ", ") + set + " " + value;
  }
  checks.push_back({"jail_capabilities", no_caps, caps});
  checks.push_back({"jail_no_new_privs", status["NoNewPrivs"] == "1",
                    "NoNewPrivs: " + status["NoNewPrivs"]});
  checks.push_back({"jail_seccomp", status["Seccomp"] == "2",
                    "Seccomp: " + status["Seccomp"] + " (2: QEMU's -sandbox filter is on)"});

  bool separate = true;
  std::string namespaces;
  for (const char* ns : {"mnt", "net", "ipc", "uts"}) {
    std::string theirs = Link(proc + "/ns/" + ns);
    std::string ours = Link(std::string("/proc/self/ns/") + ns);
    separate = separate && !theirs.empty() && !ours.empty() && theirs != ours;
    namespaces += (namespaces.empty() ? "" : ", ") + theirs + " (ours " + ours + ")";
  }
  checks.push_back({"jail_namespaces", separate, namespaces});

  std::vector<std::string> entries;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(proc + "/root", error)) {
    entries.push_back(entry.path().filename().string());
  }
  std::sort(entries.begin(), entries.end());
  std::vector<std::string> expected = JailRootEntries(spec);
  bool hidden = true;
  for (const char* host_only : {"/home", "/root", "/proc", "/sys", "/etc/passwd", "/etc/shadow"}) {
    struct stat st {};
    if (lstat((proc + "/root" + host_only).c_str(), &st) == 0) hidden = false;
  }
  checks.push_back({"jail_root", !error && entries == expected && hidden,
                    "QEMU's root holds [" + Join(entries) + "] (the jail's: [" + Join(expected) +
                        "]); /home, /root, /proc, /sys, /etc/passwd " +
                        (hidden ? "absent" : "PRESENT")});

  // /proc/<pid>/cgroup names the VM's cgroup in each hierarchy used.
  std::string memberships = ReadSmallTextFile(proc + "/cgroup");
  bool member = !spec.cgroups.empty();
  for (const std::string& directory : spec.cgroups) {
    size_t at = directory.find(std::string("/") + kMicrovmCgroupParent + "/");
    member = member && at != std::string::npos &&
             memberships.find(":" + directory.substr(at) + "\n") != std::string::npos;
  }
  std::string limits;
  std::set<std::string> limited;
  for (const auto& [file, value] : vm.CgroupLimits()) {
    limits += (limits.empty() ? "" : ", ") + file + " " + value;
    if (value != "max" && value != "-1" && value.find("9223372036854") == std::string::npos) {
      limited.insert(file.substr(0, file.find('.')));
    }
  }
  bool bounded = limited.count("memory") != 0 && limited.count("pids") != 0;
  checks.push_back({"jail_cgroup", member && bounded,
                    std::string(member ? "QEMU is in " : "QEMU is NOT in all of ") +
                        Join(spec.cgroups) + "; limits: " + limits});
  return checks;
}

}  // namespace plimsoll::microvm
