#include "providers/linux/contain.h"

#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>

#include "os/caps.h"
#include "os/descriptors.h"
#include "providers/linux/net.h"
#include "providers/linux/rlimit.h"

namespace plimsoll::linux_sandbox {
namespace {

using Clock = std::chrono::steady_clock;

// What a failing child step sends over the error pipe.
struct ChildFailure {
  int32_t error = 0;
  char what[124] = {};
};

// Descriptor numbers inside the child while it arranges 0..4.
constexpr int kErrorPipeFd = 4;

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(Fd&& other) noexcept : fd_(other.Release()) {}
  Fd& operator=(Fd&& other) noexcept {
    Reset(other.Release());
    return *this;
  }
  ~Fd() { Reset(); }
  int get() const { return fd_; }
  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  void Reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

// Everything the child reads, prepared by the parent.
struct ChildPlan {
  const ContainConfig* config;
  MountPlan mounts;
  RlimitPlan rlimits;
  uint64_t capabilities;
  int last_capability;
  sock_fprog seccomp;
  std::vector<char*> argv;
  std::vector<char*> envp;
  int sync_read, sync_write, error_read, error_write, channel_host, channel_child;
  int diagnostics_read, diagnostics_write, stdout_fd;
  bool own_network;  // the clone made the network namespace: lo is down
};

[[noreturn]] void Fail(int error_fd, int error, const char* what) {
  ChildFailure failure;
  failure.error = error;
  size_t i = 0;
  for (; what[i] != '\0' && i + 1 < sizeof failure.what; ++i) failure.what[i] = what[i];
  failure.what[i] = '\0';
  (void)!write(error_fd, &failure, sizeof failure);
  syscall(SYS_exit_group, 1);
  __builtin_unreachable();
}

// Moves `fd` to a descriptor >= 10 (so 0..4 can be arranged freely).
int Lift(int fd) {
  return fd < 0 ? fd : fcntl(fd, F_DUPFD_CLOEXEC, 10);
}

[[noreturn]] void ChildMain(const ChildPlan& plan) {
  int error_fd = plan.error_write;
  close(plan.sync_write);
  close(plan.error_read);
  close(plan.channel_host);
  close(plan.diagnostics_read);
  // Phase 1 waits for the uid/gid maps; phase 2 for the cgroup (v1 creates
  // it while this child builds the filesystem). EOF: the provider gave up.
  auto await_release = [&plan]() {
    char go = 0;
    for (;;) {
      ssize_t got = read(plan.sync_read, &go, 1);
      if (got == 1) return;
      if (got < 0 && errno == EINTR) continue;
      syscall(SYS_exit_group, 1);
    }
  };
  await_release();
  const char* what = "";
  int error = 0;
  if ((error = BecomeInsideRoot(&what)) != 0) Fail(error_fd, error, what);
  // Credential changes clear the parent-death signal, so it is set after
  // them; a provider that died before this point is noticed by phase 2's EOF.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) != 0)
    Fail(error_fd, errno, "prctl(PR_SET_PDEATHSIG)");
  if ((error = SetUpFilesystem(plan.mounts, &what)) != 0) Fail(error_fd, error, what);
  const std::string& hostname = plan.config->hostname;
  if (sethostname(hostname.c_str(), hostname.size()) != 0) Fail(error_fd, errno, "sethostname");
  if (setdomainname("sandbox", 7) != 0) Fail(error_fd, errno, "setdomainname");
  if (plan.own_network && (error = BringUpLoopback(&what)) != 0) Fail(error_fd, error, what);
  if ((error = ApplyRlimits(plan.rlimits, &what)) != 0) Fail(error_fd, error, what);

  await_release();  // phase 2: the child is in the run's cgroup
  // The cgroup namespace is rooted where the child now is: the run's cgroup.
  if (unshare(CLONE_NEWCGROUP) != 0) Fail(error_fd, errno, "unshare(CLONE_NEWCGROUP)");

  // Descriptors: 0 /dev/null, 1 /dev/null (or the test's), 2 diagnostics,
  // 3 channel, 4 error pipe (close-on-exec); nothing else survives.
  int channel = Lift(plan.channel_child);
  int diagnostics = Lift(plan.diagnostics_write);
  int out = Lift(plan.stdout_fd);
  int errors = Lift(error_fd);
  if (channel < 0 || diagnostics < 0 || errors < 0 || (plan.stdout_fd >= 0 && out < 0)) {
    Fail(error_fd, errno, "move descriptors out of the way");
  }
  error_fd = errors;
  int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
  if (null_fd < 0) Fail(error_fd, errno, "open /dev/null inside");
  null_fd = Lift(null_fd);
  if (dup3(errors, kErrorPipeFd, O_CLOEXEC) < 0) Fail(error_fd, errno, "dup3 error pipe");
  error_fd = kErrorPipeFd;
  if (dup2(null_fd, 0) < 0 || dup2(out >= 0 ? out : null_fd, 1) < 0 || dup2(diagnostics, 2) < 0 ||
      dup2(channel, kChannelFd) < 0) {
    Fail(error_fd, errno, "arrange descriptors 0-3");
  }
  os::CloseFrom(kErrorPipeFd + 1);

  if ((error = os::DropCapabilities(plan.capabilities, plan.last_capability, &what)) != 0) {
    Fail(error_fd, error, what);
  }
  if ((error = os::SetNoNewPrivileges(&what)) != 0) Fail(error_fd, error, what);
  if ((error = os::InstallSeccompProgram(plan.seccomp, &what)) != 0) Fail(error_fd, error, what);

  // pid 1 becomes the static agent binary (in --init mode it forks the
  // agent as pid 2 and reaps): nothing of the host's address space stays.
  execve(plan.argv[0], plan.argv.data(), plan.envp.data());
  Fail(error_fd, errno, "execve the agent");
}

// Protects the sandbox's init (and so the agent it forks) from the OOM
// killer, best effort: -1000 through the legacy /proc/<pid>/oom_adj (-17),
// which, unlike a privileged write of oom_score_adj, leaves
// oom_score_adj_min alone, so a step that the agent raised to +1000 can
// lower itself only to the daemon's own minimum (normally 0) and stays the
// OOM killer's choice. Falls back to oom_score_adj where oom_adj is missing
// (then a step may lower itself to -1000 too: the cgroup stalls until the
// run's deadline kills it, which is bounded). Lowering needs CAP_SYS_RESOURCE;
// a host without it keeps the daemon's value for the init, and the steps'
// +1000 alone still makes the OOM killer prefer them (docs/linux-provider.md).
bool ProtectFromOomKiller(pid_t pid) {
  struct Attempt {
    const char* file;
    const char* value;
  };
  for (Attempt attempt : {Attempt{"oom_adj", "-17"}, Attempt{"oom_score_adj", "-1000"}}) {
    std::string path = "/proc/" + std::to_string(pid) + "/" + attempt.file;
    Fd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
    if (fd.get() < 0) continue;
    size_t length = std::strlen(attempt.value);
    if (write(fd.get(), attempt.value, length) == static_cast<ssize_t>(length)) return true;
    if (errno == EACCES || errno == EPERM) return false;  // no CAP_SYS_RESOURCE
  }
  return false;
}

std::string Describe(const ChildFailure& failure) {
  std::string what(failure.what, strnlen(failure.what, sizeof failure.what));
  return what + ": " + std::strerror(failure.error);
}

Error SetupRefusal(const std::string& detail) {
  return Refusal(NotDispatched::kEnvironment,
                 "The linux sandbox could not be built, so nothing ran: " + detail + ".");
}

}  // namespace

Container::Container(Container&& other) noexcept
    : pid_(other.pid_),
      pidfd_(other.pidfd_),
      channel_(other.channel_),
      diagnostics_(other.diagnostics_),
      reaped_(other.reaped_),
      status_(other.status_),
      cgroup_(std::move(other.cgroup_)) {
  other.pid_ = -1;
  other.pidfd_ = other.channel_ = other.diagnostics_ = -1;
  other.reaped_ = true;
}

Container::~Container() {
  if (pid_ > 0) (void)Kill();
  for (int fd : {pidfd_, channel_, diagnostics_}) {
    if (fd >= 0) close(fd);
  }
}

void Container::CloseChannel() {
  if (channel_ >= 0) close(channel_);
  channel_ = -1;
}

void Container::Reap(bool block) {
  if (reaped_ || pid_ <= 0) return;
  int status = 0;
  pid_t got;
  do {
    got = waitpid(pid_, &status, block ? 0 : WNOHANG);
  } while (got < 0 && errno == EINTR);
  if (got == pid_ || (got < 0 && errno == ECHILD)) {
    reaped_ = true;
    status_ = status;
  }
}

std::optional<int> Container::Wait(Deadline deadline) {
  for (;;) {
    Reap(false);
    if (reaped_) return status_;
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return std::nullopt;
    pollfd entry{pidfd_, POLLIN, 0};
    (void)poll(&entry, 1, static_cast<int>(std::min<int64_t>(left, 1000)) + 1);
  }
}

void Container::Signal() {
  if (pid_ > 0 && !reaped_) syscall(SYS_pidfd_send_signal, pidfd_, SIGKILL, nullptr, 0);
}

Status Container::Kill() {
  if (pid_ <= 0) return Status::Ok();
  // SIGKILL to the init ends the pid namespace: the kernel kills every other
  // process in it and the init is reaped only after all of them are gone.
  // Only sandbox processes can be in the cgroup, so it is empty by then and
  // one rmdir per hierarchy finishes; anything else falls back to killing
  // through the cgroup.
  Signal();
  Reap(true);
  pid_ = -1;
  if (cgroup_.Remove(std::chrono::milliseconds(0)).ok()) return Status::Ok();
  Status killed = cgroup_.Kill();
  Status removed = cgroup_.Remove();
  if (!killed.ok()) return killed;
  return removed;
}

bool Container::Exited() const {
  if (pid_ <= 0 || reaped_ || pidfd_ < 0) return true;
  // A pidfd polls readable once its process has exited.
  pollfd entry{pidfd_, POLLIN, 0};
  int ready;
  do {
    ready = poll(&entry, 1, 0);
  } while (ready < 0 && errno == EINTR);
  return ready != 0;
}

std::string Container::Diagnostics() {
  std::string text;
  if (diagnostics_ < 0) return text;
  char buffer[4096];
  ssize_t got = read(diagnostics_, buffer, sizeof buffer);
  if (got > 0) text.assign(buffer, static_cast<size_t>(got));
  return text;
}

Expected<Container> Contain(const ContainConfig& config, Deadline deadline) {
  if (config.seccomp == nullptr || config.cgroups == nullptr || config.argv.empty()) {
    return SetupRefusal("the configuration lacks a seccomp program, a cgroup layout or a program");
  }
  auto mounts = MountPlanFor(config.rootfs, config.limits, config.binds, config.host_calls);
  if (!mounts.ok()) return SetupRefusal(mounts.error().message());

  int pair[2], sync_pipe[2], error_pipe[2], diagnostics_pipe[2];
  // Each names errno: EMFILE (the daemon's RLIMIT_NOFILE) must read as such.
  auto failed = [](const char* what) {
    return SetupRefusal(std::string(what) + ": " + std::strerror(errno));
  };
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return failed("socketpair");
  Fd channel_host(pair[0]), channel_child(pair[1]);
  // A socket, not a pipe: the release is sent with MSG_NOSIGNAL, so a child
  // that already failed (and exited) costs an error, not a SIGPIPE.
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync_pipe) != 0)
    return failed("socketpair");
  Fd sync_read(sync_pipe[0]), sync_write(sync_pipe[1]);
  if (pipe2(error_pipe, O_CLOEXEC) != 0) return failed("pipe2");
  Fd error_read(error_pipe[0]), error_write(error_pipe[1]);
  if (pipe2(diagnostics_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return failed("pipe2");
  Fd diagnostics_read(diagnostics_pipe[0]), diagnostics_write(diagnostics_pipe[1]);

  // v2 clones straight into the run's cgroup, so it exists first; v1 creates
  // it after the clone, while the child builds its filesystem (phase 1).
  const bool v2 = config.cgroups->version == os::CgroupVersion::kV2;
  std::optional<os::RunCgroup> cgroup;
  Fd cgroup_fd;
  if (v2) {
    auto created = os::RunCgroup::Create(*config.cgroups, os::NextRunName(), config.limits);
    if (!created.ok())
      return SetupRefusal("creating the run's cgroup: " + created.error().message());
    cgroup.emplace(std::move(*created));
    cgroup_fd.Reset(open(cgroup->directories()[0].c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (cgroup_fd.get() < 0)
      return SetupRefusal("opening the run's cgroup: " + std::string(std::strerror(errno)));
  }

  std::vector<std::string> argv_storage = config.argv;
  std::vector<std::string> env_storage = config.environment;
  ChildPlan plan{};
  plan.config = &config;
  plan.mounts = std::move(*mounts);
  plan.rlimits = RlimitPlanFor(config.limits);
  plan.capabilities = config.agent_capabilities;
  plan.last_capability = os::LastCapability();
  plan.seccomp = config.seccomp->Fprog();
  for (std::string& arg : argv_storage) plan.argv.push_back(arg.data());
  plan.argv.push_back(nullptr);
  for (std::string& var : env_storage) plan.envp.push_back(var.data());
  plan.envp.push_back(nullptr);
  plan.sync_read = sync_read.get();
  plan.sync_write = sync_write.get();
  plan.error_read = error_read.get();
  plan.error_write = error_write.get();
  plan.channel_host = channel_host.get();
  plan.channel_child = channel_child.get();
  plan.diagnostics_read = diagnostics_read.get();
  plan.diagnostics_write = diagnostics_write.get();
  plan.stdout_fd = config.stdout_fd;
  plan.own_network = !config.network.valid();

  clone_args args{};
  int pidfd = -1;
  args.flags = CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS |
               CLONE_PIDFD | (plan.own_network ? CLONE_NEWNET : 0);
  args.pidfd = reinterpret_cast<uint64_t>(&pidfd);
  args.exit_signal = SIGCHLD;
  if (cgroup_fd.get() >= 0) {
    args.flags |= CLONE_INTO_CGROUP;
    args.cgroup = static_cast<uint64_t>(cgroup_fd.get());
  }
  auto clone = [&]() -> long {
    long child = syscall(SYS_clone3, &args, sizeof args);
    if (child == 0) ChildMain(plan);
    return child;
  };
  long child = plan.own_network ? clone() : JoinForClone(config.network, clone);
  if (child < 0)
    return SetupRefusal(std::string("clone3 with new namespaces: ") + std::strerror(errno));

  Container container(static_cast<pid_t>(child), pidfd, channel_host.Release(),
                      diagnostics_read.Release(),
                      cgroup ? std::move(*cgroup) : os::RunCgroup::Adopt(*config.cgroups, {}));
  channel_child.Reset();
  sync_read.Reset();
  error_write.Reset();
  diagnostics_write.Reset();

  // From here on, `container`'s destructor kills and reaps on every early return.
  Status mapped = WriteIdMaps(container.pid(), config.identities);
  if (!mapped.ok()) return SetupRefusal("writing the uid/gid maps: " + mapped.error().message());
  (void)ProtectFromOomKiller(container.pid());  // best effort (see there)
  auto release = [&sync_write]() {
    char go = 1;
    return send(sync_write.get(), &go, 1, MSG_NOSIGNAL) == 1;
  };
  // Once phase 1 runs, the child may fail (and exit) while the parent still
  // works: its own report, already in the error pipe, says why.
  auto refuse = [&error_read](const std::string& detail) {
    ChildFailure reported;
    pollfd entry{error_read.get(), POLLIN, 0};
    if (poll(&entry, 1, 0) == 1 &&
        read(error_read.get(), &reported, sizeof reported) == sizeof reported) {
      return SetupRefusal(Describe(reported));
    }
    return SetupRefusal(detail);
  };
  if (!release()) return refuse("releasing the child (phase 1)");
  if (!v2) {
    auto created = os::RunCgroup::Create(*config.cgroups, os::NextRunName(), config.limits);
    if (!created.ok()) return refuse("creating the run's cgroup: " + created.error().message());
    container.cgroup() = std::move(*created);
    Status added = container.cgroup().AddProcess(container.pid());
    if (!added.ok())
      return refuse("moving the sandbox into its cgroup: " + added.error().message());
  }
  if (!release()) return refuse("releasing the child (phase 2)");

  ChildFailure failure;
  size_t have = 0;
  for (;;) {
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    if (left <= 0) return SetupRefusal("the setup did not finish before the deadline");
    pollfd entry{error_read.get(), POLLIN, 0};
    int ready = poll(&entry, 1, static_cast<int>(std::min<int64_t>(left, 60'000)));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    ssize_t got =
        read(error_read.get(), reinterpret_cast<char*>(&failure) + have, sizeof failure - have);
    if (got < 0 && errno == EINTR) continue;
    if (got == 0) break;  // EOF: every write end closed, the agent is exec'd
    if (got < 0)
      return SetupRefusal(std::string("reading the error pipe: ") + std::strerror(errno));
    have += static_cast<size_t>(got);
    if (have == sizeof failure) return SetupRefusal(Describe(failure));
  }
  if (have != 0) return SetupRefusal("a partial failure report from the child");
  // EOF also comes from a child that died without a word (a crash): only a
  // live init means the agent was really started.
  if (container.Wait(Clock::now()).has_value()) {
    return SetupRefusal("the sandbox's init exited during setup without a report");
  }
  return container;
}

}  // namespace plimsoll::linux_sandbox
