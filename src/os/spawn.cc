#include "os/spawn.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstring>
#include <utility>

#include "base/unique_fd.h"
#include "os/descriptors.h"

namespace plimsoll::os {
namespace {

using base::UniqueFd;
using Clock = std::chrono::steady_clock;

// Where the sources are parked in the child before they are moved to their
// numbers, so a source that already sits on a target number is not lost.
constexpr int kParkedBase = 10;

int PollMilliseconds(Deadline deadline) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, INT_MAX));
}

// The kernel's struct sigaction (rt_sigaction(2)); all zero is SIG_DFL.
struct KernelSigaction {
  void (*handler)(int) = SIG_DFL;
  unsigned long flags = 0;
  void (*restorer)() = nullptr;
  uint64_t mask = 0;
};

// Steps the vfork child reports on the error pipe: {step, errno}.
enum ChildStep : int { kStepMount = 1, kStepDescriptors, kStepExec, kStepDeathSignal };

[[noreturn]] void ChildFail(int error_fd, int step) {
  int record[2] = {step, errno};
  (void)!write(error_fd, record, sizeof record);
  _exit(127);
}

}  // namespace

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::exchange(other.pidfd_, -1)),
      status_(other.status_) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
  if (this != &other) {
    Close();
    pid_ = std::exchange(other.pid_, -1);
    pidfd_ = std::exchange(other.pidfd_, -1);
    status_ = other.status_;
  }
  return *this;
}

ChildProcess::~ChildProcess() {
  Close();
}

void ChildProcess::Close() {
  if (pid_ > 0 && !status_) KillAndReap();
  if (pidfd_ >= 0) close(pidfd_);
  pidfd_ = -1;
  pid_ = -1;
}

bool ChildProcess::Exited() const {
  if (status_) return true;
  if (pidfd_ < 0) return true;
  pollfd entry{pidfd_, POLLIN, 0};
  return poll(&entry, 1, 0) > 0;
}

std::optional<int> ChildProcess::Wait(Deadline deadline) {
  if (status_) return status_;
  if (pid_ <= 0) return std::nullopt;
  for (;;) {
    int status = 0;
    pid_t reaped = waitpid(pid_, &status, WNOHANG);
    if (reaped == pid_) {
      status_ = status;
      return status_;
    }
    if (reaped < 0 && errno != EINTR) {
      status_ = W_EXITCODE(127, 0);  // not ours to reap any more: treat as gone
      return status_;
    }
    if (Clock::now() >= deadline) return std::nullopt;
    pollfd entry{pidfd_, POLLIN, 0};
    int ready = poll(&entry, 1, PollMilliseconds(deadline));
    if (ready < 0 && errno != EINTR) return std::nullopt;
  }
}

void ChildProcess::KillAndReap() {
  if (pid_ <= 0 || status_) return;
  if (pidfd_ >= 0) {
    syscall(SYS_pidfd_send_signal, pidfd_, SIGKILL, nullptr, 0);
  } else {
    kill(pid_, SIGKILL);
  }
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
}

