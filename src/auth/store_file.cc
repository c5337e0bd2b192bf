#include "auth/store_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>

namespace plimsoll::auth {
namespace {

std::string Quoted(const std::filesystem::path& path) {
  return "\"" + path.string() + "\"";
}

std::string OctalMode(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof text, "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

Status CreateParent(const std::filesystem::path& parent) {
  std::error_code error;
  std::filesystem::create_directories(parent, error);
  if (error) {
    return Failure(ErrorCode::kFailedPrecondition, "Cannot create the directory " + Quoted(parent) +
                                                       " for the caller store: " + error.message() +
                                                       ".");
  }
  ::chmod(parent.c_str(), 0700);  // best effort: tighten only what we may have created
  return Status::Ok();
}

}  // namespace

Expected<std::filesystem::path> DefaultCallerStorePath() {
  const char* chosen = std::getenv(kCallerStoreVariable);
  if (chosen != nullptr && *chosen != '\0') return std::filesystem::path(chosen);
  if (::geteuid() == 0) return std::filesystem::path("/var/lib/plimsoll/callers.db");
  const char* data_home = std::getenv("XDG_DATA_HOME");
  if (data_home != nullptr && data_home[0] == '/') {
    return std::filesystem::path(data_home) / "plimsoll" / "callers.db";
  }
  const char* home = std::getenv("HOME");
  if (home != nullptr && home[0] == '/') {
    return std::filesystem::path(home) / ".local" / "share" / "plimsoll" / "callers.db";
  }
  return Failure(ErrorCode::kFailedPrecondition,
                 "No default caller store path: HOME is not set. Give --store PATH or set "
                 "PLIMSOLL_CALLERS.");
}

Status PrepareStoreFile(const std::filesystem::path& path, bool create_if_missing,
                        bool create_parent) {
  if (path.empty()) {
    return Failure(ErrorCode::kInvalidArgument, "The caller store path is empty.");
  }
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0) {
    if (S_ISDIR(info.st_mode)) {
      return Failure(ErrorCode::kFailedPrecondition,
                     "The caller store " + Quoted(path) +
                         " is a directory; give the path of a file, e.g. " +
                         Quoted(path / "callers.db") + ".");
    }
    if (!S_ISREG(info.st_mode)) {
      return Failure(ErrorCode::kFailedPrecondition,
                     "The caller store " + Quoted(path) + " is not a regular file.");
    }
    if ((info.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
      return Failure(ErrorCode::kFailedPrecondition,
                     "The caller store " + Quoted(path) + " has mode " + OctalMode(info.st_mode) +
                         ": group or others may write it and so add callers. Run: chmod 600 " +
                         path.string());
    }
    if (::access(path.c_str(), R_OK | W_OK) != 0) {
      return Failure(ErrorCode::kFailedPrecondition,
                     "Cannot read and write the caller store " + Quoted(path) + ": " +
                         std::generic_category().message(errno) + ".");
    }
    return Status::Ok();
  }
  int stat_errno = errno;
  if (stat_errno != ENOENT) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "Cannot inspect the caller store " + Quoted(path) + ": " +
                       std::generic_category().message(stat_errno) + ".");
  }
  if (!create_if_missing) {
    return Failure(ErrorCode::kNotFound,
                   "There is no caller store at " + Quoted(path) +
                       "; create one with \"plimsoll callers create NAME --store " + path.string() +
                       "\".");
  }

  std::filesystem::path parent = path.parent_path();
  if (parent.empty()) parent = ".";
  struct stat parent_info {};
  if (::stat(parent.c_str(), &parent_info) != 0) {
    if (errno == ENOENT && create_parent) {
      PLIMSOLL_RETURN_IF_ERROR(CreateParent(parent));
    } else {
      return Failure(ErrorCode::kFailedPrecondition,
                     "The directory " + Quoted(parent) + " of the caller store does not exist (" +
                         std::generic_category().message(errno) + "); create it first.");
    }
  } else if (!S_ISDIR(parent_info.st_mode)) {
    return Failure(ErrorCode::kFailedPrecondition,
                   "The caller store's parent " + Quoted(parent) + " is not a directory.");
  }

  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    if (errno == EEXIST) return PrepareStoreFile(path, false, false);  // created meanwhile
    return Failure(ErrorCode::kFailedPrecondition,
                   "Cannot create the caller store " + Quoted(path) + ": " +
                       std::generic_category().message(errno) + ".");
  }
  // The umask may have narrowed 0600 but never widened it; make it exact.
  ::fchmod(fd, 0600);
  ::close(fd);
  return Status::Ok();
}

}  // namespace plimsoll::auth
