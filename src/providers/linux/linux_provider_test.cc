// Integration tests of the linux provider through plimsoll::Sandbox: the
// real wall, the real agent, the guest image from PLIMSOLL_IMAGE (or the
// default locations). Skipped with the reason where this machine cannot host it.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "base/scoped_env_for_tests.h"
#include "common/host_preconditions.h"
#include "image/image.h"
#include "image/swap_for_tests.h"
#include "os/cgroup.h"
#include "os/seccomp.h"
#include "plimsoll/sandbox.h"
#include "plimsoll/session.h"
#include "providers/linux/contain.h"
#include "providers/linux/netns_pool.h"
#include "providers/linux/teardown.h"

namespace plimsoll {
namespace {

// Without a warm pool: the tests that judge leftovers while it is open see
// only their own runs' sandboxes (the pool's tests open their own).
Sandbox& SharedSandbox() {
  static Sandbox sandbox = [] {
    testing::ScopedEnv pool("SANDBOX_LINUX_POOL_SIZE", "0");
    return std::move(*Sandbox::Open("linux"));
  }();
  return sandbox;
}

// Run cgroups of this process (by the naming scheme) that still exist.
std::vector<std::string> OwnRunCgroups() {
  std::vector<std::string> found;
  auto layout = os::DetectCgroups();
  if (!layout.ok()) return found;
  std::string prefix = std::to_string(getpid()) + "-";
  for (const std::string& parent : layout->ParentDirectories()) {
    DIR* dir = opendir(parent.c_str());
    if (dir == nullptr) continue;
    while (dirent* entry = readdir(dir)) {
      std::string name = entry->d_name;
      if (name.rfind(prefix, 0) == 0) found.push_back(parent + "/" + name);
    }
    closedir(dir);
  }
  return found;
}

// Whether the process at `proc_path` (/proc/<pid>) is in a run cgroup of
// this test process (by the naming scheme). Sandboxes of other processes
// run as the same host uids: another test binary's, or a daemon's warm
// pool, whose idle sandboxes live as long as it does. The tests judge and
// touch only their own.
bool InOwnRunCgroup(const std::string& proc_path) {
  std::ifstream cgroups(proc_path + "/cgroup");
  const std::string own = "/plimsoll/linux/" + std::to_string(getpid()) + "-";
  for (std::string line; std::getline(cgroups, line);) {
    if (line.find(own) != std::string::npos) return true;
  }
  return false;
}

// This test process's sandbox processes on the host (running as one of the
// sandbox's host uids).
int SandboxProcesses() {
  int count = 0;
  DIR* proc = opendir("/proc");
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    struct stat st {};
    std::string path = std::string("/proc/") + entry->d_name;
    if (stat(path.c_str(), &st) == 0 && st.st_uid >= 1'500'000'000u &&
        st.st_uid <= 1'500'001'000u && InOwnRunCgroup(path))
      ++count;
  }
  closedir(proc);
  return count;
}

// Finished sandboxes are dismantled just after their answer (teardown.h):
// leftovers are judged once that had its chance, within 5 s.
bool NothingLeftBehind(int processes_before) {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!OwnRunCgroups().empty() || SandboxProcesses() != processes_before) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

// The sandbox processes on the host once earlier runs' teardowns are done
// (a run's cgroup goes after its processes are reaped).
int QuietSandboxProcesses() {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!OwnRunCgroups().empty() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return SandboxProcesses();
}

// The host's cgroup layout and the built-in seccomp program, made once for
// the tests that call Contain directly.
struct WallParts {
  os::CgroupLayout layout;
  os::SeccompProgram program;
};

const WallParts* RealWall() {
  static const std::optional<WallParts> parts = []() -> std::optional<WallParts> {
    auto layout = os::DetectCgroups();
    auto policy = os::ParseSeccompPolicy(os::BuiltInSeccompPolicyText());
    if (!layout.ok() || !policy.ok()) return std::nullopt;
    auto program = os::CompileSeccompPolicy(*policy);
    if (!program.ok()) return std::nullopt;
    return WallParts{std::move(*layout), std::move(*program)};
  }();
  return parts ? &*parts : nullptr;
}

class LinuxProviderTest : public ::testing::Test {
 protected:
  void SetUp() override { PLIMSOLL_REQUIRE_HOST("linux"); }
  Result MustRun(const Request& request) { return MustRun(SharedSandbox(), request); }
  static Result MustRun(Sandbox& sandbox, const Request& request) {
    auto result = sandbox.Run(request);
    if (!result.ok()) {
      ADD_FAILURE() << result.error().ToString();
      return Result{};
    }
    return *result;
  }
};

TEST_F(LinuxProviderTest, TierContainerFromEvidenceWithEveryCheckListedAndPassed) {
  // The provider's own evidence (Sandbox::CollectEvidence hides failed checks).
  ASSERT_TRUE(SharedSandbox().provider().Preflight().ok());
  auto evidence = SharedSandbox().provider().SmokeTest(std::chrono::steady_clock::now() +
                                                       std::chrono::seconds(30));
  ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
  for (const auto& [key, value] : evidence->facts)
    std::cout << "fact " << key << ": " << value << "\n";
  for (const EvidenceCheck& check : evidence->checks) {
    std::cout << (check.passed ? "PASS " : "FAIL ") << check.name << ": " << check.detail << "\n";
  }
  EXPECT_EQ(evidence->tier, Tier::kContainer) << evidence->summary;
  std::set<std::string> names;
  for (const EvidenceCheck& check : evidence->checks) {
    names.insert(check.name);
    EXPECT_TRUE(check.passed) << check.name << ": " << check.detail;
  }
  for (const char* name :
       {"root_read_only", "tmp_is_bounded_tmpfs", "work_is_bounded_tmpfs", "only_tmpfs_writable",
        "proc_masked", "loopback_only", "no_route_out", "pids_limit", "seccomp_filter",
        "no_new_privileges", "unprivileged_no_capabilities", "cgroup_limits_configured",
        "memory_limit_enforced"}) {
    EXPECT_TRUE(names.count(name)) << "missing check " << name;
  }
}

TEST_F(LinuxProviderTest, JavascriptAndPythonRunInsideWithTierContainer) {
  Request js;
  js.javascript = JavascriptPayload{"console.log(6*7)"};
  Result result = MustRun(js);
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "42\n");
  EXPECT_EQ(result.isolation, Tier::kContainer);
  Request py;
  py.python = PythonPayload{"import os, socket\nprint(os.getuid(), socket.gethostname())"};
  result = MustRun(py);
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "1000 plimsoll\n");
}

