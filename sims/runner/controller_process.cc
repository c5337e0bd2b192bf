#include "runner/controller_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "runner/line_protocol.h"

extern char** environ;

namespace plimsoll::sims {

namespace {

Error StartFailure(const std::string& message) {
  return Failure(ErrorCode::kFailedPrecondition, message);
}

// argv[0] as execve needs it: as given when it holds a '/', else the first
// executable file of that name on PATH (searched here, before fork).
std::string ResolveProgram(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string_view directories = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const size_t colon = directories.find(':');
    std::string directory(directories.substr(0, colon));
    if (directory.empty()) directory = ".";
    const std::string candidate = directory + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    if (colon == std::string_view::npos) return program;  // execve reports ENOENT
    directories.remove_prefix(colon + 1);
  }
}

// Milliseconds left until `deadline`, for poll (0 when past; rounded up).
int MillisecondsLeft(Deadline deadline) {
  const auto left = deadline - std::chrono::steady_clock::now();
  if (left <= std::chrono::steady_clock::duration::zero()) return 0;
  const auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<decltype(ms)>(ms, INT_MAX));
}

// Waits for `events` on fd until the deadline: true when ready (or an error
// or hangup is pending, which the next read or write reports).
bool PollUntil(int fd, short events, Deadline deadline) {
  for (;;) {
    struct pollfd entry = {fd, events, 0};
    const int ready = poll(&entry, 1, MillisecondsLeft(deadline));
    if (ready > 0) return true;
    if (ready == 0) return false;
    if (errno != EINTR) return true;  // let the I/O call report it
  }
}

// Blocks SIGPIPE on this thread for its lifetime and swallows one that a
// write raised, so an EPIPE is seen as an error code only.
class ScopedSigpipeBlock {
 public:
  ScopedSigpipeBlock() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    sigset_t pending;
    sigpending(&pending);
    was_pending_ = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~ScopedSigpipeBlock() {
    if (raised_ && !was_pending_) {
      const struct timespec zero = {0, 0};
      while (sigtimedwait(&pipe_, nullptr, &zero) < 0 && errno == EINTR) {
      }
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  ScopedSigpipeBlock(const ScopedSigpipeBlock&) = delete;
  ScopedSigpipeBlock& operator=(const ScopedSigpipeBlock&) = delete;
  void NoteRaised() { raised_ = true; }

 private:
  sigset_t pipe_;
  sigset_t previous_;
  bool was_pending_ = false;
  bool raised_ = false;
};

constexpr unsigned kCloseRangeCloexec = 1u << 2;  // CLOSE_RANGE_CLOEXEC (Linux 5.11)

// In the forked child: only async-signal-safe calls, then execve. On
// failure, writes errno to `report` and exits 127.
[[noreturn]] void BecomeController(const char* program, char* const* argv, int stdin_fd,
                                   int stdout_fd, int report, pid_t parent) {
  int step_errno = 0;
  sigset_t none;
  sigemptyset(&none);
  struct sigaction defaults = {};
  defaults.sa_handler = SIG_DFL;
  for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
    sigaction(signal_number, &defaults, nullptr);  // fails harmlessly for KILL/STOP
  }
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0 || getppid() != parent) goto failed;
  if (setpgid(0, 0) != 0) goto failed;
  if (dup2(stdin_fd, STDIN_FILENO) < 0 || dup2(stdout_fd, STDOUT_FILENO) < 0) goto failed;
  // Every other descriptor closes at exec (the report pipe too: its
  // closing tells the parent that exec succeeded).
  if (syscall(SYS_close_range, 3u, ~0u, kCloseRangeCloexec) != 0) goto failed;
  pthread_sigmask(SIG_SETMASK, &none, nullptr);
  execve(program, argv, environ);
failed:
  step_errno = errno;
  (void)!write(report, &step_errno, sizeof step_errno);
  _exit(127);
}

}  // namespace

