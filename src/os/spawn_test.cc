// Tests of spawn.h without a container: where the channel lands, what the
// output pipe carries, that nothing else reaches the child, exec failures,
// hide_mount, RunCommand's deadline and ChildProcess's cleanup.
#include "os/spawn.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "base/unique_fd.h"

namespace plimsoll::os {
namespace {

using Clock = std::chrono::steady_clock;
using base::UniqueFd;
using namespace std::chrono_literals;

Deadline In(Clock::duration duration) {
  return Clock::now() + duration;
}

SpawnOptions Shell(const std::string& script) {
  SpawnOptions options;
  options.argv = {"/bin/sh", "-c", script};
  return options;
}

// The child's open descriptors, listed by the shell with builtins only (the
// loop opens nothing of its own).
constexpr const char* kListDescriptors =
    "for n in $(seq 0 1100); do [ -e /proc/$$/fd/$n ] && printf '%s ' $n; done; true";

std::string MustRun(SpawnOptions options) {
  auto output = RunCommand(std::move(options), In(10s));
  if (!output.ok()) {
    ADD_FAILURE() << output.error().ToString();
    return "";
  }
  EXPECT_TRUE(WIFEXITED(output->status) && WEXITSTATUS(output->status) == 0)
      << "status " << output->status << ": " << output->output;
  return output->output;
}

// Reads from `fd` until `expected_size` bytes or EOF or 10 s.
std::string ReadSome(int fd, size_t expected_size) {
  std::string text;
  Deadline give_up = In(10s);
  while (text.size() < expected_size && Clock::now() < give_up) {
    pollfd entry{fd, POLLIN, 0};
    if (poll(&entry, 1, 100) <= 0) continue;
    char buffer[256];
    ssize_t got = read(fd, buffer, sizeof buffer);
    if (got <= 0) break;
    text.append(buffer, static_cast<size_t>(got));
  }
  return text;
}

std::string SocketName(int fd) {
  struct stat st {};
  EXPECT_EQ(fstat(fd, &st), 0);
  return "socket:[" + std::to_string(st.st_ino) + "]";
}

bool IsMountPoint(const std::string& mountinfo, const std::string& point) {
  std::istringstream lines(mountinfo);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream fields(line);
    std::string id, parent, device, root, mount_point;
    fields >> id >> parent >> device >> root >> mount_point;
    if (mount_point == point) return true;
  }
  return false;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(SpawnTest, ChannelLandsOnDescriptorThree) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  UniqueFd ours(pair[0]), theirs(pair[1]);
  SpawnOptions options = Shell("read line <&3; echo \"got:$line\" >&3");
  options.channel = theirs.get();
  options.channel_target = 3;
  auto child = Spawn(options);
  ASSERT_TRUE(child.ok()) << child.error().ToString();
  theirs.Reset();
  ASSERT_EQ(write(ours.get(), "hello\n", 6), 6);
  EXPECT_EQ(ReadSome(ours.get(), 10), "got:hello\n");
  auto status = child->Wait(In(10s));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
}

TEST(SpawnTest, ChannelLandsOnDescriptorZeroInsteadOfStdin) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  UniqueFd ours(pair[0]), theirs(pair[1]);
  SpawnOptions options = Shell("read line; echo \"got:$line\" >&0");
  options.channel = theirs.get();
  options.channel_target = 0;
  auto child = Spawn(options);
  ASSERT_TRUE(child.ok()) << child.error().ToString();
  theirs.Reset();
  ASSERT_EQ(write(ours.get(), "zero\n", 5), 5);
  EXPECT_EQ(ReadSome(ours.get(), 9), "got:zero\n");
  auto status = child->Wait(In(10s));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
}

TEST(SpawnTest, ChannelOnOneOrTwoIsRefused) {
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  UniqueFd ours(pair[0]), theirs(pair[1]);
  for (int target : {1, 2}) {
    SpawnOptions options = Shell("true");
    options.channel = theirs.get();
    options.channel_target = target;
    auto child = Spawn(options);
    ASSERT_FALSE(child.ok()) << "target " << target;
    EXPECT_EQ(child.error().code(), ErrorCode::kInvalidArgument);
  }
}

