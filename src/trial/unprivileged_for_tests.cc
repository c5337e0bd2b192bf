#include "trial/unprivileged_for_tests.h"

#include <fcntl.h>
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

namespace plimsoll::trial::testing {

bool BecomeUnprivileged() {
  if (geteuid() != 0) return true;
  return setgroups(0, nullptr) == 0 &&
         setresgid(kUnprivilegedId, kUnprivilegedId, kUnprivilegedId) == 0 &&
         setresuid(kUnprivilegedId, kUnprivilegedId, kUnprivilegedId) == 0;
}

bool GiveToUnprivileged(const std::string& path) {
  if (geteuid() != 0) return true;
  return chown(path.c_str(), kUnprivilegedId, kUnprivilegedId) == 0;
}

std::string InChild(const std::function<std::string()>& body) {
  int answer[2];
  if (pipe2(answer, O_CLOEXEC) != 0) return "child failed";
  const pid_t child = fork();
  if (child < 0) {
    close(answer[0]);
    close(answer[1]);
    return "child failed";
  }
  if (child == 0) {
    close(answer[0]);
    const std::string text = body();
    size_t sent = 0;
    while (sent < text.size()) {
      const ssize_t wrote = write(answer[1], text.data() + sent, text.size() - sent);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) _exit(1);
      sent += static_cast<size_t>(wrote);
    }
    _exit(0);
  }
  close(answer[1]);
  std::string text;
  char buffer[4096];
  for (;;) {
    const ssize_t got = read(answer[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  close(answer[0]);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return "child failed";
  return text;
}

}  // namespace plimsoll::trial::testing
