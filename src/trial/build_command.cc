#include "trial/build_command.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "base/unique_fd.h"
#include "trial/child_start.h"

namespace plimsoll::trial {

namespace {

// Every RunBuildCommand error starts so, and nothing else RunTrial answers
// does (IsBuildFailure); one constant for both sides.
constexpr std::string_view kPrefix = "The build command ";

Error BuildFailure(const std::string& rest) {
  return Failure(ErrorCode::kFailedPrecondition, std::string(kPrefix) + rest);
}

}  // namespace

Status RunBuildCommand(const std::vector<std::string>& argv) {
  if (argv.empty() || argv[0].empty()) return BuildFailure("is empty.");
  base::UniqueFd nothing(open("/dev/null", O_RDONLY | O_CLOEXEC));
  if (!nothing.valid()) {
    return BuildFailure(argv[0] + " could not be given /dev/null: " + std::strerror(errno) + ".");
  }
  Expected<pid_t> pid = StartChild(argv, nothing.get(), STDERR_FILENO);
  if (!pid.ok()) return BuildFailure(pid.error().message());

  // Waited for without reaping: while it is a zombie its pid, and so its
  // process group's id, cannot be reused, so the kill below reaches only
  // what it left behind in its group.
  siginfo_t info = {};
  while (waitid(P_PID, static_cast<id_t>(*pid), &info, WEXITED | WNOWAIT) != 0) {
    if (errno != EINTR) {
      const int error = errno;
      kill(-*pid, SIGKILL);
      while (waitpid(*pid, nullptr, 0) < 0 && errno == EINTR) {
      }
      return BuildFailure(argv[0] + " could not be waited for: " + std::strerror(error) + ".");
    }
  }
  kill(-*pid, SIGKILL);
  while (waitpid(*pid, nullptr, 0) < 0 && errno == EINTR) {
  }
  if (info.si_code == CLD_EXITED && info.si_status == 0) return Status::Ok();
  if (info.si_code == CLD_EXITED) {
    return BuildFailure(argv[0] + " exited " + std::to_string(info.si_status) +
                        " (its messages are above); no controller was started.");
  }
  return BuildFailure(argv[0] + " was killed by signal " + std::to_string(info.si_status) +
                      "; no controller was started.");
}

bool IsBuildFailure(const Error& error) {
  return error.code() == ErrorCode::kFailedPrecondition && error.message().starts_with(kPrefix);
}

}  // namespace plimsoll::trial
