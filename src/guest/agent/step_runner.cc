#include "guest/agent/step_runner.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/unique_fd.h"
#include "guest/agent/reaper.h"
#include "guest/protocol.h"
#include "os/descriptors.h"

namespace plimsoll::guest::agent {
namespace {

using Clock = std::chrono::steady_clock;

// What the child reports on its close-on-exec pipe when it cannot exec.
enum Stage : int { kStageSetup = 1, kStageExec = 2 };
enum What : int {
  kWhatExec,
  kWhatSetsid,
  kWhatDup,
  kWhatCloseDescriptors,
  kWhatRlimit,
  kWhatChdir,
  kWhatSetgroups,
  kWhatSetgid,
  kWhatSetuid,
  kWhatNoNewPrivs,
  kWhatDeathSignal,
  kWhatSeccomp,
  kWhatCount,
};
constexpr const char* kWhatNames[kWhatCount] = {
    "execve",    "setsid",    "dup2",      "closing descriptors", "setrlimit",        "chdir",
    "setgroups", "setresgid", "setresuid", "PR_SET_NO_NEW_PRIVS", "PR_SET_PDEATHSIG", "seccomp",
};

struct ChildFailure {
  int stage;
  int what;
  int error;
};

// Everything the child needs, built before fork so the child allocates
// nothing between fork and exec.
struct ChildPlan {
  std::vector<char*> argv;
  std::vector<char*> envp;
  std::vector<std::string> candidates;  // program paths to try, in order
  const StepOptions* options = nullptr;
  pid_t agent = 0;
  int devnull = -1;
  int stdout_write = -1;
  int stderr_write = -1;
  int failure_write = -1;
  // Descriptors that become 3, 4, ... in the child (LaunchStep's `inherit`).
  const int* inherit = nullptr;
  size_t inherit_count = 0;
  // The job's seccomp filter (StepOptions::seccomp_filter); len 0: none.
  sock_fprog seccomp{};
  // The limits to set, already capped at the agent's hard limits.
  struct Limit {
    int resource;
    rlimit value;
  };
  Limit limits[4] = {};
  size_t limit_count = 0;
  // The signals whose disposition is not SIG_DFL in the agent.
  const std::vector<int>* reset_signals = nullptr;
};

[[noreturn]] void ChildFail(int fd, Stage stage, What what, int error) {
  ChildFailure failure{stage, what, error};
  ssize_t ignored = write(fd, &failure, sizeof failure);
  (void)ignored;
  _exit(stage == kStageExec && (error == ENOENT || error == ENOTDIR) ? int{kExitNotFound}
                                                                     : int{kExitCannotExecute});
}

// Under gVisor's ptrace platform every system call of the guest costs tens
// of microseconds (measured: ~50 us on our 2-core host, docs/oci-provider.md
// "Time budget of a pooled runsc run"), and the child between vfork and exec
// is on every run's path: what can be known before the fork is computed
// once, in the agent, and the child makes only the calls that change it.

// The agent's hard limits, read once: the agent never changes its own
// limits (only the child does) and, without CAP_SYS_RESOURCE, could not
// raise them. A limit is set to `value` for both soft and hard, never above
// the hard one (an agent without privilege can only lower it).
constexpr int kStepLimits[] = {RLIMIT_CORE, RLIMIT_NOFILE, RLIMIT_FSIZE, RLIMIT_NPROC};

const std::array<rlim_t, RLIM_NLIMITS>& AgentHardLimits() {
  static const auto hard = [] {
    std::array<rlim_t, RLIM_NLIMITS> limits{};
    limits.fill(RLIM_INFINITY);
    for (int resource : kStepLimits) {
      rlimit limit{};
      if (getrlimit(resource, &limit) == 0) limits[resource] = limit.rlim_max;
    }
    return limits;
  }();
  return hard;
}

rlimit CappedLimit(int resource, int64_t value) {
  rlim_t hard = AgentHardLimits()[resource];
  auto want = static_cast<rlim_t>(value);
  if (hard != RLIM_INFINITY && want > hard) want = hard;
  return rlimit{want, want};
}

// Room for LaunchStep's inherited descriptors while they are moved.
constexpr size_t kMaxInherited = 4;
// Where descriptors wait while 3, 4, ... are filled (above anything the
// agent opens in practice; F_DUPFD takes the first free one from here).
constexpr int kParkedDescriptors = 300;

[[noreturn]] void RunChild(const ChildPlan& plan) {
  int fail = plan.failure_write;
  const StepOptions& options = *plan.options;

  // The descriptors to hand on may sit at 3 or 4 themselves, or where the
  // failure pipe is: park them all above the range first.
  int parked[kMaxInherited] = {};
  if (plan.inherit_count > 0) {
    fail = fcntl(plan.failure_write, F_DUPFD_CLOEXEC, kParkedDescriptors);
    if (fail < 0) _exit(kExitCannotExecute);
    for (size_t i = 0; i < plan.inherit_count; ++i) {
      parked[i] = fcntl(plan.inherit[i], F_DUPFD_CLOEXEC, kParkedDescriptors);
      if (parked[i] < 0) ChildFail(fail, kStageSetup, kWhatDup, errno);
    }
  }

  // Signal state survives exec: the agent ignores SIGPIPE, the step must not.
  // Only the signals the agent does not leave at SIG_DFL need a call
  // (AgentSignalsToReset); a handler would be reset by exec anyway, but must
  // not run in this child, which shares the agent's memory.
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int signal_number : *plan.reset_signals) {
    sigaction(signal_number, &default_action, nullptr);
  }
  if (options.ignore_hangup) {
    struct sigaction ignore {};
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGHUP, &ignore, nullptr);
  }

