// A plimsolld child process for the benchmarks: started on 127.0.0.1 port 0
// with the flags a scenario names, its port read from the "plimsolld:
// serving api=..." line, stopped with SIGTERM (SIGKILL after a bound) when
// the object dies. Its stderr (operator log and audit lines) goes to a
// temporary file, shown when the start fails.
//
// Usage:
//   DaemonProcess daemon;
//   std::string error;
//   if (!daemon.Start("/path/plimsolld", {"--provider", "embedded", "--dev"}, &error)) ...
//   Connect to daemon.port(); ... daemon.CpuSeconds() ...
#ifndef PLIMSOLL_BENCH_TOOLS_DAEMON_PROCESS_H_
#define PLIMSOLL_BENCH_TOOLS_DAEMON_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace plimsoll::bench {

class DaemonProcess {
 public:
  DaemonProcess() = default;
  ~DaemonProcess();
  DaemonProcess(const DaemonProcess&) = delete;
  DaemonProcess& operator=(const DaemonProcess&) = delete;

  // Runs `binary` with `args` plus --listen 127.0.0.1:0 --metrics-listen off,
  // and waits (up to 60 s) for its serving line.
  bool Start(const std::string& binary, const std::vector<std::string>& args, std::string* error);
  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }

  // User + system CPU time the daemon has used so far (/proc/PID/stat).
  double CpuSeconds() const;

  // SIGTERM, wait up to 10 s, then SIGKILL. Returns the exit status (or
  // 128 + signal). Idempotent.
  int Stop();

 private:
  std::string StderrTail() const;

  pid_t pid_ = -1;
  uint16_t port_ = 0;
  std::string stderr_path_;
};

}  // namespace plimsoll::bench

#endif  // PLIMSOLL_BENCH_TOOLS_DAEMON_PROCESS_H_
