#include "trial/controller_process.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

#include "trial/child_start.h"
#include "trial/line_protocol.h"

namespace plimsoll::trial {

namespace {

Error StartFailure(const std::string& message) {
  return Failure(ErrorCode::kFailedPrecondition, message);
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

}  // namespace

Expected<std::unique_ptr<ControllerProcess>> ControllerProcess::Start(
    const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty()) return StartFailure("No controller command was given.");
  int to_child[2], from_child[2];
  if (pipe2(to_child, O_CLOEXEC) != 0) return StartFailure("pipe2 failed.");
  base::UniqueFd child_stdin(to_child[0]), input(to_child[1]);
  if (pipe2(from_child, O_CLOEXEC) != 0) return StartFailure("pipe2 failed.");
  base::UniqueFd output(from_child[0]), child_stdout(from_child[1]);

  Expected<pid_t> pid = StartChild(argv, child_stdin.get(), child_stdout.get());
  if (!pid.ok()) return StartFailure("The controller " + pid.error().message());
  std::unique_ptr<ControllerProcess> controller(
      new ControllerProcess(*pid, std::move(input), std::move(output)));
  child_stdin.Reset();
  child_stdout.Reset();
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

}  // namespace plimsoll::trial