TEST_F(LinuxProviderTest, DeniedSystemCallsFailWithEpermInside) {
  Request py;
  py.python = PythonPayload{R"py(
import ctypes, errno, socket
libc = ctypes.CDLL(None, use_errno=True)
def check(name, rc):
    print(name, "EPERM" if rc == -1 and ctypes.get_errno() == errno.EPERM else "rc=%d errno=%d" % (rc, ctypes.get_errno()))
check("unshare", libc.unshare(0x10000000))
check("setns", libc.setns(0, 0))
check("clone_newns", libc.syscall(56, 0x00020000 | 17, 0, 0, 0, 0))
check("mount", libc.mount(b"none", b"/tmp", b"tmpfs", 0, None))
check("umount2", libc.umount2(b"/tmp", 0))
check("pivot_root", libc.syscall(155, b"/", b"/"))
check("ptrace", libc.ptrace(0, 0, None, None))
check("keyctl", libc.syscall(250, 0, 0, 0, 0, 0))
check("add_key", libc.syscall(248, b"user", b"x", None, 0, 0))
check("request_key", libc.syscall(249, b"user", b"x", None, 0))
check("bpf", libc.syscall(321, 0, 0, 0))
check("perf_event_open", libc.syscall(298, 0, 0, -1, -1, 0))
check("init_module", libc.syscall(175, 0, 0, b""))
check("finit_module", libc.syscall(313, 0, b"", 0))
check("delete_module", libc.syscall(176, b"x", 0))
check("kexec_load", libc.syscall(246, 0, 0, 0, 0))
check("reboot", libc.syscall(169, 0, 0, 0, 0))
check("clock_settime", libc.syscall(227, 0, 0))
check("settimeofday", libc.syscall(164, 0, 0))
check("adjtimex", libc.syscall(159, 0))
for family in (socket.AF_INET, socket.AF_INET6, socket.AF_NETLINK, socket.AF_PACKET):
    try:
        socket.socket(family, socket.SOCK_DGRAM).close(); print("socket", family, "created")
    except OSError as e:
        print("socket", family, errno.errorcode[e.errno])
a, b = socket.socketpair(socket.AF_UNIX); a.close(); b.close(); print("unix ok")
)py"};
  Result result = MustRun(py);
  ASSERT_EQ(result.exit_code, 0) << result.stderr_bytes;
  std::istringstream lines(result.stdout_bytes);
  int checked = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("socket", 0) == 0) {
      EXPECT_NE(line.find("EPERM"), std::string::npos) << line;
    } else if (line != "unix ok") {
      EXPECT_NE(line.find(" EPERM"), std::string::npos) << line;
    }
    ++checked;
  }
  EXPECT_EQ(checked, 25) << result.stdout_bytes;
}

TEST_F(LinuxProviderTest, MemoryLimitKillsWith137) {
  Request py;
  py.python = PythonPayload{"b = bytearray(512 << 20)\nprint('survived')"};
  Result result = MustRun(py);
  EXPECT_EQ(result.exit_code, 137) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes, "");
}

TEST_F(LinuxProviderTest, FifosAndUnixSocketsCanBeMadeButNotDeviceNodes) {
  Request py;
  py.python = PythonPayload{R"py(
import errno, os, stat
def attempt(label, fn):
    try:
        fn(); print(label, "ok")
    except OSError as e:
        print(label, errno.errorcode[e.errno])
attempt("mkfifo", lambda: os.mkfifo("/tmp/fifo"))
print("is fifo", stat.S_ISFIFO(os.stat("/tmp/fifo").st_mode))
attempt("mknod fifo", lambda: os.mknod("/work/fifo2", stat.S_IFIFO | 0o600))
attempt("mknod socket", lambda: os.mknod("/work/sock", stat.S_IFSOCK | 0o600))
attempt("mknod char", lambda: os.mknod("/tmp/mem", stat.S_IFCHR | 0o600, os.makedev(1, 1)))
attempt("mknod block", lambda: os.mknod("/tmp/sda", stat.S_IFBLK | 0o600, os.makedev(8, 0)))
attempt("mknod regular", lambda: os.mknod("/tmp/file", stat.S_IFREG | 0o600))
r = os.open("/tmp/fifo", os.O_RDONLY | os.O_NONBLOCK); w = os.open("/tmp/fifo", os.O_WRONLY)
os.write(w, b"through"); print(os.read(r, 100).decode())
)py"};
  Result result = MustRun(py);
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  EXPECT_EQ(result.stdout_bytes,
            "mkfifo ok\nis fifo True\nmknod fifo ok\nmknod socket ok\nmknod char EPERM\n"
            "mknod block EPERM\nmknod regular EPERM\nthrough\n");
}

// Host processes running as the sandbox's root (host uid 1500000000): the
// init and the agent while a run is in flight.
struct SandboxRootProcess {
  std::string exe;
  int64_t rss_kib = -1;
  int oom_score_adj = 0;
};
std::vector<SandboxRootProcess> SandboxRootProcesses() {
  std::vector<SandboxRootProcess> found;
  DIR* proc = opendir("/proc");
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    std::string base = std::string("/proc/") + entry->d_name;
    struct stat st {};
    if (stat(base.c_str(), &st) != 0 || st.st_uid != 1'500'000'000u || !InOwnRunCgroup(base))
      continue;
    SandboxRootProcess process;
    char target[4096];
    ssize_t length = readlink((base + "/exe").c_str(), target, sizeof target - 1);
    if (length > 0) process.exe.assign(target, static_cast<size_t>(length));
    std::ifstream status(base + "/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("VmRSS:", 0) == 0) process.rss_kib = std::stoll(line.substr(6));
    }
    std::ifstream(base + "/oom_score_adj") >> process.oom_score_adj;
    found.push_back(process);
  }
  closedir(proc);
  return found;
}