TEST(SpawnTest, OutputPipeCarriesStdoutAndStderrAndStdinIsDevNull) {
  std::string output = MustRun(Shell("echo out; echo err >&2; cat; readlink /proc/self/fd/0"));
  // `cat` reads stdin: /dev/null gives EOF at once.
  EXPECT_EQ(output, "out\nerr\n/dev/null\n");
}

TEST(SpawnTest, SpawnWithoutOutputSendsItToDevNull) {
  auto child = Spawn(Shell("readlink /proc/self/fd/1 >/dev/null; echo lost; echo lost >&2"));
  ASSERT_TRUE(child.ok()) << child.error().ToString();
  auto status = child->Wait(In(10s));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0);
}

TEST(SpawnTest, NoOtherDescriptorOfTheParentLeaksIntoTheChild) {
  // Descriptors without O_CLOEXEC, low and high.
  UniqueFd low(open("/dev/null", O_RDONLY));
  ASSERT_TRUE(low.valid());
  UniqueFd high(dup2(low.get(), 1000));
  ASSERT_EQ(high.get(), 1000);
  UniqueFd middle(dup2(low.get(), 40));
  ASSERT_EQ(middle.get(), 40);
  ASSERT_EQ(fcntl(low.get(), F_GETFD) & FD_CLOEXEC, 0);

  EXPECT_EQ(MustRun(Shell(kListDescriptors)), "0 1 2 ");

  // With a channel on 3: exactly 0-3, and 3 is the channel.
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);  // not CLOEXEC either
  UniqueFd ours(pair[0]), theirs(pair[1]);
  SpawnOptions with_channel = Shell(std::string(kListDescriptors) + "; readlink /proc/$$/fd/3");
  with_channel.channel = theirs.get();
  with_channel.channel_target = 3;
  EXPECT_EQ(MustRun(with_channel), "0 1 2 3 " + SocketName(theirs.get()) + "\n");

  // With the channel on 0: nothing above 2.
  SpawnOptions on_zero = Shell(std::string(kListDescriptors) + "; readlink /proc/$$/fd/0");
  on_zero.channel = theirs.get();
  on_zero.channel_target = 0;
  EXPECT_EQ(MustRun(on_zero), "0 1 2 " + SocketName(theirs.get()) + "\n");
}

TEST(SpawnTest, ChannelSittingOnItsOwnTargetNumberSurvives) {
  // The source descriptor already is the target number: parking must keep it.
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair), 0);
  UniqueFd ours(pair[0]), theirs(pair[1]);
  UniqueFd at_seven(dup2(theirs.get(), 7));
  ASSERT_EQ(at_seven.get(), 7);
  SpawnOptions options = Shell("readlink /proc/$$/fd/7");
  options.channel = 7;
  options.channel_target = 7;
  EXPECT_EQ(MustRun(options), SocketName(theirs.get()) + "\n");
}

TEST(SpawnTest, ExecFailureIsAnErrorNamingThePath) {
  SpawnOptions options;
  options.argv = {"/nonexistent/plimsoll-no-such-runtime", "--version"};
  auto child = Spawn(options);
  ASSERT_FALSE(child.ok());
  EXPECT_NE(child.error().message().find("/nonexistent/plimsoll-no-such-runtime"),
            std::string::npos)
      << child.error().message();
  EXPECT_NE(child.error().message().find("execve"), std::string::npos) << child.error().message();
  EXPECT_NE(child.error().message().find(std::strerror(ENOENT)), std::string::npos)
      << child.error().message();
  // RunCommand passes the same error on.
  auto ran = RunCommand(options, In(5s));
  ASSERT_FALSE(ran.ok());
  EXPECT_NE(ran.error().message().find("/nonexistent/plimsoll-no-such-runtime"), std::string::npos);
}

