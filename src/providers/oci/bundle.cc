#include "providers/oci/bundle.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "os/caps.h"
#include "os/proc_masks.h"

namespace plimsoll::oci {
namespace {

using Json = nlohmann::ordered_json;

constexpr int64_t kCpuPeriodMicros = 100'000;
constexpr int64_t kDevTmpfsBytes = 65'536;
constexpr int64_t kNofile = 1024;  // as the `linux` provider (rlimit.h)
constexpr int64_t kGuestId = 1000;

Error Refuse(std::string message) {
  return Refusal(NotDispatched::kEnvironment, "OCI bundle: " + std::move(message));
}

// Capability names by number (linux/capability.h), for the OCI names.
constexpr std::array<const char*, 41> kCapabilityNames = {"CAP_CHOWN",
                                                          "CAP_DAC_OVERRIDE",
                                                          "CAP_DAC_READ_SEARCH",
                                                          "CAP_FOWNER",
                                                          "CAP_FSETID",
                                                          "CAP_KILL",
                                                          "CAP_SETGID",
                                                          "CAP_SETUID",
                                                          "CAP_SETPCAP",
                                                          "CAP_LINUX_IMMUTABLE",
                                                          "CAP_NET_BIND_SERVICE",
                                                          "CAP_NET_BROADCAST",
                                                          "CAP_NET_ADMIN",
                                                          "CAP_NET_RAW",
                                                          "CAP_IPC_LOCK",
                                                          "CAP_IPC_OWNER",
                                                          "CAP_SYS_MODULE",
                                                          "CAP_SYS_RAWIO",
                                                          "CAP_SYS_CHROOT",
                                                          "CAP_SYS_PTRACE",
                                                          "CAP_SYS_PACCT",
                                                          "CAP_SYS_ADMIN",
                                                          "CAP_SYS_BOOT",
                                                          "CAP_SYS_NICE",
                                                          "CAP_SYS_RESOURCE",
                                                          "CAP_SYS_TIME",
                                                          "CAP_SYS_TTY_CONFIG",
                                                          "CAP_MKNOD",
                                                          "CAP_LEASE",
                                                          "CAP_AUDIT_WRITE",
                                                          "CAP_AUDIT_CONTROL",
                                                          "CAP_SETFCAP",
                                                          "CAP_MAC_OVERRIDE",
                                                          "CAP_MAC_ADMIN",
                                                          "CAP_SYSLOG",
                                                          "CAP_WAKE_ALARM",
                                                          "CAP_BLOCK_SUSPEND",
                                                          "CAP_AUDIT_READ",
                                                          "CAP_PERFMON",
                                                          "CAP_BPF",
                                                          "CAP_CHECKPOINT_RESTORE"};

Expected<Json> CapabilityList(uint64_t mask) {
  Json list = Json::array();
  for (unsigned bit = 0; bit < 64; ++bit) {
    if ((mask & (uint64_t{1} << bit)) == 0) continue;
    if (bit >= kCapabilityNames.size()) {
      return Refuse("capability number " + std::to_string(bit) + " has no OCI name.");
    }
    list.push_back(kCapabilityNames[bit]);
  }
  return list;
}

// The five device nodes the `linux` provider binds (char major 1).
struct Device {
  const char* path;
  int64_t minor;
};
constexpr std::array<Device, 5> kDevices = {{{"/dev/null", 3},
                                             {"/dev/zero", 5},
                                             {"/dev/full", 7},
                                             {"/dev/random", 8},
                                             {"/dev/urandom", 9}}};

Json Mount(const char* destination, const char* type, const char* source, Json options) {
  Json mount;
  mount["destination"] = destination;
  mount["type"] = type;
  mount["source"] = source;
  mount["options"] = std::move(options);
  return mount;
}

Json Rlimit(const char* type, int64_t value) {
  Json rlimit;
  rlimit["type"] = type;
  rlimit["hard"] = value;
  rlimit["soft"] = value;
  return rlimit;
}

Json IdMappings(int64_t host_base) {
  Json list = Json::array();
  for (int64_t inside : {int64_t{0}, kGuestId}) {
    Json mapping;
    mapping["containerID"] = inside;
    mapping["hostID"] = host_base + inside;
    mapping["size"] = 1;
    list.push_back(std::move(mapping));
  }
  return list;
}

// runsc ignores errnoRet (2022-12-19 and 2024-07-29 alike): every denial
// it applies from config.json answers EPERM. A denial with another errno is
// then written here as an allowance when that errno is ENOSYS (clone3): the
// agent installs the same policy, compiled, in each step, and gVisor's
// kernel answers that filter's errnos exactly (oci_provider.cc,
// Prepared::seccomp_filter); the self-check proves the answer.
Expected<Json> SeccompJson(const os::SeccompPolicy& policy, RuntimeKind runtime) {
  Json seccomp;
  seccomp["defaultAction"] = "SCMP_ACT_ERRNO";
  seccomp["defaultErrnoRet"] = policy.default_errno;
  seccomp["architectures"] = Json::array({"SCMP_ARCH_X86_64"});
  Json syscalls = Json::array();
  for (const os::SeccompRule& rule : policy.rules) {
    Json entry;
    entry["names"] = Json::array({rule.syscall});
    entry["action"] = rule.allow ? "SCMP_ACT_ALLOW" : "SCMP_ACT_ERRNO";
    if (runtime == RuntimeKind::kRunsc && !rule.allow && rule.errno_value != policy.default_errno) {
      if (rule.errno_value != ENOSYS || rule.condition) {
        return Refuse("seccomp policy line " + std::to_string(rule.line) +
                      ": runsc answers every denial with the default errno, so this errno "
                      "cannot be kept under runsc.");
      }
      entry["action"] = "SCMP_ACT_ALLOW";  // the step's own filter answers (see above)
      syscalls.push_back(std::move(entry));
      continue;
    }
    if (!rule.allow) entry["errnoRet"] = rule.errno_value;
    if (rule.condition) {
      const os::SeccompCondition& c = *rule.condition;
      Json arg;
      arg["index"] = c.argument;
      if (c.mask == ~uint64_t{0}) {
        arg["value"] = c.value;
        arg["op"] = c.equal ? "SCMP_CMP_EQ" : "SCMP_CMP_NE";
      } else if (c.equal) {
        arg["value"] = c.mask;
        arg["valueTwo"] = c.value;
        arg["op"] = "SCMP_CMP_MASKED_EQ";
      } else {
        return Refuse("seccomp policy line " + std::to_string(rule.line) +
                      ": a masked != condition has no OCI form.");
      }
      entry["args"] = Json::array({std::move(arg)});
    }
    syscalls.push_back(std::move(entry));
  }
  seccomp["syscalls"] = std::move(syscalls);
  return seccomp;
}

Status Validate(const BundleConfig& config) {
  if (config.rootfs.empty() || config.rootfs.front() != '/') {
    return Refuse("the rootfs path must be absolute, got \"" + config.rootfs + "\".");
  }
  if (config.args.empty() || config.args.front().empty() || config.args.front().front() != '/') {
    return Refuse("the process needs an argv whose first element is an absolute path.");
  }
  if (config.hostname.empty()) return Refuse("the host name is empty.");
  if (config.pids_limit <= 0) return Refuse("the pids limit must be positive.");
  const Limits& l = config.limits;
  if (l.memory_bytes <= 0 || l.tmp_bytes <= 0 || l.work_bytes <= 0 || l.cpus_millis <= 0) {
    return Refuse("memory, /tmp, /work sizes and the CPU share must be positive.");
  }
  if (config.user_namespace && config.user_namespace->host_base <= 0) {
    return Refuse("the user namespace's host base id must be positive.");
  }
  return Status::Ok();
}

}  // namespace

std::string_view RuntimeKindName(RuntimeKind kind) {
  switch (kind) {
    case RuntimeKind::kRunc:
      return "runc";
    case RuntimeKind::kCrun:
      return "crun";
    case RuntimeKind::kRunsc:
      return "runsc";
  }
  return "runc";
}

std::optional<RuntimeKind> ParseRuntimeKind(std::string_view name) {
  for (RuntimeKind kind : {RuntimeKind::kRunc, RuntimeKind::kCrun, RuntimeKind::kRunsc}) {
    if (RuntimeKindName(kind) == name) return kind;
  }
  return std::nullopt;
}

int64_t DefaultPidsLimit(RuntimeKind kind, const Limits& limits) {
  return kind == RuntimeKind::kRunsc ? limits.pids + kRunscPidsHeadroom : limits.pids;
}

Expected<std::string> BuildConfigJson(const BundleConfig& config) {
  PLIMSOLL_RETURN_IF_ERROR(Validate(config));
  const Limits& limits = config.limits;

  Json doc;
  doc["ociVersion"] = "1.0.2";

  // process
  Json process;
  process["terminal"] = false;
  Json user;
  user["uid"] = 0;
  user["gid"] = 0;
  process["user"] = std::move(user);
  process["args"] = config.args;
  process["env"] = config.env;
  process["cwd"] = "/";
  auto caps = CapabilityList(os::AgentCapabilities());
  if (!caps.ok()) return caps.error();
  Json capabilities;
  capabilities["bounding"] = *caps;
  capabilities["effective"] = *caps;
  capabilities["inheritable"] = Json::array();
  capabilities["permitted"] = *caps;
  capabilities["ambient"] = Json::array();
  process["capabilities"] = std::move(capabilities);
  process["rlimits"] = Json::array({Rlimit("RLIMIT_CORE", 0), Rlimit("RLIMIT_NOFILE", kNofile),
                                    Rlimit("RLIMIT_FSIZE", limits.work_bytes)});
  process["noNewPrivileges"] = true;
  doc["process"] = std::move(process);

  // root
  Json root;
  root["path"] = config.rootfs;
  root["readonly"] = true;
  doc["root"] = std::move(root);
  doc["hostname"] = config.hostname;

  // mounts
  const std::string tmp_size = "size=" + std::to_string(limits.tmp_bytes);
  const std::string work_size = "size=" + std::to_string(limits.work_bytes);
  Json mounts = Json::array();
  mounts.push_back(Mount("/proc", "proc", "proc", Json::array({"nosuid", "noexec", "nodev"})));
  // runc and crun create the device nodes and then remount /dev read-only
  // when its options say "ro"; gVisor's /dev is its own, and "ro" there
  // would make /dev/null unwritable.
  Json dev_options = Json::array({"nosuid", "noexec", "strictatime", "mode=755",
                                  "size=" + std::to_string(kDevTmpfsBytes), "nr_inodes=64"});
  if (config.runtime != RuntimeKind::kRunsc) dev_options.push_back("ro");
  mounts.push_back(Mount("/dev", "tmpfs", "tmpfs", std::move(dev_options)));
  mounts.push_back(Mount("/tmp", "tmpfs", "tmpfs",
                         Json::array({"nosuid", "noexec", "nodev", "mode=1777", tmp_size})));
  mounts.push_back(
      Mount("/work", "tmpfs", "tmpfs",
            Json::array({"nosuid", "noexec", "nodev", "mode=755", "uid=" + std::to_string(kGuestId),
                         "gid=" + std::to_string(kGuestId), work_size})));
  if (config.host_calls) {
    mounts.push_back(Mount("/run", "tmpfs", "tmpfs",
                           Json::array({"nosuid", "noexec", "nodev", "mode=755", "size=65536"})));
  }
  doc["mounts"] = std::move(mounts);

  // linux
  Json linux_section;
  if (config.user_namespace) {
    linux_section["uidMappings"] = IdMappings(config.user_namespace->host_base);
    linux_section["gidMappings"] = IdMappings(config.user_namespace->host_base);
  }
  Json namespaces = Json::array();
  for (const char* type : {"pid", "network", "ipc", "uts", "mount", "cgroup"}) {
    Json ns;
    ns["type"] = type;  // no "path": a fresh namespace (network: only lo)
    namespaces.push_back(std::move(ns));
  }
  if (config.user_namespace) {
    Json ns;
    ns["type"] = "user";
    namespaces.push_back(std::move(ns));
  }
  linux_section["namespaces"] = std::move(namespaces);

  Json devices = Json::array();
  for (const Device& d : kDevices) {
    Json node;
    node["path"] = d.path;
    node["type"] = "c";
    node["major"] = 1;
    node["minor"] = d.minor;
    node["fileMode"] = 0666;
    node["uid"] = 0;
    node["gid"] = 0;
    devices.push_back(std::move(node));
  }
  linux_section["devices"] = std::move(devices);

  Json resources;
  Json device_rules = Json::array();
  {
    Json deny_all;
    deny_all["allow"] = false;
    deny_all["access"] = "rwm";
    device_rules.push_back(std::move(deny_all));
  }
  for (const Device& d : kDevices) {
    Json allow;
    allow["allow"] = true;
    allow["type"] = "c";
    allow["major"] = 1;
    allow["minor"] = d.minor;
    allow["access"] = "rwm";
    device_rules.push_back(std::move(allow));
  }
  resources["devices"] = std::move(device_rules);
  Json memory;
  memory["limit"] = limits.memory_bytes;
  memory["swap"] = limits.memory_bytes;  // memory+swap total = memory: no swap
  resources["memory"] = std::move(memory);
  Json cpu;
  cpu["quota"] = limits.cpus_millis * (kCpuPeriodMicros / 1000);
  cpu["period"] = kCpuPeriodMicros;
  resources["cpu"] = std::move(cpu);
  Json pids;
  pids["limit"] = config.pids_limit;
  resources["pids"] = std::move(pids);
  linux_section["resources"] = std::move(resources);

  if (!config.cgroups_path.empty()) linux_section["cgroupsPath"] = config.cgroups_path;

  if (config.seccomp) {
    auto seccomp = SeccompJson(*config.seccomp, config.runtime);
    if (!seccomp.ok()) return seccomp.error();
    linux_section["seccomp"] = std::move(*seccomp);
  }

  // As runc's default spec, minus /sys entries (no /sys is mounted).
  // The same lists the linux sandbox masks (providers/linux/mount.h).
  Json masked = Json::array();
  for (const char* name : os::kMaskedProcPaths) masked.push_back(std::string("/proc/") + name);
  linux_section["maskedPaths"] = std::move(masked);
  Json read_only = Json::array();
  for (const char* name : os::kReadOnlyProcPaths) {
    read_only.push_back(std::string("/proc/") + name);
  }
  linux_section["readonlyPaths"] = std::move(read_only);
  doc["linux"] = std::move(linux_section);

  return doc.dump(2) + "\n";
}

Status WriteBundle(const std::string& bundle_dir, const BundleConfig& config) {
  if (bundle_dir.empty() || bundle_dir.front() != '/') {
    return Refuse("the bundle directory must be an absolute path, got \"" + bundle_dir + "\".");
  }
  auto text = BuildConfigJson(config);
  if (!text.ok()) return text.error();

  if (::mkdir(bundle_dir.c_str(), 0700) != 0) {
    if (errno != EEXIST) {
      return Refuse("cannot create " + bundle_dir + ": " + std::strerror(errno) + ".");
    }
    struct stat info {};
    if (::lstat(bundle_dir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
      return Refuse(bundle_dir + " exists and is not a directory.");
    }
    DIR* dir = ::opendir(bundle_dir.c_str());
    if (dir == nullptr) {
      return Refuse("cannot open " + bundle_dir + ": " + std::strerror(errno) + ".");
    }
    bool empty = true;
    while (const dirent* entry = ::readdir(dir)) {
      if (std::strcmp(entry->d_name, ".") != 0 && std::strcmp(entry->d_name, "..") != 0) {
        empty = false;
        break;
      }
    }
    ::closedir(dir);
    if (!empty) return Refuse(bundle_dir + " is not empty; a bundle needs a fresh directory.");
  }

  const std::string path = bundle_dir + "/config.json";
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return Refuse("cannot create " + path + ": " + std::strerror(errno) + ".");
  Status status;
  if (::fchmod(fd, 0600) != 0) {
    status = Refuse("cannot chmod " + path + ": " + std::strerror(errno) + ".");
  }
  const std::string& bytes = *text;
  size_t written = 0;
  while (status.ok() && written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      status = Refuse("cannot write " + path + ": " + std::strerror(errno) + ".");
      break;
    }
    written += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && status.ok()) {
    status = Refuse("cannot close " + path + ": " + std::strerror(errno) + ".");
  }
  if (!status.ok()) ::unlink(path.c_str());
  return status;
}

}  // namespace plimsoll::oci