  // The OOM killer should pick a step over the agent (which may be
  // protected at -1000, inherited by this fork). Raising is always
  // permitted; best effort, since it needs /proc.
  int oom = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
  if (oom >= 0) {
    ssize_t ignored = write(oom, "1000", 4);
    (void)ignored;
    close(oom);
  }

  if (setsid() < 0) ChildFail(fail, kStageSetup, kWhatSetsid, errno);
  if (dup2(plan.devnull, STDIN_FILENO) < 0 || dup2(plan.stdout_write, STDOUT_FILENO) < 0 ||
      dup2(plan.stderr_write, STDERR_FILENO) < 0) {
    ChildFail(fail, kStageSetup, kWhatDup, errno);
  }
  for (size_t i = 0; i < plan.inherit_count; ++i) {
    if (dup2(parked[i], 3 + static_cast<int>(i)) < 0) ChildFail(fail, kStageSetup, kWhatDup, errno);
  }
  // Everything above 2 (or above the inherited ones) goes at exec, the agent
  // channel first among them. The failure pipe is already close-on-exec, so
  // it survives until exec. One close_range call: gVisor (2022-12) refuses
  // an upper bound above INT_MAX (~0U: EINVAL, and then the /proc walk of
  // MarkCloseOnExecFrom costs a dozen calls more).
  if (syscall(SYS_close_range, static_cast<unsigned>(3 + plan.inherit_count),
              static_cast<unsigned>(INT_MAX), CLOSE_RANGE_CLOEXEC) != 0) {
    os::MarkCloseOnExecFrom(3 + static_cast<int>(plan.inherit_count));
  }
  umask(022);
  for (size_t i = 0; i < plan.limit_count; ++i) {
    if (setrlimit(plan.limits[i].resource, &plan.limits[i].value) != 0) {
      ChildFail(fail, kStageSetup, kWhatRlimit, errno);
    }
  }
  if (chdir(options.work_directory.c_str()) != 0) ChildFail(fail, kStageSetup, kWhatChdir, errno);
  if (options.change_identity) {
    // The raw calls: this child is a process of its own with one thread,
    // while glibc's wrappers would broadcast the change to the threads of
    // the agent it was forked from (three more calls each).
    if (syscall(SYS_setgroups, 0, nullptr) != 0)
      ChildFail(fail, kStageSetup, kWhatSetgroups, errno);
    if (syscall(SYS_setresgid, options.gid, options.gid, options.gid) != 0) {
      ChildFail(fail, kStageSetup, kWhatSetgid, errno);
    }
    if (syscall(SYS_setresuid, options.uid, options.uid, options.uid) != 0) {
      ChildFail(fail, kStageSetup, kWhatSetuid, errno);
    }
    uid_t real = 0, effective = 0, saved = 0;
    if (getresuid(&real, &effective, &saved) != 0 || real != options.uid ||
        effective != options.uid || saved != options.uid) {
      ChildFail(fail, kStageSetup, kWhatSetuid, EPERM);
    }
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    ChildFail(fail, kStageSetup, kWhatNoNewPrivs, errno);
  }
  // After the identity change, which clears the death signal.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0) {
    ChildFail(fail, kStageSetup, kWhatDeathSignal, errno);
  }
  if (getppid() != plan.agent) _exit(kExitCannotExecute);  // the agent is gone already
  // Last before exec, after no_new_privs (which the kernel requires of an
  // unprivileged caller): the step and all it starts are filtered, the
  // agent is not.
  if (plan.seccomp.len > 0 &&
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &plan.seccomp) != 0) {
    ChildFail(fail, kStageSetup, kWhatSeccomp, errno);
  }

  int saved_error = ENOENT;
  for (const auto& candidate : plan.candidates) {
    execve(candidate.c_str(), plan.argv.data(), plan.envp.data());
    if (errno == ENOENT || errno == ENOTDIR) continue;
    saved_error = errno;
    if (errno != EACCES) break;  // EACCES: keep looking, like execvp
  }
  ChildFail(fail, kStageExec, kWhatExec, saved_error);
}

