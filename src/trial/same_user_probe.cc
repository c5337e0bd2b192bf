#include "trial/same_user_probe.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "base/unique_fd.h"

namespace plimsoll::trial {

namespace {

constexpr size_t kCanaryBytes = 64;

// The attempts, in the order a child makes and reports them (one byte
// each: 'L' it read something, 'D' it was denied).
constexpr std::array<const char*, 5> kAttempts = {
    "/proc/PID/mem", "process_vm_readv", "/proc/PID/environ", "/proc/PID/fd/N", "readlink fd"};

Error ProbeError(const char* what) {
  return Failure(ErrorCode::kInternal, std::string("The same-user probe could not run (") + what +
                                           "): " + std::strerror(errno) + ".");
}

bool ReadsBack(int fd, const unsigned char* canary, off_t offset, bool positional) {
  unsigned char seen[kCanaryBytes];
  const ssize_t got =
      positional ? pread(fd, seen, sizeof seen, offset) : read(fd, seen, sizeof seen);
  return got == static_cast<ssize_t>(sizeof seen) && std::memcmp(seen, canary, sizeof seen) == 0;
}

// One attempt, in the child: async-signal-safe calls only. True if it read
// something of the target.
bool Attempt(size_t which, pid_t target, const unsigned char* canary, const char* mem_path,
             const char* environ_path, const char* fd_path) {
  switch (which) {
    case 0: {
      const int fd = open(mem_path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) return false;
      const bool read =
          ReadsBack(fd, canary, static_cast<off_t>(reinterpret_cast<uintptr_t>(canary)), true);
      close(fd);
      return read;
    }
    case 1: {
      unsigned char seen[kCanaryBytes];
      struct iovec local = {seen, sizeof seen};
      struct iovec remote = {const_cast<unsigned char*>(canary), kCanaryBytes};
      return process_vm_readv(target, &local, 1, &remote, 1, 0) ==
                 static_cast<ssize_t>(sizeof seen) &&
             std::memcmp(seen, canary, sizeof seen) == 0;
    }
    case 2: {
      const int fd = open(environ_path, O_RDONLY | O_CLOEXEC);
      if (fd < 0) return false;
      close(fd);
      return true;
    }
    case 3: {
      const int fd = open(fd_path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
      if (fd < 0) return false;
      const bool read = ReadsBack(fd, canary, 0, false);
      close(fd);
      return read;
    }
    default: {
      char link[64];
      return readlink(fd_path, link, sizeof link) > 0;
    }
  }
}

}  // namespace

Expected<std::vector<std::string>> ProbeFromSameUser() {
  // The memory canary: random bytes, so a match is a read, not a coincidence.
  unsigned char canary[kCanaryBytes];
  if (getrandom(canary, sizeof canary, 0) != static_cast<ssize_t>(sizeof canary)) {
    for (size_t i = 0; i < sizeof canary; ++i)
      canary[i] = static_cast<unsigned char>(0xa5 ^ (i * 37));
  }
  // The descriptor canary: a pipe holding the same bytes.
  int held[2];
  if (pipe2(held, O_CLOEXEC | O_NONBLOCK) != 0) return ProbeError("pipe2");
  base::UniqueFd held_read(held[0]);
  base::UniqueFd held_write(held[1]);
  if (write(held_write.get(), canary, sizeof canary) != static_cast<ssize_t>(sizeof canary)) {
    return ProbeError("write");
  }
  const pid_t self = getpid();
  char mem_path[64], environ_path[64], fd_path[64];
  std::snprintf(mem_path, sizeof mem_path, "/proc/%d/mem", self);
  std::snprintf(environ_path, sizeof environ_path, "/proc/%d/environ", self);
  std::snprintf(fd_path, sizeof fd_path, "/proc/%d/fd/%d", self, held_read.get());

  // Each child makes the attempts from `next` on and reports each verdict
  // as it goes. One killed mid-attempt (a seccomp policy that kills on
  // process_vm_readv, say) made no read: that attempt counts as denied and
  // a new child goes on with the next.
  std::vector<std::string> leaks;
  size_t next = 0;
  while (next < kAttempts.size()) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return ProbeError("pipe2");
    base::UniqueFd report_read(report[0]);
    base::UniqueFd report_write(report[1]);
    const pid_t child = fork();
    if (child < 0) return ProbeError("fork");
    if (child == 0) {
      for (size_t which = next; which < kAttempts.size(); ++which) {
        const char verdict =
            Attempt(which, self, canary, mem_path, environ_path, fd_path) ? 'L' : 'D';
        if (write(report_write.get(), &verdict, 1) != 1) _exit(1);
      }
      _exit(0);
    }
    report_write.Reset();
    char verdict;
    for (;;) {
      const ssize_t got = read(report_read.get(), &verdict, 1);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) break;
      if (verdict == 'L') leaks.emplace_back(kAttempts[next]);
      ++next;
    }
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (next < kAttempts.size()) ++next;  // the child ended inside this attempt
  }
  return leaks;
}

}  // namespace plimsoll::trial
