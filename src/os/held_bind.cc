#include "os/held_bind.h"

#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "os/owner.h"

namespace plimsoll::os {
namespace {

Error EnvironmentRefusal(const std::string& message) {
  return Refusal(NotDispatched::kEnvironment, message);
}

// Lazily: a sandbox that mounted the bind keeps its own copy.
void Unbind(const std::string& path) {
  umount2(path.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW);
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}

}  // namespace

Expected<std::unique_ptr<HeldBind>> HeldBind::Make(const std::string& dir,
                                                   const std::string& source, Kind kind,
                                                   std::string_view name) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  // 0711: a sandbox's user namespace (the linux provider's child, not host
  // root) must traverse it to reach its bind; nothing in it is secret.
  if (error || chmod(dir.c_str(), 0711) != 0) {
    return EnvironmentRefusal("The directory for held binds " + dir + " cannot be made: " +
                              (error ? error.message() : std::strerror(errno)) + ".");
  }
  static std::atomic<uint64_t> serial{0};
  std::string path = dir + "/" + OwnerTag() + "-" + std::to_string(++serial);
  if (!name.empty()) path += "." + std::string(name);
  Unbind(path);  // ours by its tag, from an earlier process with our pid and start time: none
  if (kind == Kind::kDirectory) {
    if (mkdir(path.c_str(), 0711) != 0) {
      return EnvironmentRefusal("Cannot make " + path + ": " + std::strerror(errno) + ".");
    }
  } else {
    int fd = open(path.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
      return EnvironmentRefusal("Cannot make " + path + ": " + std::strerror(errno) + ".");
    close(fd);
  }
  if (mount(source.c_str(), path.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    int saved = errno;
    Unbind(path);
    return EnvironmentRefusal("Cannot bind " + source + " at " + path + ": " +
                              std::strerror(saved) + ".");
  }
  // Read-only: nothing of ours writes there, and a recursive removal of the
  // state directory that meets a bind left by a crash fails (EROFS) instead
  // of deleting the image through it.
  if (mount(nullptr, path.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0) {
    int saved = errno;
    Unbind(path);
    return EnvironmentRefusal("Cannot make the bind " + path +
                              " read-only: " + std::strerror(saved) + ".");
  }
  if (mount(nullptr, path.c_str(), nullptr, MS_PRIVATE, nullptr) != 0) {
    int saved = errno;
    Unbind(path);
    return EnvironmentRefusal("Cannot make the bind " + path + " private: " + std::strerror(saved) +
                              ".");
  }
  return std::unique_ptr<HeldBind>(new HeldBind(std::move(path)));
}

HeldBind::~HeldBind() {
  Unbind(path_);
}

Status RemoveLeftoverBinds(const std::string& dir) {
  std::error_code error;
  std::string problems;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (!LeftByDeadOwner(entry.path().filename().string())) continue;
    Unbind(entry.path().string());
    std::error_code gone;
    if (std::filesystem::exists(std::filesystem::symlink_status(entry.path(), gone))) {
      problems += "could not remove the held bind " + entry.path().string() + "; ";
    }
  }
  if (!problems.empty()) return Failure(ErrorCode::kInternal, problems);
  return Status::Ok();
}

}  // namespace plimsoll::os
