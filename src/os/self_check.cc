#include "os/self_check.h"

#include <sys/utsname.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <utility>

#include "os/proc_masks.h"

namespace plimsoll::os {
namespace {

// A Python list literal of names.
template <size_t N>
std::string PythonList(const char* const (&names)[N]) {
  std::string list = "[";
  for (const char* name : names) {
    list += std::string(list.size() > 1 ? ", " : "") + "\"" + name + "\"";
  }
  return list + "]";
}

// kSelfCheckScript with proc_masks.h's /proc lists, so the check and both
// walls (the linux sandbox, the oci bundle) name the same paths.
std::string ScriptText() {
  std::string text = kSelfCheckScript;
  for (const auto& [placeholder, value] :
       {std::pair<std::string, std::string>{"__MASKED_PROC_PATHS__", PythonList(kMaskedProcPaths)},
        std::pair<std::string, std::string>{"__READ_ONLY_PROC_PATHS__",
                                            PythonList(kReadOnlyProcPaths)}}) {
    for (size_t at; (at = text.find(placeholder)) != std::string::npos;) {
      text.replace(at, placeholder.size(), value);
    }
  }
  return text;
}

const char* ProfileArgument(SelfCheckProfile profile) {
  switch (profile) {
    case SelfCheckProfile::kOciRunc:
      return "oci-runc";
    case SelfCheckProfile::kGvisor:
      return "gvisor";
    case SelfCheckProfile::kMicrovm:
      return "microvm";
    case SelfCheckProfile::kLinux:
      break;
  }
  return "linux";
}

// The host's kernel release, which a gVisor guest must not see. An empty
// answer makes guest_kernel_is_gvisor fail: it is never guessed.
std::string HostKernelRelease() {
  utsname name{};
  if (uname(&name) != 0) return "";
  return name.release;
}

}  // namespace

ProjectPayload SelfCheckProject(const Limits& limits, SelfCheckProfile profile) {
  ProjectPayload project;
  project.files.push_back({"self_check.py", ScriptText()});
  std::vector<std::string> step = {"python3",   "self_check.py",
                                   "--tmp",     std::to_string(limits.tmp_bytes),
                                   "--work",    std::to_string(limits.work_bytes),
                                   "--pids",    std::to_string(limits.pids),
                                   "--profile", ProfileArgument(profile)};
  if (profile == SelfCheckProfile::kGvisor || profile == SelfCheckProfile::kMicrovm) {
    step.push_back("--host-release");
    step.push_back(HostKernelRelease());
  }
  project.steps.push_back(std::move(step));
  return project;
}

const std::vector<std::string>& SelfCheckNames(SelfCheckProfile profile) {
  // Every profile: the filesystem, the network and the limits, then what
  // stands for the wall's kernel side, then the user.
  auto names = [](std::initializer_list<const char*> kernel_side) {
    std::vector<std::string> all = {
        "root_read_only",      "tmp_is_bounded_tmpfs", "work_is_bounded_tmpfs",
        "only_tmpfs_writable", "loopback_only",        "no_route_out",
        "pids_limit"};
    all.insert(all.end(), kernel_side.begin(), kernel_side.end());
    all.insert(all.end(), {"no_new_privileges", "unprivileged_no_capabilities"});
    return all;
  };
  // Our seccomp policy on every profile, with the kernel boundary the
  // higher tiers add on top of it.
  static const std::vector<std::string> container = names({"proc_masked", "seccomp_filter"});
  static const std::vector<std::string> gvisor =
      names({"guest_kernel_is_gvisor", "host_kernel_interfaces_absent", "seccomp_filter"});
  static const std::vector<std::string> microvm = names({"guest_kernel_is_own", "seccomp_filter"});
  if (profile == SelfCheckProfile::kMicrovm) return microvm;
  return profile == SelfCheckProfile::kGvisor ? gvisor : container;
}

Expected<std::vector<EvidenceCheck>> ParseSelfCheckOutput(std::string_view stdout_bytes,
                                                          SelfCheckProfile profile) {
  std::vector<EvidenceCheck> checks;
  size_t start = 0;
  while (start < stdout_bytes.size()) {
    size_t end = stdout_bytes.find('\n', start);
    if (end == std::string_view::npos) end = stdout_bytes.size();
    std::string_view line = stdout_bytes.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    auto json = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!json.is_object() || !json.contains("name") || !json["name"].is_string() ||
        !json.contains("passed") || !json["passed"].is_boolean() || !json.contains("detail") ||
        !json["detail"].is_string()) {
      return Failure(ErrorCode::kInternal, "The self-check printed a line that is not a check: " +
                                               std::string(line.substr(0, 200)));
    }
    checks.push_back({json["name"].get<std::string>(), json["passed"].get<bool>(),
                      json["detail"].get<std::string>()});
  }
  for (const std::string& name : SelfCheckNames(profile)) {
    bool found = false;
    for (const EvidenceCheck& check : checks) found = found || check.name == name;
    if (!found) checks.push_back({name, false, "the self-check did not report this check"});
  }
  return checks;
}

Request MemoryProbeRequest(const Limits& limits) {
  Request hoard;
  hoard.python =
      PythonPayload{"b = bytearray(" + std::to_string(limits.memory_bytes + (int64_t{64} << 20)) +
                    ")\nprint('survived')"};
  hoard.timeout_ms = 20'000;
  return hoard;
}

EvidenceCheck MemoryProbeCheck(const Result& probe) {
  return {"memory_limit_enforced", probe.exit_code == kExitOutOfMemory,
          "allocating memory_bytes + 64 MiB: exit " + std::to_string(probe.exit_code) +
              (probe.stdout_bytes.empty() ? std::string() : ", stdout " + probe.stdout_bytes)};
}

EvidenceCheck CgroupLimitsCheck(const Limits& limits, int64_t pids_limit,
                                const std::vector<std::pair<std::string, std::string>>& values) {
  std::string detail;
  bool memory = false, pids = false, swap = false;
  for (const auto& [file, value] : values) {
    detail += (detail.empty() ? "" : ", ") + file + "=" + value;
    if ((file == "memory.max" || file == "memory.limit_in_bytes") &&
        value == std::to_string(limits.memory_bytes)) {
      memory = true;
    }
    if ((file == "memory.memsw.limit_in_bytes" && value == std::to_string(limits.memory_bytes)) ||
        (file == "memory.swap.max" && value == "0")) {
      swap = true;
    }
    if (file == "pids.max" && value == std::to_string(pids_limit)) pids = true;
  }
  if (!swap) {
    // Without swap accounting the kernel cannot bound swap per cgroup; that
    // is only acceptable when the host has no swap at all.
    std::ifstream swaps("/proc/swaps");
    std::string header, entry;
    std::getline(swaps, header);
    if (!std::getline(swaps, entry) || entry.empty()) {
      swap = true;
      detail += ", no swap accounting but the host has no swap";
    }
  }
  if (detail.empty()) detail = "no cgroup of the sandbox was found";
  return {"cgroup_limits_configured", memory && pids && swap, detail};
}

}  // namespace plimsoll::os
