#include "child_daemon.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdexcept>
#include <system_error>

namespace plimsoll::daemon::testing {

uint16_t ApiPortFrom(const std::string& serving_line) {
  size_t at = serving_line.find("api=127.0.0.1:");
  if (at == std::string::npos) return 0;
  return static_cast<uint16_t>(std::stoi(serving_line.substr(at + 14)));
}

ChildDaemon::ChildDaemon(const std::string& binary, std::vector<std::string> args,
                         std::vector<std::string> environment) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) throw std::runtime_error("pipe");
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error("fork");
  if (pid_ == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    std::string program = binary;
    std::vector<char*> argv{program.data()};
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::vector<char*> envp;
    for (std::string& entry : environment) envp.push_back(entry.data());
    envp.push_back(nullptr);
    execve(program.c_str(), argv.data(), envp.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  out_ = out[0];
  err_ = err[0];
}

ChildDaemon::~ChildDaemon() {
  if (!reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  close(out_);
  close(err_);
}

std::string ChildDaemon::ReadLine(std::chrono::milliseconds timeout) {
  std::string line;
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd waiting{out_, POLLIN, 0};
    if (poll(&waiting, 1, 50) <= 0) continue;
    char byte;
    if (read(out_, &byte, 1) != 1) break;
    if (byte == '\n') return line;
    line += byte;
  }
  return "";
}

int ChildDaemon::Wait(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    int status = 0;
    pid_t done = waitpid(pid_, &status, WNOHANG);
    if (done == pid_) {
      reaped_ = true;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    usleep(10'000);
  }
  return -1;
}

std::string ChildDaemon::ReadStderr() {
  std::string text;
  char chunk[4096];
  ssize_t size;
  while ((size = read(err_, chunk, sizeof chunk)) > 0)
    text.append(chunk, static_cast<size_t>(size));
  return text;
}

void ChildDaemon::Signal(int number) {
  kill(pid_, number);
}

TempCallerStore::TempCallerStore() {
  std::string pattern =
      (std::filesystem::temp_directory_path() / "plimsoll-test-callers-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp");
  directory_ = pattern;
  auth::StoreOptions options;
  options.create_if_missing = true;
  auto store = auth::CallerStore::Open(path(), options);
  if (!store.ok()) throw std::runtime_error(store.error().ToString());
  store_ = std::move(*store);
}

TempCallerStore::~TempCallerStore() {
  store_.reset();
  std::error_code ignored;
  std::filesystem::remove_all(directory_, ignored);
}

}  // namespace plimsoll::daemon::testing
