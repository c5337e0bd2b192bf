#include "image/process.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace plimsoll::image {
namespace {

std::string CommandName(const std::vector<std::string>& argv) {
  return argv.empty() ? std::string("(nothing)") : argv.front();
}

// Spawns argv; when `stdout_fd` >= 0 the child's stdout is dup'ed from it.
Expected<pid_t> Spawn(const std::vector<std::string>& argv,
                      const std::vector<std::string>& extra_environment, int stdout_fd) {
  if (argv.empty()) return Failure(ErrorCode::kInternal, "RunProcess: empty argv.");
  std::vector<char*> arguments;
  for (const std::string& argument : argv) arguments.push_back(const_cast<char*>(argument.c_str()));
  arguments.push_back(nullptr);

  std::vector<char*> environment;
  for (char** entry = environ; *entry; ++entry) {
    std::string_view existing = *entry;
    bool overridden = false;
    for (const std::string& extra : extra_environment) {
      std::string_view name = std::string_view(extra).substr(0, extra.find('=') + 1);
      if (existing.substr(0, name.size()) == name) overridden = true;
    }
    if (!overridden) environment.push_back(*entry);
  }
  for (const std::string& extra : extra_environment)
    environment.push_back(const_cast<char*>(extra.c_str()));
  environment.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
  pid_t pid = 0;
  int error =
      posix_spawnp(&pid, arguments[0], &actions, nullptr, arguments.data(), environment.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) return SystemError("Cannot start " + CommandName(argv), error);
  return pid;
}

Status Wait(pid_t pid, const std::vector<std::string>& argv) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return SystemError("waitpid for " + CommandName(argv), errno);
  }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return Status::Ok();
  std::string how = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                      : "was killed by signal " + std::to_string(WTERMSIG(status));
  return Failure(ErrorCode::kInternal, CommandName(argv) + " " + how + ".");
}

}  // namespace

Status RunProcess(const std::vector<std::string>& argv,
                  const std::vector<std::string>& extra_environment) {
  auto pid = Spawn(argv, extra_environment, -1);
  if (!pid.ok()) return pid.error();
  return Wait(*pid, argv);
}

Expected<std::string> CaptureOutput(const std::vector<std::string>& argv) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return SystemError("pipe2", errno);
  auto pid = Spawn(argv, {}, pipe_fds[1]);
  close(pipe_fds[1]);
  if (!pid.ok()) {
    close(pipe_fds[0]);
    return pid.error();
  }
  std::string output;
  char buffer[4096];
  for (;;) {
    ssize_t got = read(pipe_fds[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    output.append(buffer, static_cast<size_t>(got));
  }
  close(pipe_fds[0]);
  PLIMSOLL_RETURN_IF_ERROR(Wait(*pid, argv));
  return output;
}

}  // namespace plimsoll::image