std::string ValueOf(const std::vector<std::string>& environment, std::string_view key) {
  std::string value;
  for (const auto& entry : environment) {
    if (entry.size() > key.size() && entry.compare(0, key.size(), key) == 0 &&
        entry[key.size()] == '=') {
      value = entry.substr(key.size() + 1);
    }
  }
  return value;
}

std::vector<std::string> Candidates(const std::string& program, const std::string& path) {
  if (program.find('/') != std::string::npos) return {program};
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string directory = path.substr(start, end - start);
    if (directory.empty()) directory = ".";
    out.push_back(directory + "/" + program);
    start = end + 1;
  }
  return out;
}

int64_t Milliseconds(Clock::duration duration) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(duration).count();
}

StepRun CannotStart(StepRun run, int64_t exit_code, const std::string& message) {
  run.end = StepEnd::kCannotStart;
  run.result.exit_code = exit_code;
  run.result.stderr_bytes = "plimsoll-guest: " + message + "\n";
  return run;
}

std::string DescribeFailure(const ChildFailure& failure, const std::string& program,
                            const std::string& path) {
  if (failure.stage == kStageExec) {
    if (failure.error == ENOENT || failure.error == ENOTDIR) {
      return "cannot run \"" + program + "\": no such program" +
             (program.find('/') == std::string::npos ? " on PATH (" + path + ")" : std::string()) +
             ".";
    }
    return "cannot run \"" + program + "\": " + std::strerror(failure.error) + ".";
  }
  const char* what =
      failure.what >= 0 && failure.what < kWhatCount ? kWhatNames[failure.what] : "setup";
  return "cannot prepare the step \"" + program + "\": " + what + ": " +
         std::strerror(failure.error) + ".";
}

}  // namespace

void OutputCapture::Add(const char* data, size_t size) {
  auto room = static_cast<size_t>(std::max<int64_t>(0, cap - static_cast<int64_t>(bytes.size())));
  size_t take = std::min(room, size);
  bytes.append(data, take);
  if (take < size) truncated = true;
}

