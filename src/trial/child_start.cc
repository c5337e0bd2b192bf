#include "trial/child_start.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "base/unique_fd.h"

extern char** environ;

namespace plimsoll::trial {

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

constexpr unsigned kCloseRangeCloexec = 1u << 2;  // CLOSE_RANGE_CLOEXEC (Linux 5.11)

// In the forked child: only async-signal-safe calls, then execve. On
// failure, writes errno to `report` and exits 127.
[[noreturn]] void BecomeChild(const char* program, char* const* argv, int stdin_fd, int stdout_fd,
                              int report, pid_t parent) {
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

Expected<pid_t> StartChild(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd) {
  if (argv.empty() || argv[0].empty()) return StartFailure("No command was given.");
  const std::string program = ResolveProgram(argv[0]);
  std::vector<char*> arguments;
  for (const std::string& argument : argv) arguments.push_back(const_cast<char*>(argument.c_str()));
  arguments.push_back(nullptr);

  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return StartFailure("pipe2 failed.");
  base::UniqueFd report_read(report[0]), report_write(report[1]);
  // dup2 onto 0 and 1 needs sources above 2 (a runner started with a closed
  // stdin could be handed 0 or 1; the caller may pass its own 2): copies
  // above 2 first, closed here once the child has its own.
  base::UniqueFd moved[2];
  int* const sources[2] = {&stdin_fd, &stdout_fd};
  for (int i = 0; i < 2; ++i) {
    if (*sources[i] <= STDERR_FILENO) {
      moved[i].Reset(fcntl(*sources[i], F_DUPFD_CLOEXEC, 3));
      if (!moved[i].valid()) return StartFailure("fcntl F_DUPFD_CLOEXEC failed.");
      *sources[i] = moved[i].get();
    }
  }
  if (report_write.get() <= STDERR_FILENO) {
    report_write.Reset(fcntl(report_write.get(), F_DUPFD_CLOEXEC, 3));
    if (!report_write.valid()) return StartFailure("fcntl F_DUPFD_CLOEXEC failed.");
  }

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) return StartFailure(std::string("fork failed: ") + std::strerror(errno) + ".");
  if (pid == 0) {
    BecomeChild(program.c_str(), arguments.data(), stdin_fd, stdout_fd, report_write.get(), parent);
  }
  report_write.Reset();

  int child_errno = 0;
  ssize_t got;
  do {
    got = read(report_read.get(), &child_errno, sizeof child_errno);
  } while (got < 0 && errno == EINTR);
  if (got == sizeof child_errno) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    return StartFailure(argv[0] + " could not be started: " + std::strerror(child_errno) + ".");
  }
  return pid;
}

}  // namespace plimsoll::trial
