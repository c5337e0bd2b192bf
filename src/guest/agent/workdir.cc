#include "guest/agent/workdir.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace plimsoll::guest::agent {
namespace {

// Splits "a/b/c" into its segments; nullopt-like empty result when a segment
// is empty, "." or "..".
bool SplitPath(std::string_view path, std::vector<std::string>& segments) {
  segments.clear();
  if (path.empty() || path.front() == '/') return false;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos) end = path.size();
    std::string_view segment = path.substr(start, end - start);
    if (segment.empty() || segment == "." || segment == ".." ||
        segment.find('\0') != std::string_view::npos) {
      return false;
    }
    segments.emplace_back(segment);
    start = end + 1;
  }
  return true;
}

Error FileError(std::string_view path, std::string_view why) {
  return Failure(ErrorCode::kFailedPrecondition, "The project file \"" + std::string(path) +
                                                     "\" cannot be written: " + std::string(why) +
                                                     ".");
}

Status WriteAll(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    ssize_t written = write(fd, bytes.data(), bytes.size());
    if (written < 0) {
      if (errno == EINTR) continue;
      return SystemError("write", errno);
    }
    bytes.remove_prefix(static_cast<size_t>(written));
  }
  return Status::Ok();
}

Status WriteOne(int work_fd, const ProjectFile& file, const Owner& owner, bool replace) {
  std::vector<std::string> segments;
  if (!SplitPath(file.path, segments)) return FileError(file.path, "the path is not relative");
  // The directory the file goes in: work_fd itself, or the last one opened
  // on the way down (held by `walked`).
  int directory = work_fd;
  base::UniqueFd walked;
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    const char* name = segments[i].c_str();
    bool created = mkdirat(directory, name, 0755) == 0;
    if (!created && errno != EEXIST) return FileError(file.path, std::strerror(errno));
    base::UniqueFd next(openat(directory, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      int error = errno;
      return FileError(file.path, error == ELOOP || error == ENOTDIR
                                      ? "\"" + segments[i] + "\" is not a directory"
                                      : std::string(std::strerror(error)));
    }
    if (created && owner.change && fchown(next.get(), owner.uid, owner.gid) != 0) {
      return FileError(file.path, std::strerror(errno));
    }
    walked = std::move(next);
    directory = walked.get();
  }
  // Replacing unlinks what is there (a symlink itself, never its target);
  // a directory stays and the write fails below.
  if (replace && unlinkat(directory, segments.back().c_str(), 0) != 0 && errno != ENOENT &&
      errno != EISDIR && errno != EPERM) {
    return FileError(file.path, std::strerror(errno));
  }
  base::UniqueFd out(openat(directory, segments.back().c_str(),
                            O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644));
  if (!out.valid()) {
    int error = errno;
    return FileError(file.path, error == EEXIST ? std::string("it already exists")
                                                : std::string(std::strerror(error)));
  }
  if (owner.change && fchown(out.get(), owner.uid, owner.gid) != 0) {
    return FileError(file.path, std::strerror(errno));
  }
  auto written = WriteAll(out.get(), file.content);
  if (!written.ok()) return FileError(file.path, written.error().message());
  return Status::Ok();
}

// Opens `path` beneath `work_fd` for reading without following any symlink.
// Returns -1 with errno set (ELOOP for a symlink anywhere on the path).
int OpenBeneath(int work_fd, const std::string& path) {
  constexpr int kFlags = O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  static bool openat2_works = true;
  if (openat2_works) {
    open_how how{};
    how.flags = kFlags;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    long fd = syscall(SYS_openat2, work_fd, path.c_str(), &how, sizeof how);
    if (fd >= 0) return static_cast<int>(fd);
    // ENOSYS: an old kernel; EPERM: a seccomp policy that refuses openat2.
    if (errno != ENOSYS && errno != EPERM) return -1;
    openat2_works = false;
  }
  std::vector<std::string> segments;
  if (!SplitPath(path, segments)) {
    errno = EINVAL;
    return -1;
  }
  base::UniqueFd directory(fcntl(work_fd, F_DUPFD_CLOEXEC, 0));
  if (!directory.valid()) return -1;
  for (size_t i = 0; i + 1 < segments.size(); ++i) {
    base::UniqueFd next(openat(directory.get(), segments[i].c_str(),
                               O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) return -1;
    directory = std::move(next);
  }
  return openat(directory.get(), segments.back().c_str(), kFlags);
}

}  // namespace

Expected<base::UniqueFd> OpenWorkDirectory(const std::string& path, const Owner& owner) {
  base::UniqueFd fd(open(path.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return SystemError("open the work directory " + path, errno);
  if (owner.change && fchown(fd.get(), owner.uid, owner.gid) != 0) {
    return SystemError("hand the work directory to the guest user", errno);
  }
  return fd;
}

Status WriteFiles(int work_fd, const std::vector<ProjectFile>& files, const Owner& owner,
                  bool replace) {
  for (const auto& file : files) PLIMSOLL_RETURN_IF_ERROR(WriteOne(work_fd, file, owner, replace));
  return Status::Ok();
}

Collected CollectArtifacts(int work_fd, const std::vector<std::string>& paths, int64_t budget) {
  Collected collected;
  int64_t left = budget < 0 ? 0 : budget;
  for (const auto& path : paths) {
    auto missing = [&](std::string_view why) {
      collected.notes +=
          "The artifact \"" + path + "\" was not brought back: " + std::string(why) + ".\n";
    };
    base::UniqueFd fd(OpenBeneath(work_fd, path));
    if (!fd.valid()) {
      int error = errno;
      missing(error == ENOENT  ? "it does not exist"
              : error == ELOOP ? "it is or passes through a symbolic link"
              : error == EXDEV ? "it leads outside the work directory"
                               : std::strerror(error));
      continue;
    }
    struct stat info {};
    if (fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode)) {
      missing("it is not a regular file");
      continue;
    }
    Artifact artifact;
    artifact.path = path;
    char buffer[65536];
    for (;;) {
      ssize_t got = read(fd.get(), buffer, sizeof buffer);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      auto take = std::min<int64_t>(got, left);
      artifact.content.append(buffer, static_cast<size_t>(take));
      left -= take;
      if (take < got) {
        artifact.truncated = true;
        break;
      }
    }
    collected.artifacts.push_back(std::move(artifact));
  }
  return collected;
}

}  // namespace plimsoll::guest::agent
