#include "guest/agent/reaper.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/unique_fd.h"

namespace plimsoll::guest::agent {
namespace {

struct ProcessEntry {
  pid_t pid = 0;
  pid_t parent = -1;
  char state = '?';
};

// The state and parent pid in /proc/<pid>/stat ("pid (comm) state ppid
// ..."); comm may contain spaces and parentheses, so parse after the last
// ')'. False when the entry is gone or unreadable.
bool ReadEntry(int proc_fd, const char* pid_name, ProcessEntry* entry) {
  std::string path = std::string(pid_name) + "/stat";
  base::UniqueFd fd(openat(proc_fd, path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return false;
  char buffer[512];
  ssize_t got = read(fd.get(), buffer, sizeof buffer - 1);
  if (got <= 0) return false;
  buffer[got] = '\0';
  char* close_paren = std::strrchr(buffer, ')');
  if (close_paren == nullptr || close_paren[1] == '\0' || close_paren[2] == '\0') return false;
  // ") S 123 ..."
  entry->state = close_paren[2];
  char* cursor = close_paren + 2;
  while (*cursor != '\0' && *cursor != ' ') ++cursor;  // skip the state
  entry->parent = static_cast<pid_t>(std::strtol(cursor, nullptr, 10));
  entry->pid = static_cast<pid_t>(std::strtol(pid_name, nullptr, 10));
  return true;
}

// Every process /proc shows (empty when it is unreadable).
std::vector<ProcessEntry> Processes() {
  std::vector<ProcessEntry> found;
  base::UniqueFd proc(open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (!proc.valid()) return found;
  DIR* directory = fdopendir(dup(proc.get()));
  if (directory == nullptr) return found;
  while (dirent* entry = readdir(directory)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    ProcessEntry process;
    if (ReadEntry(proc.get(), entry->d_name, &process)) found.push_back(process);
  }
  closedir(directory);
  return found;
}

// The pids whose parent is this process; empty when /proc is unreadable.
std::vector<pid_t> Children() {
  std::vector<pid_t> children;
  pid_t self = getpid();
  for (const ProcessEntry& process : Processes()) {
    if (process.parent == self) children.push_back(process.pid);
  }
  return children;
}

bool IsSpared(pid_t pid, const std::vector<pid_t>& spared) {
  return std::find(spared.begin(), spared.end(), pid) != spared.end();
}

// Kills what the sweep may kill; returns how many it signalled.
int KillRound(SweepScope scope, const std::vector<pid_t>& spared) {
  int signalled = 0;
  if (scope == SweepScope::kWholeNamespace && spared.empty()) {
    return kill(-1, SIGKILL) == 0 ? 1 : 0;
  }
  pid_t self = getpid();
  if (scope == SweepScope::kWholeNamespace) {
    for (const ProcessEntry& process : Processes()) {
      if (process.pid == self || process.pid == 1 || IsSpared(process.pid, spared)) continue;
      // Another process's zombie is its parent's to reap (and ours later,
      // re-parented, once that parent dies); only the living count.
      if (process.state == 'Z' || process.state == 'X') continue;
      if (kill(process.pid, SIGKILL) == 0) ++signalled;
    }
    return signalled;
  }
  for (pid_t child : Children()) {
    if (IsSpared(child, spared)) continue;
    if (kill(child, SIGKILL) == 0) ++signalled;
  }
  return signalled;
}

void SleepBriefly() {
  timespec pause{0, 1'000'000};  // 1 ms: long enough for a killed parent to be re-parented
  nanosleep(&pause, nullptr);
}

}  // namespace

void BecomeSubreaper() {
  prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

bool ReapAvailable(pid_t watched, int* status, bool* exited) {
  for (;;) {
    int wait_status = 0;
    pid_t pid = waitpid(-1, &wait_status, WNOHANG | __WALL);
    if (pid > 0) {
      if (pid == watched && status != nullptr && exited != nullptr) {
        *status = wait_status;
        *exited = true;
      }
      continue;
    }
    if (pid == 0) return true;
    if (errno == EINTR) continue;
    return false;  // ECHILD: no children at all
  }
}

bool KillAndReapAll(pid_t group, SweepScope scope, std::chrono::steady_clock::time_point give_up,
                    const std::vector<pid_t>& spared) {
  using Clock = std::chrono::steady_clock;
  // A SIGKILLed process is gone within milliseconds unless it is stuck in
  // the kernel; when nothing could be signalled or reaped for this long, the
  // rest cannot be found (or will not die soon) and waiting is pointless.
  constexpr auto kStall = std::chrono::milliseconds(100);
  auto last_progress = Clock::now();
  for (;;) {
    bool progress = false;
    if (group > 0 && kill(-group, SIGKILL) == 0) progress = true;
    if (KillRound(scope, spared) > 0) progress = true;
    int reaped = 0;
    for (;;) {
      int wait_status = 0;
      pid_t pid = waitpid(-1, &wait_status, WNOHANG | __WALL);
      if (pid > 0) {
        ++reaped;
        continue;
      }
      if (pid == 0) break;
      if (errno == EINTR) continue;
      return true;  // ECHILD: no child left
    }
    // The spared ones stay children for good: done once nothing but them
    // is left to signal or reap.
    if (!spared.empty() && !progress && reaped == 0) return true;
    auto now = Clock::now();
    if (progress || reaped > 0) last_progress = now;
    if (now >= give_up || now - last_progress >= kStall) return false;
    SleepBriefly();
  }
}

char ProcessState(pid_t pid) {
  base::UniqueFd proc(open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  ProcessEntry entry;
  if (!proc.valid() || !ReadEntry(proc.get(), std::to_string(pid).c_str(), &entry)) return '?';
  return entry.state;
}

std::chrono::steady_clock::time_point SweepUntil(std::chrono::steady_clock::time_point wrap_up) {
  return std::min(std::chrono::steady_clock::now() + std::chrono::seconds(2), wrap_up);
}

}  // namespace plimsoll::guest::agent
