#include "providers/microvm/jail_uid.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <thread>
#include <vector>

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

UidLease::~UidLease() {
  Release();
}

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
      // A zombie runs nothing (and may wait long for its reaper): not live.
      if (line.rfind("State:", 0) == 0 && line.find('Z') != std::string::npos) break;
      if (line.rfind("Uid:", 0) != 0) continue;
      std::istringstream fields(line.substr(4));
      for (uid_t uid; fields >> uid;) uids.insert(uid);
      break;
    }
  }
  closedir(proc);
  return uids;
}

namespace {

// Whether /proc/<pid>/status names `uid` among its ids, and the process is
// not a zombie (a zombie runs nothing and holds nothing but its pid).
bool RunsAs(const std::string& pid, uid_t uid) {
  std::ifstream status("/proc/" + pid + "/status");
  bool as_uid = false;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("State:", 0) == 0 && line.find('Z') != std::string::npos) return false;
    if (line.rfind("Uid:", 0) != 0) continue;
    std::istringstream fields(line.substr(4));
    for (uid_t id; fields >> id;) as_uid = as_uid || id == uid;
    break;
  }
  return as_uid;
}

std::vector<std::string> ProcessesOf(uid_t uid) {
  std::vector<std::string> pids;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    if (RunsAs(entry->d_name, uid)) pids.emplace_back(entry->d_name);
  }
  closedir(proc);
  return pids;
}

}  // namespace

Status EndProcessesOf(uid_t uid, std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    std::vector<std::string> left = ProcessesOf(uid);
    if (left.empty()) return Status::Ok();
    if (std::chrono::steady_clock::now() >= deadline) {
      return Failure(ErrorCode::kInternal, std::to_string(left.size()) +
                                               " process(es) still run as the VM's uid " +
                                               std::to_string(uid) + " (pid " + left[0] + ")");
    }
    for (const std::string& pid : left) {
      base::UniqueFd pidfd(
          static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(std::stol(pid)), 0)));
      // Pinned, then checked again: the pid may have been recycled.
      if (pidfd.valid() && RunsAs(pid, uid)) {
        syscall(SYS_pidfd_send_signal, pidfd.get(), SIGKILL, nullptr, 0);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

int RemoveStaleLeases(const UidRange& range) {
  int removed = 0;
  std::set<uid_t> in_use = UidsInUse();
  for (uint32_t i = 0; i < range.count; ++i) {
    uid_t uid = range.base + i;
    std::string path = range.lock_directory + "/" + std::to_string(uid);
    base::UniqueFd lock(open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
    if (!lock.valid() || in_use.count(uid) != 0) continue;
    if (flock(lock.get(), LOCK_EX | LOCK_NB) != 0) continue;  // a live lease
    struct stat held {
    }, named{};
    if (fstat(lock.get(), &held) == 0 && stat(path.c_str(), &named) == 0 &&
        named.st_ino == held.st_ino && named.st_dev == held.st_dev && unlink(path.c_str()) == 0) {
      ++removed;
    }
  }
  return removed;
}

void HoldUntilExit(UidLease lease) {
  static std::mutex mutex;
  static auto* held = new std::vector<UidLease>();  // never destroyed: held to the end
  std::lock_guard lock(mutex);
  held->push_back(std::move(lease));
}

Expected<UidLease> LeaseJailUid(const UidRange& range, const std::set<uid_t>& in_use) {
  std::error_code error;
  std::filesystem::create_directories(range.lock_directory, error);
  if (error) {
    return Failure(
        ErrorCode::kFailedPrecondition,
        "Cannot make the uid lock directory " + range.lock_directory + ": " + error.message());
  }
  chmod(range.lock_directory.c_str(), 0700);
  for (uint32_t i = 0; i < range.count; ++i) {
    uid_t uid = range.base + i;
    if (in_use.count(uid) != 0) continue;
    std::string path = range.lock_directory + "/" + std::to_string(uid);
    // A few tries: a file unlinked by its releasing holder between our
    // open and our flock is stale (see the header).
    for (int attempt = 0; attempt < 8; ++attempt) {
      base::UniqueFd lock(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600));
      if (!lock.valid()) return SystemError("open " + path, errno);
      if (flock(lock.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) return SystemError("flock " + path, errno);
        break;  // leased by someone else: the next uid
      }
      struct stat held {
      }, named{};
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
