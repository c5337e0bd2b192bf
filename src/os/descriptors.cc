#include "os/descriptors.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

namespace plimsoll::os {
namespace {

// The descriptor numbers from the name field of /proc/self/fd entries, at
// most `capacity` of them >= `lowest` (other than the directory's own);
// false when /proc/self/fd cannot be read.
bool ListOpen(int lowest, int* found, size_t capacity, size_t* count) {
  int directory = static_cast<int>(
      syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (directory < 0) return false;
  alignas(8) char buffer[4096];
  *count = 0;
  for (;;) {
    long got = syscall(SYS_getdents64, directory, buffer, sizeof buffer);
    if (got <= 0) break;
    for (long offset = 0; offset < got;) {
      // struct linux_dirent64: u64 ino, s64 off, u16 reclen, u8 type, name.
      uint16_t length;
      std::memcpy(&length, buffer + offset + 16, sizeof length);
      const char* name = buffer + offset + 19;
      int number = 0;
      bool digits = *name != '\0';
      for (const char* c = name; *c != '\0'; ++c) {
        if (*c < '0' || *c > '9') {
          digits = false;
          break;
        }
        number = number * 10 + (*c - '0');
      }
      if (digits && number >= lowest && number != directory && *count < capacity) {
        found[(*count)++] = number;
      }
      offset += length;
    }
  }
  syscall(SYS_close, directory);
  return true;
}

int HighestPossible() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur != RLIM_INFINITY) {
    return static_cast<int>(std::min<rlim_t>(files.rlim_cur, 1 << 20));
  }
  return 65536;
}

template <typename Action>
void ForEachOpen(int lowest, Action action) {
  int found[1024];
  size_t count = 0;
  if (ListOpen(lowest, found, std::size(found), &count) && count < std::size(found)) {
    for (size_t i = 0; i < count; ++i) action(found[i]);
    return;
  }
  for (int fd = lowest, top = HighestPossible(); fd < top; ++fd) action(fd);
}

// close_range's upper bound: every descriptor number there can be. Not ~0U:
// gVisor (2022-12) refuses it with EINVAL, which sent every call under runsc
// to the /proc walk above.
constexpr unsigned kHighestDescriptor = static_cast<unsigned>(INT_MAX);

}  // namespace

void MarkCloseOnExecFrom(int lowest) {
  if (syscall(SYS_close_range, static_cast<unsigned>(lowest), kHighestDescriptor,
              CLOSE_RANGE_CLOEXEC) == 0) {
    return;
  }
  ForEachOpen(lowest, [](int fd) { fcntl(fd, F_SETFD, FD_CLOEXEC); });
}

void CloseFrom(int lowest) {
  if (syscall(SYS_close_range, static_cast<unsigned>(lowest), kHighestDescriptor, 0U) == 0) return;
  ForEachOpen(lowest, [](int fd) { syscall(SYS_close, fd); });
}

}  // namespace plimsoll::os
