#include "providers/microvm/jail_uid.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace plimsoll::microvm {

UidLease::UidLease(UidLease&& other) noexcept
    : uid_(other.uid_), path_(std::move(other.path_)), lock_(std::move(other.lock_)) {
  other.path_.clear();
}

UidLease& UidLease::operator=(UidLease&& other) noexcept {
  if (this != &other) {
    Release();
    uid_ = other.uid_;
    path_ = std::move(other.path_);
    lock_ = std::move(other.lock_);
    other.path_.clear();
  }
  return *this;
}

UidLease::~UidLease() { Release(); }

void UidLease::Release() {
  // Unlinked while still locked: whoever opened it meanwhile finds it stale.
  if (lock_.valid() && !path_.empty()) unlink(path_.c_str());
  lock_.Reset();
  path_.clear();
}

std::set<uid_t> UidsInUse() {
  std::set<uid_t> uids;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return uids;
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::ifstream status(std::string("/proc/") + entry->d_name + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("Uid:", 0) != 0) continue;
      std::istringstream fields(line.substr(4));
      for (uid_t uid; fields >> uid;) uids.insert(uid);
      break;
    }
  }
  closedir(proc);
  return uids;
}

Expected<UidLease> LeaseJailUid(const UidRange& range, const std::set<uid_t>& in_use) {
  std::error_code error;
  std::filesystem::create_directories(range.lock_directory, error);
  if (error) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "Cannot make the uid lock directory " + range.lock_directory + ": " +
                       error.message());
  }
  chmod(range.lock_directory.c_str(), 0700);
  for (uint32_t i = 0; i < range.count; ++i) {
    uid_t uid = range.base + i;
    if (in_use.count(uid) != 0) continue;
    std::string path = range.lock_directory + "/" + std::to_string(uid);
    // A few tries: a file unlinked by its releasing holder between our
    // open and our flock is stale (see the header).
    for (int attempt = 0; attempt < 8; ++attempt) {
      guest::agent::UniqueFd lock(
          open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
      if (!lock.valid()) return SystemError("open " + path, errno);
      if (flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) return SystemError("flock " + path, errno);
        break;  // leased by someone else: the next uid
      }
      struct stat held {}, named {};
      if (fstat(lock.get(), &held) != 0) return SystemError("fstat " + path, errno);
      if (stat(path.c_str(), &named) == 0 && named.st_ino == held.st_ino &&
          named.st_dev == held.st_dev) {
        return UidLease(uid, path, std::move(lock));
      }
    }
  }
  return Failure(ErrorCode::kResourceExhausted,
                 "All " + std::to_string(range.count) + " jail uids from " +
                     std::to_string(range.base) + " are in use (SANDBOX_MICROVM_JAIL_UID_BASE).");
}

}  // namespace plimsoll::microvm