void Drain(base::UniqueFd& fd, OutputCapture& capture) {
  char buffer[65536];
  for (int round = 0; round < 16 && fd.valid(); ++round) {
    ssize_t got = read(fd.get(), buffer, sizeof buffer);
    if (got > 0) {
      capture.Add(buffer, static_cast<size_t>(got));
      continue;
    }
    if (got < 0 && errno == EINTR) continue;
    if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    fd.Reset();  // EOF or a read error
  }
}

std::vector<std::string> StepEnvironment(const std::vector<std::string>& extra,
                                         const std::string& home) {
  std::vector<std::string> environment = {"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + home,
                                          "LANG=C.UTF-8"};
  for (const auto& entry : extra) {
    size_t equals = entry.find('=');
    if (equals == 0 || equals == std::string::npos) continue;
    std::string_view key(entry.data(), equals + 1);
    auto same = std::find_if(environment.begin(), environment.end(), [&](const std::string& e) {
      return std::string_view(e).substr(0, key.size()) == key;
    });
    if (same != environment.end()) {
      *same = entry;
    } else {
      environment.push_back(entry);
    }
  }
  return environment;
}

// Whether pidfd_open works here (gVisor 2022-12 lacks it: ENOSYS), asked
// once rather than for every step.
static bool PidfdsWork() {
  static const bool work = [] {
    int fd = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
    if (fd < 0) return errno != ENOSYS;
    close(fd);
    return true;
  }();
  return work;
}

void PrepareStepLaunches() {
  (void)AgentSignalsToReset();
  (void)AgentHardLimits();
  (void)PidfdsWork();
}

const std::vector<int>& AgentSignalsToReset() {
  static const std::vector<int> signals = [] {
    std::vector<int> found;
    for (int signal_number = 1; signal_number < NSIG; ++signal_number) {
      struct sigaction current {};
      if (sigaction(signal_number, nullptr, &current) != 0) continue;  // invalid or glibc's own
      if (signal_number == SIGKILL || signal_number == SIGSTOP) continue;
      if ((current.sa_flags & SA_SIGINFO) != 0 || current.sa_handler != SIG_DFL) {
        found.push_back(signal_number);
      }
    }
    return found;
  }();
  return signals;
}