bool HasCapability(int capability) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("CapEff:", 0) == 0) {
      return (std::stoull(line.substr(7), nullptr, 16) >> capability) & 1;
    }
  }
  return false;
}

TEST_F(LinuxProviderTest, InitAndAgentAreTheSmallAgentBinaryAndStepsAreTheOomKillersChoice) {
  (void)QuietSandboxProcesses();  // no earlier run's processes to be mistaken for this one's
  // While a step sleeps, look at the sandbox's root processes from the host.
  // The agent forks the step as root and the child drops to the sandbox's
  // user a moment later, so one sample can catch three; the steady state is
  // two, and a sample that never settles there fails below.
  std::vector<SandboxRootProcess> seen;
  std::atomic<bool> stop{false};
  std::thread watcher([&] {
    while (!stop && seen.size() != 2) {
      seen = SandboxRootProcesses();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  Request py;
  py.python = PythonPayload{R"py(
import time
print(open("/proc/self/oom_score_adj").read().strip())
time.sleep(1.5)
)py"};
  Result result = MustRun(py);
  stop = true;
  watcher.join();
  EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
  // (How far a step may lower itself again depends on the daemon's own
  // oom_score_adj_min, which the host sets up; see docs/linux-provider.md.)
  EXPECT_EQ(result.stdout_bytes, "1000\n");
  ASSERT_EQ(seen.size(), 2u) << "expected the init and the agent";
  int own_adjustment = 0;
  std::ifstream("/proc/self/oom_score_adj") >> own_adjustment;
  const int protected_adjustment = HasCapability(24 /*CAP_SYS_RESOURCE*/) ? -1000 : own_adjustment;
  for (const SandboxRootProcess& process : seen) {
    // pid 1 exec'd the static agent: nothing of this (big, sanitized) test
    // process's address space is left in the sandbox.
    EXPECT_NE(process.exe.find("plimsoll-guest"), std::string::npos) << process.exe;
    std::cout << "sandbox root process " << process.exe << ": VmRSS " << process.rss_kib
              << " KiB, oom_score_adj " << process.oom_score_adj << "\n";
    EXPECT_GT(process.rss_kib, 0);
    EXPECT_LT(process.rss_kib, 32 * 1024) << process.exe;
    EXPECT_EQ(process.oom_score_adj, protected_adjustment) << process.exe;
  }
}

TEST_F(LinuxProviderTest, PidsLimitStopsAForkBomb) {
  Request py;
  py.python = PythonPayload{R"py(
import os, errno, time
n = 0
try:
    while n < 1000:
        if os.fork() == 0:
            time.sleep(20); os._exit(0)
        n += 1
except OSError as e:
    print("stopped", errno.errorcode[e.errno], n < 256)
)py"};
  py.timeout_ms = 10'000;
  Result result = MustRun(py);
  EXPECT_EQ(result.stdout_bytes, "stopped EAGAIN True\n") << result.stderr_bytes;
}

TEST_F(LinuxProviderTest, TimeoutKillsTheCgroupAndLeavesNothingBehind) {
  int before = QuietSandboxProcesses();
  Request py;
  py.python = PythonPayload{R"py(
import os, time
for _ in range(5):
    if os.fork() == 0:
        os.setsid()
        while True: pass
print("spinning", flush=True)
while True: time.sleep(1)
)py"};
  py.timeout_ms = 500;
  Result result = MustRun(py);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.exit_code, 124);
  EXPECT_TRUE(NothingLeftBehind(before))
      << OwnRunCgroups().size() << " cgroups, " << SandboxProcesses() - before << " processes";
  // Mounts live only in the sandbox's mount namespace: the host's table has none of them.
  std::ifstream mounts("/proc/self/mountinfo");
  std::string all((std::istreambuf_iterator<char>(mounts)), std::istreambuf_iterator<char>());
  EXPECT_EQ(all.find("plimsoll-rootfs"), std::string::npos);
}

TEST_F(LinuxProviderTest, AProjectRunsStepsInOrderAndBringsBackArtifacts) {
  Request project;
  project.project =
      ProjectPayload{{{"main.py", "open('out.txt','w').write('made')\nprint('step1')"}},
                     {{"python3", "main.py"}, {"cat", "out.txt"}},
                     {"out.txt"}};
  Result result = MustRun(project);
  ASSERT_EQ(result.steps.size(), 2u);
  EXPECT_EQ(result.steps[0].stdout_bytes, "step1\n");
  EXPECT_EQ(result.stdout_bytes, "made");
  ASSERT_EQ(result.artifacts.size(), 1u);
  EXPECT_EQ(result.artifacts[0].content, "made");
}

TEST_F(LinuxProviderTest, AnInvalidPolicyRefusesWithEnvironmentAndRunsNothing) {
  std::string path = ::testing::TempDir() + "/bad.policy";
  std::ofstream(path) << "version 1\ndefault deny\nallow not_a_syscall\n";
  testing::ScopedEnv env("PLIMSOLL_SECCOMP_POLICY", path);
  auto sandbox = Sandbox::Open("linux");
  ASSERT_TRUE(sandbox.ok());
  Request js;
  js.javascript = JavascriptPayload{"console.log('ran')"};
  auto result = sandbox->Run(js);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kEnvironment)
      << result.error().ToString();
  EXPECT_NE(result.error().message().find("not_a_syscall"), std::string::npos)
      << result.error().message();
}

TEST_F(LinuxProviderTest, AMissingImageRefusesWithEnvironmentAndRunsNothing) {
  testing::ScopedEnv env("PLIMSOLL_IMAGE", "/nonexistent/plimsoll-image");
  auto sandbox = Sandbox::Open("linux");
  ASSERT_TRUE(sandbox.ok());
  Request js;
  js.javascript = JavascriptPayload{"console.log('ran')"};
  auto result = sandbox->Run(js);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kEnvironment)
      << result.error().ToString();
}