Expected<ChildProcess> Spawn(const SpawnOptions& options) {
  if (options.argv.empty() || options.argv[0].empty() || options.argv[0][0] != '/') {
    return Failure(ErrorCode::kInvalidArgument, "The runtime's path must be absolute.");
  }
  if (options.channel >= 0 && options.channel_target != 0 && options.channel_target < 3) {
    return Failure(ErrorCode::kInvalidArgument, "The channel must land on descriptor 0 or >= 3.");
  }
  // Everything the child touches is made before vfork.
  std::vector<char*> argv;
  for (const std::string& argument : options.argv)
    argv.push_back(const_cast<char*>(argument.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> environment;
  for (const std::string& entry : options.environment) {
    environment.push_back(const_cast<char*>(entry.c_str()));
  }
  environment.push_back(nullptr);
  UniqueFd devnull(open("/dev/null", O_RDWR | O_CLOEXEC));
  if (!devnull.valid()) return SystemError("open /dev/null", errno);
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) return SystemError("pipe2", errno);
  UniqueFd error_read(error_pipe[0]), error_write(error_pipe[1]);
  // Parked copies: in the child they sit above every target number.
  const int stdin_source = devnull.get();
  const int output_source = options.output >= 0 ? options.output : devnull.get();
  UniqueFd parked_stdin(fcntl(stdin_source, F_DUPFD_CLOEXEC, kParkedBase));
  UniqueFd parked_output(fcntl(output_source, F_DUPFD_CLOEXEC, kParkedBase));
  UniqueFd parked_channel;
  if (options.channel >= 0)
    parked_channel.Reset(fcntl(options.channel, F_DUPFD_CLOEXEC, kParkedBase));
  if (!parked_stdin.valid() || !parked_output.valid() ||
      (options.channel >= 0 && !parked_channel.valid())) {
    return SystemError("F_DUPFD_CLOEXEC", errno);
  }
  // volatile: vfork returns twice in this frame, and g++ -O2 warns
  // (-Wclobbered) about locals it may keep in registers across it; neither
  // changes after the vfork.
  const volatile int highest_target =
      options.channel >= 0 ? std::max(options.channel_target, 2) : 2;
  const char* const volatile hide =
      options.hide_mount.empty() ? nullptr : options.hide_mount.c_str();
  const int error_fd = error_write.get();
  const pid_t parent = getpid();

  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pid_t pid = vfork();
  if (pid == 0) {
    // The child: system calls only, on memory prepared above.
    // The raw call: glibc's sigaction refuses its own signals 32 and 33,
    // and an ignored one would survive execve.
    for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
      if (signal_number == SIGKILL || signal_number == SIGSTOP) continue;
      KernelSigaction action{};
      syscall(SYS_rt_sigaction, signal_number, &action, nullptr, sizeof action.mask);
    }
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    // The child ends with the provider: a crashed daemon leaves no runtime
    // or jailer running (the jailer sets it again after its uid change,
    // which clears it). Checked after setting it: a parent that died just
    // before would never deliver it.
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) ChildFail(error_fd, kStepDeathSignal);
    if (getppid() != parent) _exit(127);
    if (hide != nullptr) {
      if (unshare(CLONE_NEWNS) != 0) ChildFail(error_fd, kStepMount);
      if (mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
        ChildFail(error_fd, kStepMount);
      }
      if (umount2(hide, MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
        ChildFail(error_fd, kStepMount);
      }
    }
    if (dup2(parked_output.get(), 1) < 0 || dup2(parked_output.get(), 2) < 0) {
      ChildFail(error_fd, kStepDescriptors);
    }
    if (options.channel >= 0 && options.channel_target == 0) {
      if (dup2(parked_channel.get(), 0) < 0) ChildFail(error_fd, kStepDescriptors);
    } else {
      if (dup2(parked_stdin.get(), 0) < 0) ChildFail(error_fd, kStepDescriptors);
      if (options.channel >= 0 && dup2(parked_channel.get(), options.channel_target) < 0) {
        ChildFail(error_fd, kStepDescriptors);
      }
    }
    // Every other descriptor is closed at execve (the error pipe too, which
    // tells the parent the exec happened).
    os::MarkCloseOnExecFrom(highest_target + 1);
    execve(argv[0], argv.data(), environment.data());
    ChildFail(error_fd, kStepExec);
  }
  int vfork_errno = errno;
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (pid < 0) return SystemError("vfork", vfork_errno);
  error_write.Reset();
  int record[2] = {0, 0};
  ssize_t got;
  do {
    got = read(error_read.get(), record, sizeof record);
  } while (got < 0 && errno == EINTR);
  if (got == sizeof record) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    const char* step = record[0] == kStepMount         ? "hiding the cgroup2 mount"
                       : record[0] == kStepDescriptors ? "setting up descriptors"
                       : record[0] == kStepDeathSignal ? "prctl(PR_SET_PDEATHSIG)"
                                                       : "execve";
    return Failure(ErrorCode::kFailedPrecondition, "Starting " + options.argv[0] + " failed at " +
                                                       step + ": " + std::strerror(record[1]));
  }
  int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
  return ChildProcess(pid, pidfd);  // pidfd -1 is tolerated: Wait polls waitpid
}

void DrainAvailable(int fd, std::string* into, size_t cap) {
  char buffer[4096];
  for (;;) {
    ssize_t got = read(fd, buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return;
    size_t room = into->size() < cap ? cap - into->size() : 0;
    into->append(buffer, std::min(room, static_cast<size_t>(got)));
  }
}

Expected<CommandOutput> RunCommand(SpawnOptions options, Deadline deadline, size_t output_cap) {
  int output_pipe[2];
  if (pipe2(output_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return SystemError("pipe2", errno);
  UniqueFd output_read(output_pipe[0]), output_write(output_pipe[1]);
  options.output = output_write.get();
  auto child = Spawn(options);
  if (!child.ok()) return child.error();
  output_write.Reset();
  CommandOutput result;
  bool open = true;
  while (open) {
    pollfd entry{output_read.get(), POLLIN, 0};
    int ready = poll(&entry, 1, PollMilliseconds(deadline));
    if (ready < 0 && errno == EINTR) continue;
    if (ready == 0) break;  // deadline
    char buffer[4096];
    ssize_t got = read(output_read.get(), buffer, sizeof buffer);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) {
      open = false;
      break;
    }
    size_t room = result.output.size() < output_cap ? output_cap - result.output.size() : 0;
    result.output.append(buffer, std::min(room, static_cast<size_t>(got)));
  }
  auto status = child->Wait(open ? Clock::now() : deadline);
  if (!status) {
    child->KillAndReap();
    return Failure(ErrorCode::kDeadlineExceeded,
                   options.argv[0] + " did not finish in time" +
                       (result.output.empty() ? "" : ": " + result.output.substr(0, 500)));
  }
  result.status = *status;
  return result;
}

Expected<AgentDescriptors> MakeAgentDescriptors() {
  AgentDescriptors made;
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return Refusal(NotDispatched::kEnvironment,
                   std::string("socketpair for the agent channel: ") + std::strerror(errno));
  }
  made.channel.Reset(pair[0]);
  made.child_channel.Reset(pair[1]);
  int output[2];
  if (pipe2(output, O_CLOEXEC) != 0) {
    return Refusal(NotDispatched::kEnvironment, std::string("pipe2: ") + std::strerror(errno));
  }
  made.output.Reset(output[0]);
  made.child_output.Reset(output[1]);
  if (fcntl(made.output.get(), F_SETFL, O_NONBLOCK) != 0) {
    return Refusal(NotDispatched::kEnvironment,
                   std::string("fcntl O_NONBLOCK: ") + std::strerror(errno));
  }
  return made;
}

}  // namespace plimsoll::os