Launched LaunchStep(const std::vector<std::string>& argv, const StepOptions& options,
                    const std::vector<int>& inherit, bool stdin_pipe) {
  Launched launched;
  auto fail = [&](int64_t exit_code, std::string message) {
    launched.exit_code = exit_code;
    launched.failure = std::move(message);
    return std::move(launched);
  };
  if (argv.empty() || argv.front().empty()) return fail(kExitNotFound, "empty step.");
  if (inherit.size() > kMaxInherited) return fail(kExitCannotExecute, "too many descriptors.");

  ChildPlan plan;
  std::vector<std::string> arguments = argv;
  std::vector<std::string> environment = options.environment;
  for (auto& argument : arguments) plan.argv.push_back(argument.data());
  plan.argv.push_back(nullptr);
  for (auto& entry : environment) plan.envp.push_back(entry.data());
  plan.envp.push_back(nullptr);
  std::string path = ValueOf(environment, "PATH");
  plan.candidates = Candidates(argv.front(), path);
  plan.options = &options;
  plan.agent = getpid();
  plan.reset_signals = &AgentSignalsToReset();
  auto add_limit = [&](int resource, int64_t value) {
    plan.limits[plan.limit_count++] = {resource, CappedLimit(resource, value)};
  };
  add_limit(RLIMIT_CORE, 0);
  add_limit(RLIMIT_NOFILE, options.nofile);
  if (options.fsize_bytes > 0) add_limit(RLIMIT_FSIZE, options.fsize_bytes);
  if (options.nproc > 0) add_limit(RLIMIT_NPROC, options.nproc);
  plan.inherit = inherit.data();
  plan.inherit_count = inherit.size();
  if (!options.seccomp_filter.empty()) {
    plan.seccomp.len =
        static_cast<unsigned short>(options.seccomp_filter.size() / sizeof(sock_filter));
    plan.seccomp.filter =
        reinterpret_cast<sock_filter*>(const_cast<char*>(options.seccomp_filter.data()));
  }

  int out_pipe[2], err_pipe[2], fail_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    return fail(kExitCannotExecute, std::string("pipe: ") + std::strerror(errno));
  }
  base::UniqueFd out_read(out_pipe[0]), out_write(out_pipe[1]);
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    return fail(kExitCannotExecute, std::string("pipe: ") + std::strerror(errno));
  }
  base::UniqueFd err_read(err_pipe[0]), err_write(err_pipe[1]);
  if (pipe2(fail_pipe, O_CLOEXEC) != 0) {
    return fail(kExitCannotExecute, std::string("pipe: ") + std::strerror(errno));
  }
  base::UniqueFd fail_read(fail_pipe[0]), fail_write(fail_pipe[1]);
  // /dev/null is opened once and kept (close-on-exec) for every step.
  static const int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (devnull < 0) {
    return fail(kExitCannotExecute, std::string("open /dev/null: ") + std::strerror(errno));
  }
  plan.devnull = devnull;
  base::UniqueFd in_read, in_write;
  if (stdin_pipe) {
    int in_pipe[2];
    if (pipe2(in_pipe, O_CLOEXEC) != 0) {
      return fail(kExitCannotExecute, std::string("pipe: ") + std::strerror(errno));
    }
    in_read.Reset(in_pipe[0]);
    in_write.Reset(in_pipe[1]);
    plan.devnull = in_read.get();  // the child's stdin
  }
  plan.stdout_write = out_write.get();
  plan.stderr_write = err_write.get();
  plan.failure_write = fail_write.get();

  // vfork: the child borrows the agent's memory until its execve, so no
  // page tables are copied and no page is copied on write (each such fault
  // is costly under virtualisation). RunChild only makes system calls on
  // prepared data, never returns, and resets its own signal handlers first
  // (a vfork child has its own handler table; it shares no CLONE_SIGHAND).
  pid_t pid = vfork();
  if (pid < 0) return fail(kExitCannotExecute, std::string("vfork: ") + std::strerror(errno));
  if (pid == 0) RunChild(plan);

  out_write.Reset();
  err_write.Reset();
  fail_write.Reset();
  in_read.Reset();

  // Exec succeeded when the failure pipe closes empty.
  ChildFailure failure{};
  size_t got = 0;
  while (got < sizeof failure) {
    ssize_t n =
        read(fail_read.get(), reinterpret_cast<char*>(&failure) + got, sizeof failure - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  if (got == sizeof failure) {
    // The child exits right after its report; reap it (it started nothing).
    int ignored = 0;
    while (waitpid(pid, &ignored, __WALL) < 0 && errno == EINTR) {
    }
    int64_t code =
        failure.stage == kStageExec && (failure.error == ENOENT || failure.error == ENOTDIR)
            ? kExitNotFound
            : kExitCannotExecute;
    return fail(code, DescribeFailure(failure, argv.front(), path));
  }
  // A fresh pipe's read end has no other status flag to keep.
  fcntl(out_read.get(), F_SETFL, O_NONBLOCK);
  fcntl(err_read.get(), F_SETFL, O_NONBLOCK);
  if (in_write.valid()) fcntl(in_write.get(), F_SETFL, O_NONBLOCK);
  launched.pid = pid;
  launched.stdout_read = std::move(out_read);
  launched.stderr_read = std::move(err_read);
  launched.stdin_write = std::move(in_write);
  return launched;
}

StepRun RunStep(const std::vector<std::string>& argv, const StepOptions& options,
                Clock::time_point deadline, Clock::time_point wrap_up, Launched* prelaunched,
                std::string_view stdin_bytes) {
  StepRun run;
  run.result.command = argv;
  auto started = Clock::now();
  if (argv.empty() || argv.front().empty()) return CannotStart(run, kExitNotFound, "empty step.");
  if (started >= deadline) {
    run.end = StepEnd::kTimedOut;
    run.result.timed_out = true;
    run.result.exit_code = kExitTimedOut;
    return run;
  }
  Launched launched =
      prelaunched != nullptr ? std::move(*prelaunched) : LaunchStep(argv, options, {});
  if (prelaunched != nullptr) prelaunched->pid = -1;  // ours now: its owner must not kill it
  if (launched.pid < 0) {
    run.result.duration_ms = Milliseconds(Clock::now() - started);
    return CannotStart(run, launched.exit_code, launched.failure);
  }
  pid_t pid = launched.pid;
  base::UniqueFd out_read = std::move(launched.stdout_read);
  base::UniqueFd err_read = std::move(launched.stderr_read);
  // A prestarted step's input goes in as the step runs (it reads until the
  // end of it); a step that stops reading only loses its own input.
  base::UniqueFd in_write = std::move(launched.stdin_write);
  std::string_view input = stdin_bytes;
  auto feed = [&] {
    while (in_write.valid() && !input.empty()) {
      ssize_t written = write(in_write.get(), input.data(), input.size());
      if (written > 0) {
        input.remove_prefix(static_cast<size_t>(written));
      } else if (written < 0 && errno == EINTR) {
        continue;
      } else if (written < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      } else {
        break;  // EPIPE: the step is gone or closed its stdin
      }
    }
    in_write.Reset();
  };
  feed();
  base::UniqueFd pidfd(PidfdsWork() ? static_cast<int>(syscall(SYS_pidfd_open, pid, 0)) : -1);
  OutputCapture out{options.output_cap_bytes, {}, false};
  OutputCapture err{options.output_cap_bytes, {}, false};

  bool exited = false;
  bool timed_out = false;
  int status = 0;
  while (!exited) {
    pollfd fds[4] = {{out_read.get(), POLLIN, 0},
                     {err_read.get(), POLLIN, 0},
                     {pidfd.get(), POLLIN, 0},
                     {in_write.get(), POLLOUT, 0}};
    auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now()).count();
    // Without a pidfd, wake often to notice the exit; with one, still wake
    // now and then to reap orphans (the agent may be pid 1).
    int64_t tick = pidfd.valid() ? 100 : 10;
    int timeout = static_cast<int>(std::clamp<int64_t>(left, 0, tick));
    poll(fds, 4, timeout);  // an error (EINTR) just means another round
    if (in_write.valid() && fds[3].revents != 0) feed();
    if (out_read.valid()) Drain(out_read, out);
    if (err_read.valid()) Drain(err_read, err);
    ReapAvailable(pid, &status, &exited);
    if (!exited && Clock::now() >= deadline) timed_out = true;
    if (timed_out) break;
  }
  run.result.duration_ms = Milliseconds(Clock::now() - started);
  in_write.Reset();

  // Whatever the step left running goes now, so the pipes reach EOF.
  run.nothing_left =
      KillAndReapAll(pid, options.sweep_scope, SweepUntil(wrap_up), options.spared) &&
      options.spared.empty();
  auto drain_until = std::min(Clock::now() + std::chrono::milliseconds(500), wrap_up);
  while ((out_read.valid() || err_read.valid()) && Clock::now() < drain_until) {
    pollfd fds[2] = {{out_read.get(), POLLIN, 0}, {err_read.get(), POLLIN, 0}};
    poll(fds, 2, 50);
    if (out_read.valid()) Drain(out_read, out);
    if (err_read.valid()) Drain(err_read, err);
  }

  run.result.stdout_bytes = std::move(out.bytes);
  run.result.stderr_bytes = std::move(err.bytes);
  run.result.stdout_truncated = out.truncated;
  run.result.stderr_truncated = err.truncated;
  if (timed_out) {
    run.end = StepEnd::kTimedOut;
    run.result.timed_out = true;
    run.result.exit_code = kExitTimedOut;
  } else if (WIFEXITED(status)) {
    run.result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    run.result.exit_code = 128 + WTERMSIG(status);
  } else {
    run.result.exit_code = kExitCannotExecute;
  }
  return run;
}

}  // namespace plimsoll::guest::agent