// A step that fails inside the child (here: a bind mount onto a path the
// image lacks) is reported over the error pipe; nothing is executed and
// nothing is left behind.
TEST_F(LinuxProviderTest, AWallStepFailingInsideTheChildRefusesWithEnvironment) {
  auto image = image::LocateDefaultImage();
  ASSERT_TRUE(image.ok());
  const WallParts* wall = RealWall();
  ASSERT_NE(wall, nullptr);
  int before = QuietSandboxProcesses();
  linux_sandbox::ContainConfig config;
  config.rootfs = image->rootfs.string();
  config.argv = {"/bin/sh", "-c", "echo ran > /work/ran"};
  config.seccomp = &wall->program;
  config.cgroups = &wall->layout;
  config.binds = {{"/dev/null", "/no/such/target"}};
  // The child fails while the parent may still be making the cgroup and
  // releasing phase 2 (a dead reader: no SIGPIPE, and the child's own report
  // wins over the parent's failed step); repeated to meet both orders.
  for (int attempt = 0; attempt < 20; ++attempt) {
    auto container =
        linux_sandbox::Contain(config, std::chrono::steady_clock::now() + std::chrono::seconds(10));
    ASSERT_FALSE(container.ok());
    EXPECT_EQ(NotDispatchedReason(container.error()), NotDispatched::kEnvironment);
    EXPECT_NE(container.error().message().find("bind-mount a host file"), std::string::npos)
        << container.error().message();
  }
  EXPECT_TRUE(NothingLeftBehind(before))
      << OwnRunCgroups().size() << " cgroups, " << SandboxProcesses() - before << " processes";
}

// A sandbox whose pid 1 would live for a minute, built with the real wall.
Expected<linux_sandbox::Container> SleepingSandbox(const os::CgroupLayout& layout,
                                                   const os::SeccompProgram& program,
                                                   linux_sandbox::NamespaceFd network = {}) {
  auto image = image::LocateDefaultImage();
  if (!image.ok()) return image.error();
  linux_sandbox::ContainConfig config;
  config.rootfs = image->rootfs.string();
  config.argv = {"/bin/sleep", "60"};
  config.seccomp = &program;
  config.cgroups = &layout;
  config.network = std::move(network);
  return linux_sandbox::Contain(config,
                                std::chrono::steady_clock::now() + std::chrono::seconds(10));
}

TEST_F(LinuxProviderTest, TeardownKillsAtOnceAndDismantlesInTheBackground) {
  const WallParts* wall = RealWall();
  ASSERT_NE(wall, nullptr);
  int before = QuietSandboxProcesses();
  {
    linux_sandbox::Teardown teardown(/*max_pending=*/8);
    std::vector<std::string> directories;
    for (int i = 0; i < 3; ++i) {
      auto sandbox = SleepingSandbox(wall->layout, wall->program);
      ASSERT_TRUE(sandbox.ok()) << sandbox.error().ToString();
      EXPECT_GE(SandboxProcesses(), before + 1);  // the sleeper is alive
      for (const auto& dir : sandbox->cgroup().directories()) directories.push_back(dir);
      auto start = std::chrono::steady_clock::now();
      teardown.Finish(std::move(*sandbox));
      // Finish only signals: it does not wait a minute for the sleeper.
      EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(500));
    }
    teardown.Drain();
    EXPECT_EQ(teardown.Pending(), 0u);
    for (const auto& dir : directories) EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
    EXPECT_EQ(SandboxProcesses(), before);
  }
  // With no room to queue, the caller tears down itself: gone on return.
  linux_sandbox::Teardown full(/*max_pending=*/0);
  auto sandbox = SleepingSandbox(wall->layout, wall->program);
  ASSERT_TRUE(sandbox.ok()) << sandbox.error().ToString();
  std::vector<std::string> directories = sandbox->cgroup().directories();
  full.Finish(std::move(*sandbox));
  EXPECT_EQ(full.Pending(), 0u);
  for (const auto& dir : directories) EXPECT_FALSE(std::filesystem::exists(dir)) << dir;
  EXPECT_EQ(SandboxProcesses(), before);
}

ino_t NetworkNamespaceOf(const std::string& proc_entry) {
  struct stat st {};
  return stat((proc_entry + "/ns/net").c_str(), &st) == 0 ? st.st_ino : 0;
}