Expected<std::unique_ptr<ControllerProcess>> ControllerProcess::Start(
    const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty()) return StartFailure("No controller command was given.");
  const std::string program = ResolveProgram(argv[0]);
  std::vector<char*> arguments;
  for (const std::string& argument : argv) arguments.push_back(const_cast<char*>(argument.c_str()));
  arguments.push_back(nullptr);

  int to_child[2], from_child[2], report[2];
  if (pipe2(to_child, O_CLOEXEC) != 0) return StartFailure("pipe2 failed.");
  base::UniqueFd child_stdin(to_child[0]), input(to_child[1]);
  if (pipe2(from_child, O_CLOEXEC) != 0) return StartFailure("pipe2 failed.");
  base::UniqueFd output(from_child[0]), child_stdout(from_child[1]);
  if (pipe2(report, O_CLOEXEC) != 0) return StartFailure("pipe2 failed.");
  base::UniqueFd report_read(report[0]), report_write(report[1]);
  // dup2 onto 0 and 1 needs sources above 2 (a runner started with a closed
  // stdin could be handed 0 or 1 here): move them up first.
  for (base::UniqueFd* fd : {&child_stdin, &child_stdout, &report_write}) {
    if (fd->get() <= STDERR_FILENO) {
      fd->Reset(fcntl(fd->get(), F_DUPFD_CLOEXEC, 3));
      if (!fd->valid()) return StartFailure("fcntl F_DUPFD_CLOEXEC failed.");
    }
  }

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return StartFailure(std::string("fork failed: ") + std::strerror(errno) + ".");
  if (pid == 0) {
    BecomeController(program.c_str(), arguments.data(), child_stdin.get(), child_stdout.get(),
                     report_write.get(), parent);
  }
  std::unique_ptr<ControllerProcess> controller(
      new ControllerProcess(pid, std::move(input), std::move(output)));
  child_stdin.Reset();
  child_stdout.Reset();
  report_write.Reset();

  int child_errno = 0;
  ssize_t got;
  do {
    got = read(report_read.get(), &child_errno, sizeof child_errno);
  } while (got < 0 && errno == EINTR);
  if (got == sizeof child_errno) {
    controller->KillAndReap();
    return StartFailure("The controller " + argv[0] +
                        " could not be started: " + std::strerror(child_errno) + ".");
  }
  for (int fd : {controller->input_.get(), controller->output_.get()}) {
    const int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
      return StartFailure("The controller's pipes cannot be made non-blocking.");
    }
  }
  return controller;
}

ControllerProcess::~ControllerProcess() {
  KillAndReap();
}

IoOutcome ControllerProcess::WriteAll(std::string_view bytes, Deadline deadline) {
  if (!input_.valid()) return IoOutcome::kClosed;
  ScopedSigpipeBlock block;
  while (!bytes.empty()) {
    const ssize_t written = write(input_.get(), bytes.data(), bytes.size());
    if (written > 0) {
      bytes.remove_prefix(static_cast<size_t>(written));
      continue;
    }
    if (written < 0 && errno == EINTR) continue;
    if (written < 0 && errno == EAGAIN) {
      if (!PollUntil(input_.get(), POLLOUT, deadline)) return IoOutcome::kTimedOut;
      continue;
    }
    if (written < 0 && errno == EPIPE) block.NoteRaised();
    return IoOutcome::kClosed;
  }
  return IoOutcome::kDone;
}

IoOutcome ControllerProcess::ReadLine(std::string* line, size_t cap, Deadline deadline) {
  if (!output_.valid()) return IoOutcome::kClosed;
  char chunk[4096];
  for (;;) {
    const size_t newline = pending_.find('\n');
    if (newline != std::string::npos && newline < cap) {
      line->assign(pending_, 0, newline);
      pending_.erase(0, newline + 1);
      return IoOutcome::kDone;
    }
    if (pending_.size() >= cap) return IoOutcome::kTooLong;
    const ssize_t got = read(output_.get(), chunk, sizeof chunk);
    if (got > 0) {
      pending_.append(chunk, static_cast<size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && errno == EAGAIN) {
      if (!PollUntil(output_.get(), POLLIN, deadline)) return IoOutcome::kTimedOut;
      continue;
    }
    return IoOutcome::kClosed;  // EOF (a partial last line is not an answer) or an error
  }
}

void ControllerProcess::KillAndReap() {
  input_.Reset();
  output_.Reset();
  if (pid_ <= 0) return;
  kill(-pid_, SIGKILL);  // its group: what it forked goes too
  kill(pid_, SIGKILL);   // in case it had not yet made its group
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
  pid_ = -1;
}

Exchange ControllerProcess::Converse(std::span<const double> state, Deadline deadline,
                                     std::string* answer_line) {
  switch (WriteAll(FormatStateLine(state), deadline)) {
    case IoOutcome::kDone:
      break;
    case IoOutcome::kTimedOut:
      return Exchange::kLateReading;
    default:
      return Exchange::kClosedInput;
  }
  switch (ReadLine(answer_line, kAnswerLineCap, deadline)) {
    case IoOutcome::kDone:
      return Exchange::kAnswered;
    case IoOutcome::kTimedOut:
      return Exchange::kLate;
    case IoOutcome::kTooLong:
      return Exchange::kTooLong;
    case IoOutcome::kClosed:
      break;
  }
  return Exchange::kClosedOutput;
}

}  // namespace plimsoll::sims
