#include "providers/microvm/jail_spec.h"

#include <sys/stat.h>

#include <charconv>
#include <set>

namespace plimsoll::microvm {
namespace {

Error BadArgument(const std::string& message) {
  return Failure(ErrorCode::kInvalidArgument, message);
}

template <typename Number>
Expected<Number> ParseNumber(const std::string& option, const std::string& text) {
  Number value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) {
    return BadArgument(option + " needs a whole number, not \"" + text + "\".");
  }
  return value;
}

bool Exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

bool UnderUsr(const std::string& path) { return path.rfind("/usr/", 0) == 0; }

}  // namespace

bool IsNormalAbsolutePath(const std::string& path) {
  if (path.empty() || path[0] != '/' || path == "/") return false;
  if (path.back() == '/' || path.find("//") != std::string::npos) return false;
  for (size_t start = 1; start <= path.size();) {
    size_t end = path.find('/', start);
    if (end == std::string::npos) end = path.size();
    std::string part = path.substr(start, end - start);
    if (part == "." || part == "..") return false;
    start = end + 1;
  }
  return true;
}

std::vector<std::string> JailCommandLine(const std::string& jailer, const JailSpec& spec) {
  std::vector<std::string> argv = {jailer, "--uid", std::to_string(spec.uid), "--gid",
                                   std::to_string(spec.gid)};
  for (gid_t group : spec.groups) argv.insert(argv.end(), {"--group", std::to_string(group)});
  for (const std::string& dir : spec.cgroups) argv.insert(argv.end(), {"--cgroup", dir});
  for (const std::string& path : spec.read_only) argv.insert(argv.end(), {"--read-only", path});
  for (const std::string& path : spec.writable) argv.insert(argv.end(), {"--writable", path});
  for (const std::string& name : spec.devices) argv.insert(argv.end(), {"--device", name});
  if (!spec.working_directory.empty()) {
    argv.insert(argv.end(), {"--chdir", spec.working_directory});
  }
  argv.insert(argv.end(), {"--max-open-files", std::to_string(spec.max_open_files),
                           "--max-file-bytes", std::to_string(spec.max_file_bytes), "--"});
  argv.insert(argv.end(), spec.command.begin(), spec.command.end());
  return argv;
}

Expected<JailSpec> ParseJailCommandLine(const std::vector<std::string>& argv) {
  static const std::set<std::string> kDevices = {"null", "zero", "urandom", "random", "kvm"};
  JailSpec spec;
  bool have_uid = false, have_gid = false;
  size_t i = 1;
  for (; i < argv.size(); ++i) {
    const std::string& option = argv[i];
    if (option == "--") {
      ++i;
      break;
    }
    if (i + 1 >= argv.size()) return BadArgument(option + " needs a value.");
    const std::string& value = argv[++i];
    auto path = [&](std::vector<std::string>* into) -> Status {
      if (!IsNormalAbsolutePath(value)) {
        return BadArgument(option + " needs a normal absolute path, not \"" + value + "\".");
      }
      into->push_back(value);
      return Status::Ok();
    };
    if (option == "--uid" || option == "--gid" || option == "--group") {
      auto id = ParseNumber<uint32_t>(option, value);
      if (!id.ok()) return id.error();
      if (option != "--group" && (*id == 0 || *id == static_cast<uint32_t>(-1))) {
        return BadArgument(option + " must not be 0 (root) or -1.");
      }
      if (option == "--uid") {
        spec.uid = *id;
        have_uid = true;
      } else if (option == "--gid") {
        spec.gid = *id;
        have_gid = true;
      } else {
        spec.groups.push_back(*id);
      }
    } else if (option == "--cgroup") {
      PLIMSOLL_RETURN_IF_ERROR(path(&spec.cgroups));
    } else if (option == "--read-only") {
      PLIMSOLL_RETURN_IF_ERROR(path(&spec.read_only));
    } else if (option == "--writable") {
      PLIMSOLL_RETURN_IF_ERROR(path(&spec.writable));
    } else if (option == "--chdir") {
      std::vector<std::string> directory;
      PLIMSOLL_RETURN_IF_ERROR(path(&directory));
      spec.working_directory = directory.front();
    } else if (option == "--device") {
      if (kDevices.count(value) == 0) return BadArgument("Unknown device \"" + value + "\".");
      spec.devices.push_back(value);
    } else if (option == "--max-open-files") {
      auto number = ParseNumber<uint64_t>(option, value);
      if (!number.ok()) return number.error();
      spec.max_open_files = *number;
    } else if (option == "--max-file-bytes") {
      auto number = ParseNumber<uint64_t>(option, value);
      if (!number.ok()) return number.error();
      spec.max_file_bytes = *number;
    } else {
      return BadArgument("Unknown option \"" + option + "\".");
    }
  }
  if (!have_uid || !have_gid) return BadArgument("--uid and --gid are required.");
  spec.command.assign(argv.begin() + static_cast<std::ptrdiff_t>(std::min(i, argv.size())),
                      argv.end());
  if (spec.command.empty()) return BadArgument("No command after \"--\".");
  if (!IsNormalAbsolutePath(spec.command[0])) {
    return BadArgument("The command \"" + spec.command[0] + "\" is not a normal absolute path.");
  }
  return spec;
}

JailSpec QemuJailSpec(std::vector<std::string> qemu_argv, const std::vector<std::string>& artifacts,
                      const std::string& vm_directory, uid_t uid, gid_t gid, bool kvm) {
  JailSpec spec;
  spec.uid = uid;
  spec.gid = gid;
  for (const char* path : {"/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32",
                           "/etc/ld.so.cache", "/etc/localtime"}) {
    if (Exists(path)) spec.read_only.push_back(path);
  }
  if (!qemu_argv.empty() && !UnderUsr(qemu_argv[0])) spec.read_only.push_back(qemu_argv[0]);
  for (const std::string& artifact : artifacts) {
    if (!UnderUsr(artifact)) spec.read_only.push_back(artifact);  // else visible through /usr
  }
  spec.writable.push_back(vm_directory);
  spec.working_directory = vm_directory;
  spec.devices = {"null", "zero", "urandom"};
  if (kvm) spec.devices.push_back("kvm");
  spec.command = std::move(qemu_argv);
  return spec;
}

}  // namespace plimsoll::microvm