TEST_F(LinuxProviderTest, ASandboxJoinsANamespaceMadeAheadOrMakesItsOwn) {
  const WallParts* wall = RealWall();
  ASSERT_NE(wall, nullptr);
  ino_t home = NetworkNamespaceOf("/proc/thread-self");

  linux_sandbox::NetnsPool pool(1);
  linux_sandbox::NamespaceFd made_ahead;
  for (int i = 0; i < 2500 && !made_ahead.valid(); ++i) {
    made_ahead = pool.Take();
    if (!made_ahead.valid()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_TRUE(made_ahead.valid()) << pool.LastError();
  struct stat taken {};
  ASSERT_EQ(fstat(made_ahead.get(), &taken), 0);
  auto joined = SleepingSandbox(wall->layout, wall->program, std::move(made_ahead));
  ASSERT_TRUE(joined.ok()) << joined.error().ToString();
  EXPECT_EQ(NetworkNamespaceOf("/proc/" + std::to_string(joined->pid())), taken.st_ino);
  EXPECT_EQ(NetworkNamespaceOf("/proc/thread-self"), home) << "the thread did not come back";

  auto own = SleepingSandbox(wall->layout, wall->program);
  ASSERT_TRUE(own.ok()) << own.error().ToString();
  ino_t own_namespace = NetworkNamespaceOf("/proc/" + std::to_string(own->pid()));
  EXPECT_NE(own_namespace, 0u);
  EXPECT_NE(own_namespace, home);
  EXPECT_NE(own_namespace, taken.st_ino);
  EXPECT_TRUE(joined->Kill().ok());
  EXPECT_TRUE(own->Kill().ok());
}

TEST_F(LinuxProviderTest, ManyRunsLeaveNothingBehindOnceTheSandboxCloses) {
  int before = QuietSandboxProcesses();
  {
    auto sandbox = Sandbox::Open("linux");
    ASSERT_TRUE(sandbox.ok());
    Request js;
    js.javascript = JavascriptPayload{"console.log(1)"};
    for (int i = 0; i < 20; ++i) {
      auto result = sandbox->Run(js);
      ASSERT_TRUE(result.ok()) << result.error().ToString();
      EXPECT_EQ(result->stdout_bytes, "1\n");
    }
  }  // closing the sandbox finishes every teardown before it returns
  EXPECT_EQ(OwnRunCgroups(), std::vector<std::string>{});
  EXPECT_EQ(SandboxProcesses(), before);
}

TEST_F(LinuxProviderTest, ReconcileRemovesACrashedOwnersCgroups) {
  auto layout = os::DetectCgroups();
  ASSERT_TRUE(layout.ok());
  ASSERT_TRUE(os::EnsureCgroupParents(*layout).ok());
  // What a crashed owner leaves: run directories whose owner pid is gone
  // (pid 999999999 is above pid_max), one holding a live process.
  pid_t stray = fork();
  ASSERT_GE(stray, 0);
  if (stray == 0) {
    for (;;) pause();
  }
  for (const std::string& parent : layout->ParentDirectories()) {
    std::string dir = parent + "/999999999-1-1";
    ASSERT_EQ(mkdir(dir.c_str(), 0755), 0) << dir;
    std::ofstream(dir + "/cgroup.procs") << stray;
  }
  auto provider = MakeProvider("linux", Limits{});
  ASSERT_TRUE(provider.ok());
  ASSERT_TRUE((*provider)->Reconcile().ok());
  for (const std::string& parent : layout->ParentDirectories()) {
    struct stat st {};
    EXPECT_NE(stat((parent + "/999999999-1-1").c_str(), &st), 0) << parent;
  }
  int status = 0;
  EXPECT_EQ(waitpid(stray, &status, 0), stray);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
      << "the leftover process was not killed";
}

Request ReadTreeMarker() {
  Request request;
  request.python = PythonPayload{"print(open('/etc/plimsoll-tree').read().strip())"};
  request.timeout_ms = 20'000;
  return request;
}

// Issue 18: a provider given an image directory runs that image, whatever
// PLIMSOLL_IMAGE names, so one daemon can serve several images side by side.
TEST_F(LinuxProviderTest, AnImageDirectoryGivenAtOpenIsTheImageThatRuns) {
  auto real = image::LocateDefaultImage();
  ASSERT_TRUE(real.ok()) << real.error().ToString();
  std::filesystem::path parent =
      real->directory.parent_path() / ("named-image-test-linux-" + std::to_string(getpid()));
  auto image = image::testing::SwappableImage::Make(*real, parent);
  ASSERT_TRUE(image.has_value());
  {
    auto named = Sandbox::Open("linux", Limits{}, {image->directory().string()});
    auto by_default = Sandbox::Open("linux");
    ASSERT_TRUE(named.ok() && by_default.ok());
    EXPECT_EQ(named->Describe().environment, image->identity("A"));
    EXPECT_EQ(by_default->Describe().environment, real->identity);
    Result ran = MustRun(*named, ReadTreeMarker());
    EXPECT_EQ(ran.stdout_bytes, "A\n") << ran.stderr_bytes;
    EXPECT_EQ(ran.environment, image->identity("A"));
    EXPECT_EQ(ran.record.environment, image->identity("A"));
    Result other = MustRun(*by_default, ReadTreeMarker());
    EXPECT_NE(other.exit_code, 0) << "the default image has no tree marker";
    EXPECT_EQ(other.environment, real->identity);
    // A directory that holds no image is a refusal (environment), nothing ran.
    auto missing = Sandbox::Open("linux", Limits{}, {(parent / "nothing-here").string()});
    ASSERT_TRUE(missing.ok()) << "opening is cheap: the image is read at evidence time";
    auto refused = missing->Run(ReadTreeMarker());
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(NotDispatchedReason(refused.error()), NotDispatched::kEnvironment)
        << refused.error().ToString();
  }
  std::error_code ignored;
  std::filesystem::remove_all(parent, ignored);
}

// Issue 13: the image a result names is the image the code ran in. A tree
// swapped in under the image's path (as `plimsoll image build` does) is not
// run before its own smoke test, and never under the old identity (before,
// the next run mounted the new tree and reported the old identity).
TEST_F(LinuxProviderTest, ASwappedImageTreeRunsOnlyUnderItsOwnIdentityAfterItsSmokeTest) {
  auto real = image::LocateDefaultImage();
  ASSERT_TRUE(real.ok()) << real.error().ToString();
  // Beside the real image: hardlinks need one filesystem.
  std::filesystem::path parent =
      real->directory.parent_path() / ("swap-test-linux-" + std::to_string(getpid()));
  auto image = image::testing::SwappableImage::Make(*real, parent);
  ASSERT_TRUE(image.has_value());
  {
    testing::ScopedEnv variable("PLIMSOLL_IMAGE", image->directory().string());
    auto sandbox = Sandbox::Open("linux");
    ASSERT_TRUE(sandbox.ok());
    auto evidence = sandbox->CollectEvidence();
    ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
    EXPECT_EQ(evidence->environment, image->identity("A"));
    uint64_t first_generation = evidence->generation;

    Result before = MustRun(*sandbox, ReadTreeMarker());
    EXPECT_EQ(before.stdout_bytes, "A\n") << before.stderr_bytes;
    EXPECT_EQ(before.environment, image->identity("A"));

    ASSERT_TRUE(image->SwapIn("B"));
    // Until a smoke test confirms B, runs keep the tested tree A.
    Result held = MustRun(*sandbox, ReadTreeMarker());
    EXPECT_EQ(held.stdout_bytes, "A\n") << held.stderr_bytes;
    EXPECT_EQ(held.environment, image->identity("A"));
    EXPECT_TRUE(sandbox->provider().Preflight().ok());  // checks, installs nothing
    EXPECT_EQ(MustRun(*sandbox, ReadTreeMarker()).stdout_bytes, "A\n");

    evidence = sandbox->CollectEvidence();
    ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
    EXPECT_EQ(evidence->environment, image->identity("B"));
    EXPECT_GT(evidence->generation, first_generation);
    Result after = MustRun(*sandbox, ReadTreeMarker());
    EXPECT_EQ(after.stdout_bytes, "B\n") << after.stderr_bytes;
    EXPECT_EQ(after.environment, image->identity("B"));
    EXPECT_EQ(after.record.environment, image->identity("B"));

    // Pinned to B, a swap to C is refused `environment`: nothing runs.
    sandbox->PinEnvironment(image->identity("B"));
    ASSERT_TRUE(image->SwapIn("C"));
    auto refused = sandbox->CollectEvidence();
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(NotDispatchedReason(refused.error()), NotDispatched::kEnvironment);
    auto run = sandbox->Run(ReadTreeMarker());
    ASSERT_FALSE(run.ok());
    EXPECT_EQ(NotDispatchedReason(run.error()), NotDispatched::kEnvironment)
        << run.error().ToString();
  }
  std::error_code ignored;
  std::filesystem::remove_all(parent, ignored);
}

// A changed seccomp policy is a configuration change like a swapped image
// (issue 13): it serves only once its own smoke test passed. Until then
// runs keep the tested policy.
TEST_F(LinuxProviderTest, AChangedSeccompPolicyServesOnlyAfterItsSmokeTest) {
  std::filesystem::path policy = std::filesystem::temp_directory_path() /
                                 ("plimsoll-policy-test-" + std::to_string(getpid()) + ".policy");
  const std::string original(os::BuiltInSeccompPolicyText());
  // The same policy without `uname` among the allowed calls: denied (EPERM).
  std::string denies_uname = original;
  const std::string allowed = " sysinfo uname\n";
  size_t at = denies_uname.find(allowed);
  ASSERT_NE(at, std::string::npos) << "the policy no longer allows uname where this test expects";
  denies_uname.replace(at, allowed.size(), " sysinfo\n");
  auto write = [&](const std::string& text) {
    std::ofstream out(policy, std::ios::binary | std::ios::trunc);
    out << text;
    return static_cast<bool>(out.flush());
  };
  ASSERT_TRUE(write(original));
  Request uname_call;
  uname_call.project = ProjectPayload{{}, {{"uname", "-s"}}, {}};
  uname_call.timeout_ms = 20'000;
  {
    testing::ScopedEnv variable("PLIMSOLL_SECCOMP_POLICY", policy.string());
    auto sandbox = Sandbox::Open("linux");
    ASSERT_TRUE(sandbox.ok());
    auto evidence = sandbox->CollectEvidence();
    ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
    const uint64_t first_generation = evidence->generation;
    Result before = MustRun(*sandbox, uname_call);
    EXPECT_EQ(before.exit_code, 0) << before.stderr_bytes;
    EXPECT_EQ(before.stdout_bytes, "Linux\n");

    ASSERT_TRUE(write(denies_uname));
    EXPECT_TRUE(sandbox->provider().Preflight().ok());  // checks, installs nothing
    Result held = MustRun(*sandbox, uname_call);
    EXPECT_EQ(held.exit_code, 0) << "the untested policy was applied: " << held.stderr_bytes;

    evidence = sandbox->CollectEvidence();
    ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
    EXPECT_GT(evidence->generation, first_generation);
    Result after = MustRun(*sandbox, uname_call);
    EXPECT_NE(after.exit_code, 0) << "uname ran under the new policy: " << after.stdout_bytes;
    EXPECT_NE(after.stderr_bytes.find("Operation not permitted"), std::string::npos)
        << after.stderr_bytes;
  }
  std::filesystem::remove(policy);
}

// ---- sessions (SPEC §9): the kept sandbox of the linux provider ----------------------------

Result MustCell(Session& session, const std::string& language, const std::string& code,
                int64_t timeout_ms = 0) {
  Request request;
  request.timeout_ms = timeout_ms;
  request.cell = CellPayload{language, code};
  auto result = session.Run(request);
  if (!result.ok()) {
    ADD_FAILURE() << result.error().ToString();
    return Result{};
  }
  EXPECT_TRUE(result->cell.has_value());
  return *result;
}

// Host pids of the sandbox's processes whose command line holds `text`.
std::vector<pid_t> SandboxProcessesRunning(const std::string& text) {
  std::vector<pid_t> found;
  DIR* proc = opendir("/proc");
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    std::string path = std::string("/proc/") + entry->d_name;
    struct stat st {};
    if (stat(path.c_str(), &st) != 0 || st.st_uid < 1'500'000'000u ||
        st.st_uid > 1'500'001'000u || !InOwnRunCgroup(path))
      continue;
    std::ifstream file(path + "/cmdline");
    std::string line((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    for (char& c : line) {
      if (c == '\0') c = ' ';
    }
    if (line.find(text) != std::string::npos) found.push_back(std::atoi(entry->d_name));
  }
  closedir(proc);
  return found;
}

TEST_F(LinuxProviderTest, ASessionKeepsBothInterpretersAndItsFilesAndLeavesNothingWhenClosed) {
  int before = QuietSandboxProcesses();
  {
    auto session = SharedSandbox().OpenSession(SessionOptions{});
    ASSERT_TRUE(session.ok()) << session.error().ToString();
    EXPECT_EQ((*session)->Info().isolation, Tier::kContainer);
    Result set = MustCell(**session, "python", "x = 41");
    EXPECT_EQ(set.exit_code, 0) << set.stderr_bytes;
    EXPECT_TRUE(set.cell->interpreter_started);
    Result next = MustCell(**session, "python", "x + 1");
    EXPECT_EQ(next.cell->value, "42") << next.stderr_bytes;
    EXPECT_FALSE(next.cell->interpreter_started);
    Result js = MustCell(**session, "javascript", "var y = 6; console.log('out'); y * 7");
    EXPECT_EQ(js.exit_code, 0) << js.stderr_bytes;
    EXPECT_EQ(js.stdout_bytes, "out\n");
    EXPECT_EQ(js.cell->value, "42");
    EXPECT_EQ(MustCell(**session, "javascript", "y").cell->value, "6");
    EXPECT_EQ((*session)->Info().interpreters, (std::vector<std::string>{"javascript", "python"}));
    // A one-off payload in the session sees what the cells wrote.
    MustCell(**session, "python", "open('note.txt', 'w').write('kept')");
    Request step;
    step.python = PythonPayload{"print(open('note.txt').read())"};
    auto ran = (*session)->Run(step);
    ASSERT_TRUE(ran.ok()) << ran.error().ToString();
    EXPECT_EQ(ran->stdout_bytes, "kept\n") << ran->stderr_bytes;
    EXPECT_GT((*session)->Info().disk_used_bytes, 0);
    (*session)->Close();
  }
  EXPECT_TRUE(NothingLeftBehind(before));
}

TEST_F(LinuxProviderTest, WhatACallLeftRunningIsGoneBeforeItsAnswer) {
  auto session = SharedSandbox().OpenSession(SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.error().ToString();
  const std::string marker = "1000." + std::to_string(getpid());
  Result started = MustCell(**session, "python",
                            "import os, subprocess\n"
                            "os.system('sleep " +
                                marker +
                                " &')\n"
                                "p = subprocess.Popen(['setsid', 'sleep', '" +
                                marker +
                                "'])\n"
                                "import time; time.sleep(0.05)\n"
                                "assert p.poll() is None\n");
  EXPECT_EQ(started.exit_code, 0) << started.stderr_bytes;
  EXPECT_EQ(SandboxProcessesRunning("sleep " + marker), std::vector<pid_t>{});
  // The same after a step of the session (a project), and from inside.
  Request project;
  project.project = ProjectPayload{{}, {{"sh", "-c", "sleep " + marker + " & echo started"}}, {}};
  auto ran = (*session)->Run(project);
  ASSERT_TRUE(ran.ok()) << ran.error().ToString();
  EXPECT_EQ(ran->stdout_bytes, "started\n");
  EXPECT_EQ(SandboxProcessesRunning("sleep " + marker), std::vector<pid_t>{});
  Result inside = MustCell(**session, "python",
                           "import os\n"
                           "[p for p in os.listdir('/proc') if p.isdigit() and b'sleep' in "
                           "open(f'/proc/{p}/cmdline', 'rb').read()]");
  EXPECT_EQ(inside.cell->value, "[]") << inside.stderr_bytes;
  EXPECT_FALSE(inside.cell->interpreter_started);
}

TEST_F(LinuxProviderTest, AnInterpreterKilledFromTheHostIsReplacedAndTheCellSaysSo) {
  auto session = SharedSandbox().OpenSession(SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.error().ToString();
  MustCell(**session, "python", "gone = 1");
  std::vector<pid_t> servers = SandboxProcessesRunning("python3 -I -c");
  ASSERT_EQ(servers.size(), 1u);
  ASSERT_EQ(kill(servers[0], SIGKILL), 0);
  // A kill takes effect asynchronously: wait until it is a zombie (its
  // parent, the agent, reaps it at the next call).
  for (int i = 0; i < 200; ++i) {
    std::ifstream stat("/proc/" + std::to_string(servers[0]) + "/stat");
    std::string line;
    std::getline(stat, line);
    size_t paren = line.rfind(')');
    if (!stat || paren == std::string::npos || line.compare(paren + 2, 1, "Z") == 0) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Result fresh = MustCell(**session, "python", "'gone' in globals()");
  EXPECT_TRUE(fresh.cell->interpreter_started);
  EXPECT_EQ(fresh.cell->value, "False") << fresh.stderr_bytes;
}

TEST_F(LinuxProviderTest, ASessionWhoseInitDiedEndsBoundaryFailedAndRunsNothing) {
  auto session = SharedSandbox().OpenSession(SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.error().ToString();
  MustCell(**session, "javascript", "1");
  std::vector<pid_t> inits = SandboxProcessesRunning("plimsoll-guest --init");
  ASSERT_FALSE(inits.empty());
  for (pid_t pid : inits) kill(pid, SIGKILL);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Request late;
  late.cell = CellPayload{"javascript", "2"};
  auto refused = (*session)->Run(late);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(NotDispatchedReason(refused.error()).has_value()) << refused.error().ToString();
  EXPECT_EQ((*session)->Info().ended, SessionEndReason::kBoundaryFailed);
}

// The warm pool (warm_sandbox.h, SANDBOX_LINUX_POOL_SIZE): sandboxes built
// ahead, each used for one run and torn down after it.

// A linux sandbox whose pool holds `size`, its evidence collected.
std::optional<Sandbox> WithPool(const std::string& size) {
  testing::ScopedEnv pool("SANDBOX_LINUX_POOL_SIZE", size);
  auto sandbox = Sandbox::Open("linux");
  if (!sandbox.ok()) {
    ADD_FAILURE() << sandbox.error().ToString();
    return std::nullopt;
  }
  auto evidence = sandbox->CollectEvidence();
  if (!evidence.ok()) {
    ADD_FAILURE() << evidence.error().ToString();
    return std::nullopt;
  }
  return std::move(*sandbox);
}

PoolState PoolOf(const Sandbox& sandbox) {
  std::optional<PoolState> pool = sandbox.Describe().pool;
  EXPECT_TRUE(pool.has_value()) << "the linux provider reports no pool";
  return pool.value_or(PoolState{});
}

// Waits (at most 10 s) until the pool has `ready` sandboxes waiting.
bool AwaitPool(const Sandbox& sandbox, size_t ready) {
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (PoolOf(sandbox).ready < ready) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

TEST_F(LinuxProviderTest, APooledRunAnswersAsAColdOneAndNeverSharesItsSandbox) {
  auto pooled = WithPool("1");
  ASSERT_TRUE(pooled.has_value());
  // Snippets with the default timeout run in the qjs the pooled agent
  // started ahead (pool_prestart); one with its own timeout discards it.
  std::vector<Request> snippets(3);
  snippets[0].javascript = JavascriptPayload{"console.log(6*7)"};
  snippets[1].javascript = JavascriptPayload{"console.error('e'); throw new Error('boom')"};
  snippets[2].javascript = JavascriptPayload{"console.log(1)"};
  snippets[2].timeout_ms = 3000;
  for (const Request& js : snippets) {
    ASSERT_TRUE(AwaitPool(*pooled, 1));
    Result warm = MustRun(*pooled, js);
    Result cold = MustRun(js);  // the shared sandbox has no pool
    EXPECT_EQ(warm.stdout_bytes, cold.stdout_bytes) << js.javascript->code;
    EXPECT_EQ(warm.stderr_bytes, cold.stderr_bytes) << js.javascript->code;
    EXPECT_EQ(warm.exit_code, cold.exit_code) << js.javascript->code;
    EXPECT_EQ(warm.timed_out, cold.timed_out);
    EXPECT_EQ(warm.isolation, cold.isolation);
    EXPECT_EQ(warm.environment, cold.environment);
    EXPECT_EQ(warm.record.environment, cold.record.environment);
  }
  Result answer = MustRun(*pooled, snippets[0]);
  EXPECT_EQ(answer.stdout_bytes, "42\n") << answer.stderr_bytes;
  EXPECT_NE(MustRun(*pooled, snippets[1]).stderr_bytes.find("boom"), std::string::npos);
  EXPECT_EQ(PoolOf(*pooled).handed_out + PoolOf(*pooled).found_empty, 5u);
  EXPECT_GE(PoolOf(*pooled).handed_out, 3u);

  // Each run finds fresh /tmp, /work and pid namespace: nothing of the last.
  Request probe;
  probe.python = PythonPayload{
      "import os\n"
      "print(os.path.exists('/tmp/mark'), os.path.exists('/work/mark'),\n"
      "      os.readlink('/proc/self/ns/pid'))\n"
      "open('/tmp/mark', 'w').write('x'); open('/work/mark', 'w').write('x')"};
  probe.timeout_ms = 20'000;
  std::set<std::string> namespaces;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(AwaitPool(*pooled, 1));
    Result run = MustRun(*pooled, probe);
    EXPECT_EQ(run.exit_code, 0) << run.stderr_bytes;
    EXPECT_EQ(run.stdout_bytes.rfind("False False pid:[", 0), 0u) << run.stdout_bytes;
    namespaces.insert(run.stdout_bytes);
  }
  EXPECT_EQ(namespaces.size(), 2u) << "two runs shared a pid namespace";
  EXPECT_GE(PoolOf(*pooled).handed_out, 5u);
}

// Issue 23 point 5: a pooled sandbox serves only the generation it was built
// under. After a swapped tree's smoke test the pool's old sandboxes are
// destroyed, never used; until then they serve the old, tested tree.
TEST_F(LinuxProviderTest, APooledSandboxServesOnlyTheGenerationItWasBuiltUnder) {
  auto real = image::LocateDefaultImage();
  ASSERT_TRUE(real.ok()) << real.error().ToString();
  std::filesystem::path parent =
      real->directory.parent_path() / ("pool-swap-test-linux-" + std::to_string(getpid()));
  auto image = image::testing::SwappableImage::Make(*real, parent);
  ASSERT_TRUE(image.has_value());
  {
    testing::ScopedEnv variable("PLIMSOLL_IMAGE", image->directory().string());
    auto sandbox = WithPool("2");
    ASSERT_TRUE(sandbox.has_value());
    ASSERT_TRUE(AwaitPool(*sandbox, 2));
    ASSERT_TRUE(image->SwapIn("B"));
    // Built under A and A still serves: A, and from the pool.
    Result held = MustRun(*sandbox, ReadTreeMarker());
    EXPECT_EQ(held.stdout_bytes, "A\n") << held.stderr_bytes;
    EXPECT_EQ(held.environment, image->identity("A"));
    EXPECT_EQ(PoolOf(*sandbox).handed_out, 1u);
    ASSERT_TRUE(AwaitPool(*sandbox, 2));  // refilled, still with A

    auto evidence = sandbox->CollectEvidence();
    ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
    EXPECT_EQ(evidence->environment, image->identity("B"));
    // Whatever the pool holds now (nothing yet, or B's), a run sees B.
    for (int i = 0; i < 3; ++i) {
      Result after = MustRun(*sandbox, ReadTreeMarker());
      EXPECT_EQ(after.stdout_bytes, "B\n") << after.stderr_bytes;
      EXPECT_EQ(after.environment, image->identity("B"));
      EXPECT_EQ(after.record.environment, image->identity("B"));
      if (i == 1) ASSERT_TRUE(AwaitPool(*sandbox, 2));  // the last one from B's pool
    }
    PoolState pool = PoolOf(*sandbox);
    EXPECT_GE(pool.handed_out, 2u);
    EXPECT_EQ(pool.handed_out + pool.found_empty, 4u);
  }
  std::error_code ignored;
  std::filesystem::remove_all(parent, ignored);
}

TEST_F(LinuxProviderTest, APoolOffOrEmptyBuildsColdAndAClosedPoolLeavesNothing) {
  int before = QuietSandboxProcesses();
  Request js;
  js.javascript = JavascriptPayload{"console.log(1)"};
  {
    auto off = WithPool("0");
    ASSERT_TRUE(off.has_value());
    EXPECT_EQ(PoolOf(*off).size, 0u);
    EXPECT_EQ(MustRun(*off, js).stdout_bytes, "1\n");
    EXPECT_EQ(PoolOf(*off).handed_out, 0u);
  }
  {
    // Right after the evidence the pool is still building its first
    // sandbox: the first runs find it empty and build their own.
    auto on = WithPool("1");
    ASSERT_TRUE(on.has_value());
    for (int i = 0; i < 3; ++i) EXPECT_EQ(MustRun(*on, js).stdout_bytes, "1\n");
    PoolState pool = PoolOf(*on);
    EXPECT_GE(pool.found_empty, 1u);
    EXPECT_EQ(pool.handed_out + pool.found_empty, 3u);
    ASSERT_TRUE(AwaitPool(*on, 1));
  }  // closing destroys the idle sandbox and finishes every teardown
  EXPECT_EQ(OwnRunCgroups(), std::vector<std::string>{});
  EXPECT_EQ(SandboxProcesses(), before);

  testing::ScopedEnv invalid("SANDBOX_LINUX_POOL_SIZE", "lots");
  auto refused = Sandbox::Open("linux");
  ASSERT_TRUE(refused.ok());
  auto evidence = refused->CollectEvidence();
  ASSERT_FALSE(evidence.ok());
  EXPECT_EQ(NotDispatchedReason(evidence.error()), NotDispatched::kEnvironment)
      << evidence.error().ToString();
}

}  // namespace
}  // namespace plimsoll