TEST(SpawnTest, RelativeOrMissingArgvZeroIsRefused) {
  for (std::vector<std::string> argv :
       {std::vector<std::string>{"sh", "-c", "true"}, std::vector<std::string>{"./sh"},
        std::vector<std::string>{""}, std::vector<std::string>{}}) {
    SpawnOptions options;
    options.argv = argv;
    auto child = Spawn(options);
    ASSERT_FALSE(child.ok()) << (argv.empty() ? "(empty)" : argv[0]);
    EXPECT_EQ(child.error().code(), ErrorCode::kInvalidArgument);
    EXPECT_NE(child.error().message().find("absolute"), std::string::npos);
  }
}

TEST(SpawnTest, EnvironmentIsExactlyTheGivenOne) {
  SpawnOptions options;
  options.argv = {"/usr/bin/env"};
  options.environment = {"PATH=/bin", "ONLY=this"};
  EXPECT_EQ(MustRun(options), "PATH=/bin\nONLY=this\n");
}

// A mount made for this test in a private mount namespace of the test
// process (nothing reaches the host's table), hidden only in the child.
TEST(SpawnTest, HideMountDetachesAMountOnlyInTheChild) {
  if (geteuid() != 0) GTEST_SKIP() << "skipped: mounting a tmpfs needs root";
  // unshare(CLONE_NEWNS) needs an unshared fs struct: this binary starts no
  // threads, so the whole test process moves to the new namespace.
  ASSERT_EQ(unshare(CLONE_NEWNS), 0) << std::strerror(errno);
  ASSERT_EQ(mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr), 0) << std::strerror(errno);
  char pattern[] = "/tmp/plimsoll-spawn-hide-XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  std::string point = pattern;
  ASSERT_EQ(mount("tmpfs", point.c_str(), "tmpfs", 0, "size=64k"), 0) << std::strerror(errno);
  { std::ofstream(point + "/marker") << "here"; }

  SpawnOptions options =
      Shell("cat /proc/self/mountinfo; test -e " + point + "/marker && echo MARKER-VISIBLE; true");
  options.hide_mount = point;
  std::string child_view = MustRun(options);
  EXPECT_FALSE(IsMountPoint(child_view, point)) << child_view;
  EXPECT_EQ(child_view.find("MARKER-VISIBLE"), std::string::npos);
  // The parent still has it.
  EXPECT_TRUE(IsMountPoint(ReadFile("/proc/self/mountinfo"), point));
  EXPECT_EQ(ReadFile(point + "/marker"), "here");

  // Without hide_mount the child sees it.
  EXPECT_TRUE(IsMountPoint(MustRun(Shell("cat /proc/self/mountinfo")), point));

  EXPECT_EQ(umount2(point.c_str(), MNT_DETACH), 0);
  rmdir(point.c_str());
}

// What crun gets on this host: the cgroup2 mount hidden, the host unchanged.
TEST(SpawnTest, HideMountOfTheCgroup2MountPoint) {
  if (geteuid() != 0) GTEST_SKIP() << "skipped: a private mount namespace needs root";
  const std::string point = "/sys/fs/cgroup/unified";
  if (!IsMountPoint(ReadFile("/proc/self/mountinfo"), point)) {
    GTEST_SKIP() << "skipped: " << point << " is not a mount point on this host";
  }
  SpawnOptions options = Shell("cat /proc/self/mountinfo");
  options.hide_mount = point;
  std::string child_view = MustRun(options);
  EXPECT_FALSE(IsMountPoint(child_view, point));
  EXPECT_TRUE(IsMountPoint(child_view, "/sys/fs/cgroup/pids") ||
              !IsMountPoint(ReadFile("/proc/self/mountinfo"), "/sys/fs/cgroup/pids"));
  EXPECT_TRUE(IsMountPoint(ReadFile("/proc/self/mountinfo"), point));
}

TEST(SpawnTest, HideMountOfAPathThatIsNoMountIsTolerated) {
  if (geteuid() != 0) GTEST_SKIP() << "skipped: a private mount namespace needs root";
  SpawnOptions options = Shell("echo ran");
  options.hide_mount = "/nonexistent/plimsoll-not-a-mount";
  EXPECT_EQ(MustRun(options), "ran\n");
}

