#include "tools/daemon_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

namespace plimsoll::bench {
namespace {

constexpr std::string_view kServing = "plimsolld: serving api=";

}  // namespace

DaemonProcess::~DaemonProcess() {
  Stop();
  if (!stderr_path_.empty()) std::remove(stderr_path_.c_str());
}

bool DaemonProcess::Start(const std::string& binary, const std::vector<std::string>& args,
                          std::string* error) {
  char path[] = "/tmp/plimsoll-bench-daemon-XXXXXX";
  int log = ::mkstemp(path);
  if (log < 0) {
    *error = std::string("mkstemp: ") + std::strerror(errno);
    return false;
  }
  stderr_path_ = path;
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(log);
    *error = std::string("pipe: ") + std::strerror(errno);
    return false;
  }
  std::vector<std::string> argv = {binary};
  argv.insert(argv.end(), args.begin(), args.end());
  for (const char* extra : {"--listen", "127.0.0.1:0", "--metrics-listen", "off"}) {
    argv.emplace_back(extra);
  }
  std::vector<char*> pointers;
  for (std::string& arg : argv) pointers.push_back(arg.data());
  pointers.push_back(nullptr);

  pid_ = ::fork();
  if (pid_ == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::dup2(log, STDERR_FILENO);
    int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0) ::dup2(null, STDIN_FILENO);
    ::execv(binary.c_str(), pointers.data());
    std::fprintf(stderr, "exec %s: %s\n", binary.c_str(), std::strerror(errno));
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(log);
  if (pid_ < 0) {
    ::close(out[0]);
    *error = std::string("fork: ") + std::strerror(errno);
    return false;
  }

  // Read stdout until the serving line (the port), within 60 s.
  std::string text;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (true) {
    size_t at = text.find(kServing);
    if (at != std::string::npos && text.find('\n', at) != std::string::npos) break;
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    pollfd descriptor{out[0], POLLIN, 0};
    if (left <= 0 || ::poll(&descriptor, 1, static_cast<int>(left)) <= 0) {
      *error = "plimsolld did not print its serving line within 60 s";
      break;
    }
    char chunk[512];
    ssize_t size = ::read(out[0], chunk, sizeof chunk);
    if (size <= 0) {
      *error = "plimsolld exited before serving";
      break;
    }
    text.append(chunk, static_cast<size_t>(size));
  }
  ::close(out[0]);  // later lines (none expected) would get EPIPE/SIGPIPE: plimsolld ignores it
  if (!error->empty()) {
    int status = Stop();
    *error += " (exit status " + std::to_string(status) + "); stderr: " + StderrTail();
    return false;
  }
  size_t start = text.find(kServing) + kServing.size();
  size_t end = text.find_first_of(" \n", start);
  std::string endpoint = text.substr(start, end - start);
  size_t colon = endpoint.rfind(':');
  long port =
      colon == std::string::npos ? 0 : std::strtol(endpoint.c_str() + colon + 1, nullptr, 10);
  if (port <= 0 || port > 65535) {
    Stop();
    *error = "cannot read a port from: " + text;
    return false;
  }
  port_ = static_cast<uint16_t>(port);
  return true;
}

double DaemonProcess::CpuSeconds() const {
  std::ifstream stat("/proc/" + std::to_string(pid_) + "/stat");
  std::string line;
  std::getline(stat, line);
  // Fields after the command name (which may hold spaces): state is field 3,
  // utime 14, stime 15.
  size_t paren = line.rfind(')');
  if (paren == std::string::npos) return 0;
  std::istringstream fields(line.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int index = 3; index <= 15 && fields >> field; ++index) {
    if (index == 14 || index == 15) ticks += std::strtod(field.c_str(), nullptr);
  }
  return ticks / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

int DaemonProcess::Stop() {
  if (pid_ <= 0) return 0;
  ::kill(pid_, SIGTERM);
  int status = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (::waitpid(pid_, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string DaemonProcess::StderrTail() const {
  std::ifstream in(stderr_path_);
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  return all.size() > 600 ? all.substr(all.size() - 600) : all;
}

}  // namespace plimsoll::bench
