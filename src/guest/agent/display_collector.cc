#include "guest/agent/display_collector.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "base/unique_fd.h"
#include "guest/displays.h"

namespace plimsoll::guest::agent {
namespace {

struct Split {
  std::string parent;
  std::string name;
};

Split SplitPath(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return {".", path};
  return {slash == 0 ? "/" : path.substr(0, slash), path.substr(slash + 1)};
}

// Up to `limit` names of the directory `fd` (not "." or ".."), unsorted;
// `more` is set when there were others.
// The names in directory `fd`, read from its start with getdents64 on the
// descriptor itself (three calls, where a dup and a DIR stream took nine:
// each is costly under gVisor's ptrace platform, and this is on every run's
// path).
std::vector<std::string> ListNames(int fd, size_t limit, bool* more) {
  std::vector<std::string> names;
  *more = false;
  if (lseek(fd, 0, SEEK_SET) != 0) return names;
  alignas(8) char buffer[8192];
  for (;;) {
    long got = syscall(SYS_getdents64, fd, buffer, sizeof buffer);
    if (got <= 0) return names;
    for (long offset = 0; offset < got;) {
      // struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name.
      uint16_t length = 0;
      std::memcpy(&length, buffer + offset + 16, sizeof length);
      std::string_view name(buffer + offset + 19);
      offset += length;
      if (name == "." || name == "..") continue;
      if (names.size() == limit) {
        *more = true;
        return names;
      }
      names.emplace_back(name);
    }
  }
}

void EmptyDirectory(int fd) {
  for (int round = 0; round < 16; ++round) {
    bool more = false;
    std::vector<std::string> names = ListNames(fd, kMaxDisplayEntries, &more);
    if (names.empty()) return;
    size_t removed = 0;
    for (const std::string& name : names) {
      if (unlinkat(fd, name.c_str(), 0) == 0 ||
          (errno == EISDIR && unlinkat(fd, name.c_str(), AT_REMOVEDIR) == 0)) {
        ++removed;
      }
    }
    if (removed == 0) return;
  }
}

base::UniqueFd OpenDirectoryNoFollow(int parent, const std::string& name) {
  return base::UniqueFd(
      openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
}

// Reads at most `limit` bytes of `fd`; `*more` when the file had others.
bool ReadUpTo(int fd, size_t limit, std::string* out, bool* more) {
  out->clear();
  *more = false;
  char buffer[65536];
  for (;;) {
    ssize_t got = read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) return false;
    if (got == 0) return true;
    size_t take = std::min(static_cast<size_t>(got), limit - out->size());
    out->append(buffer, take);
    if (take < static_cast<size_t>(got)) {
      *more = true;
      return true;
    }
  }
}

}  // namespace

Expected<base::UniqueFd> PrepareDisplaysDirectory(const std::string& path, const Owner& owner) {
  Split split = SplitPath(path);
  base::UniqueFd parent(open(split.parent.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!parent.valid()) return SystemError("open " + split.parent, errno);
  base::UniqueFd directory = OpenDirectoryNoFollow(parent.get(), split.name);
  if (directory.valid()) {
    EmptyDirectory(directory.get());
  } else {
    if (errno != ENOENT && unlinkat(parent.get(), split.name.c_str(), 0) != 0 && errno != ENOENT) {
      return SystemError("unlink what took the place of " + path, errno);
    }
    if (mkdirat(parent.get(), split.name.c_str(), 0700) != 0) {
      return SystemError("mkdir " + path, errno);
    }
    directory = OpenDirectoryNoFollow(parent.get(), split.name);
    if (!directory.valid()) return SystemError("open " + path, errno);
  }
  if (owner.change && fchown(directory.get(), owner.uid, owner.gid) != 0) {
    return SystemError("hand " + path + " to the guest user", errno);
  }
  if (fchmod(directory.get(), 0700) != 0) return SystemError("chmod " + path, errno);
  return directory;
}

CollectedDisplays CollectDisplays(int directory, const Owner& owner) {
  CollectedDisplays collected;
  bool more = false;
  std::vector<std::string> names = ListNames(directory, kMaxDisplayEntries, &more);
  if (more) {
    collected.notes += "The displays directory held more than " +
                       std::to_string(kMaxDisplayEntries) + " names; the rest were not read.\n";
  }
  std::sort(names.begin(), names.end());
  size_t left = kMaxDisplayBytes;
  auto skip = [&](const std::string& name, std::string_view why) {
    collected.notes += "The display \"" + name + "\" was left out: " + std::string(why) + ".\n";
  };
  for (const std::string& name : names) {
    if (name.front() == '.') continue;     // still being written
    if (name == kDisplaysTruncatedName) {  // the writer dropped some itself
      collected.truncated = true;
      continue;
    }
    if (collected.displays.size() == kMaxDisplays) {
      collected.truncated = true;
      break;
    }
    base::UniqueFd fd(
        openat(directory, name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
    struct stat info {};
    if (!fd.valid() || fstat(fd.get(), &info) != 0 || !S_ISREG(info.st_mode) ||
        info.st_nlink != 1 || (owner.change && info.st_uid != owner.uid)) {
      skip(name, "it is not a regular file of the guest's own");
      continue;
    }
    std::string content;
    bool cut = false;
    // The header line, then at most what the budget has left.
    if (!ReadUpTo(fd.get(), kMaxDisplayMimeBytes + 1 + left, &content, &cut)) {
      skip(name, std::strerror(errno));
      continue;
    }
    size_t newline = content.find('\n');
    if (newline == std::string::npos || !IsDisplayMime(content.substr(0, newline))) {
      skip(name, "it does not start with a MIME type line");
      continue;
    }
    if (cut || content.size() - newline - 1 > left) {
      // Over what is left of the budget: it and every later one are dropped.
      collected.truncated = true;
      break;
    }
    Display display;
    display.mime = content.substr(0, newline);
    display.data = content.substr(newline + 1);
    left -= display.data.size();
    collected.displays.push_back(std::move(display));
  }
  // Every step is gone by now (a session's interpreters are stopped), so
  // an empty listing needs no emptying.
  if (!names.empty() || more) EmptyDirectory(directory);
  return collected;
}

}  // namespace plimsoll::guest::agent