TEST(SpawnTest, RunCommandKillsAtTheDeadline) {
  SpawnOptions options;
  options.argv = {"/bin/sleep", "10"};
  auto started = Clock::now();
  auto ran = RunCommand(options, started + 200ms);
  auto took = Clock::now() - started;
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.error().code(), ErrorCode::kDeadlineExceeded) << ran.error().ToString();
  EXPECT_NE(ran.error().message().find("/bin/sleep"), std::string::npos);
  EXPECT_LT(took, 3s);  // not the 10 s of the sleep
}

TEST(SpawnTest, RunCommandKillsAtTheDeadlineEvenWhenOutputIsClosed) {
  // The child closes its output early, so the wait is on the process alone.
  auto started = Clock::now();
  auto ran = RunCommand(Shell("exec >/dev/null 2>&1; exec /bin/sleep 10"), started + 200ms);
  ASSERT_FALSE(ran.ok());
  EXPECT_EQ(ran.error().code(), ErrorCode::kDeadlineExceeded);
  EXPECT_LT(Clock::now() - started, 3s);
}

TEST(SpawnTest, RunCommandReportsTheExitStatusAndCapsOutput) {
  auto ran = RunCommand(Shell("printf 0123456789; exit 3"), In(10s), 4);
  ASSERT_TRUE(ran.ok()) << ran.error().ToString();
  EXPECT_TRUE(WIFEXITED(ran->status));
  EXPECT_EQ(WEXITSTATUS(ran->status), 3);
  EXPECT_EQ(ran->output, "0123");
}

bool ProcessExists(pid_t pid) {
  return kill(pid, 0) == 0 || errno != ESRCH;
}

TEST(SpawnTest, ChildProcessDestructorKillsAndReaps) {
  pid_t pid = -1;
  {
    SpawnOptions options;
    options.argv = {"/bin/sleep", "30"};
    auto child = Spawn(options);
    ASSERT_TRUE(child.ok()) << child.error().ToString();
    pid = child->pid();
    EXPECT_FALSE(child->Exited());
    EXPECT_FALSE(child->Wait(In(50ms)).has_value());
  }
  // Killed and reaped: no zombie left, nothing to wait for.
  EXPECT_FALSE(ProcessExists(pid));
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

TEST(SpawnTest, MovedFromChildProcessLeavesTheChildToTheNewOwner) {
  SpawnOptions options;
  options.argv = {"/bin/sleep", "30"};
  auto child = Spawn(options);
  ASSERT_TRUE(child.ok());
  pid_t pid = child->pid();
  std::optional<ChildProcess> owner;
  {
    ChildProcess moved(std::move(*child));
    owner.emplace(std::move(moved));
  }
  EXPECT_TRUE(ProcessExists(pid));
  EXPECT_FALSE(owner->Exited());
  owner->KillAndReap();
  EXPECT_TRUE(owner->Exited());
  auto status = owner->Wait(In(1s));
  ASSERT_TRUE(status.has_value());
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL);
  EXPECT_FALSE(ProcessExists(pid));
}

TEST(SpawnTest, WaitReturnsTheStatusAgainOnceReaped) {
  auto child = Spawn(Shell("exit 7"));
  ASSERT_TRUE(child.ok());
  auto first = child->Wait(In(10s));
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(WEXITSTATUS(*first), 7);
  EXPECT_TRUE(child->Exited());
  auto again = child->Wait(In(0s));
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(*again, *first);
}

TEST(SpawnTest, SignalsBlockedOrIgnoredInTheParentAreResetInTheChild) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  struct sigaction previous {};
  ASSERT_EQ(sigaction(SIGTERM, &ignore, &previous), 0);
  sigset_t term, old_mask;
  sigemptyset(&term);
  sigaddset(&term, SIGUSR1);
  ASSERT_EQ(sigprocmask(SIG_BLOCK, &term, &old_mask), 0);
  std::string output = MustRun(Shell("grep -E '^Sig(Blk|Ign)' /proc/self/status"));
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  sigaction(SIGTERM, &previous, nullptr);
  EXPECT_NE(output.find("SigBlk:\t0000000000000000"), std::string::npos) << output;
  EXPECT_NE(output.find("SigIgn:\t0000000000000000"), std::string::npos) << output;
}

}  // namespace
}  // namespace plimsoll::os
