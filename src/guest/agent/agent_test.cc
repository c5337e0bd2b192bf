// Runs the real plimsoll-guest binary as a child: the job goes in over a
// socketpair on descriptor 3, the sealed report comes back, and the test
// checks it (and the work directory, and that nothing was left running).
//
// Unprivileged runs use --no-setuid. As root the same jobs also run with the
// setuid path (uid/gid 65534), and one test runs the agent as pid 1 of a
// fresh pid namespace (unshare), where a step may `kill -9 -1`.
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gtest/gtest.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "guest/protocol.h"
#include "guest/report_bounds.h"

namespace plimsoll::guest {
namespace {

using Clock = std::chrono::steady_clock;

const std::string kKey(kReportKeyBytes, '\x5a');

class TempDir {
 public:
  TempDir() {
    char pattern[] = "/tmp/plimsoll-guest-test-XXXXXX";
    char* made = mkdtemp(pattern);
    EXPECT_NE(made, nullptr);
    path_ = made ? made : "";
  }
  ~TempDir() {
    if (!path_.empty()) {
      nftw(
          path_.c_str(),
          [](const char* path, const struct stat*, int, FTW*) { return remove(path); }, 16,
          FTW_DEPTH | FTW_PHYS);
    }
  }
  const std::string& path() const { return path_; }
  std::string Read(const std::string& name) const {
    std::ifstream in(path_ + "/" + name, std::ios::binary);
    std::stringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
  }
  bool Exists(const std::string& name) const {
    struct stat info {};
    return lstat((path_ + "/" + name).c_str(), &info) == 0;
  }

 private:
  std::string path_;
};

bool IsRoot() {
  return geteuid() == 0;
}

// How to start the agent.
struct Mode {
  bool setuid = false;         // else --no-setuid
  bool pid_namespace = false;  // run under unshare --pid --fork --mount-proc
  // Like the linux sandbox: a fresh pid namespace whose /proc is mounted
  // hidepid=invisible and an agent without CAP_SYS_PTRACE, so the agent
  // cannot see the steps' processes in /proc. With `init` the agent runs as
  // `--init` (pid 1 the init, pid 2 the agent); without, a shell is pid 1 and
  // the agent, pid 2, does not own the namespace.
  bool hidden_proc = false;
  bool init = false;
  // --displays: "" (none) unless a test looks at displays.
  std::string displays = "";
  // --host-call-socket, and what answers the relay's calls (a granted job).
  std::string host_call_socket = "";
  GrantedCalls* calls = nullptr;
  // More arguments for the agent (e.g. --prestart-job).
  std::vector<std::string> extra_args = {};
};

// The shell command that mounts the hidden /proc and starts "$@" without
// CAP_SYS_PTRACE (as pid 1 with exec, else as pid 2).
std::string HiddenProcCommand(bool exec_as_pid1) {
  std::string mount = "mount -t proc -o hidepid=invisible proc /proc && ";
  std::string run = "/usr/bin/setpriv --bounding-set -sys_ptrace \"$@\"";
  return exec_as_pid1 ? mount + "exec " + run : mount + run + "; exit $?";
}

struct AgentRun {
  Expected<Report> report = Failure(ErrorCode::kInternal, "not run");
  int wait_status = -1;
  std::chrono::milliseconds elapsed{0};
};

Job BaseJob() {
  Job job;
  job.timeout_ms = 10'000;
  job.output_cap_bytes = 64 << 10;
  job.max_artifact_bytes = 1 << 20;
  job.nofile = 64;
  job.fsize_bytes = 8 << 20;
  job.report_key = kKey;
  return job;
}

AgentRun RunAgent(const Job& job, const TempDir& work, Mode mode = {}) {
  AgentRun run;
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    ADD_FAILURE() << "socketpair";
    return run;
  }
  std::vector<std::string> args;
  if (mode.pid_namespace) args = {"/usr/bin/unshare", "--pid", "--fork", "--mount-proc"};
  if (mode.hidden_proc) {
    args = {"/usr/bin/unshare",
            "--pid",
            "--fork",
            "--mount",
            "--propagation",
            "private",
            "/bin/sh",
            "-c",
            HiddenProcCommand(mode.init),
            "sh"};
  }
  args.push_back(PLIMSOLL_GUEST_BINARY);
  if (mode.init) args.push_back("--init");
  args.insert(args.end(), {"--channel", "3", "--work", work.path(), "--displays", mode.displays});
  if (!mode.host_call_socket.empty()) {
    args.insert(args.end(), {"--host-call-socket", mode.host_call_socket});
  }
  if (mode.setuid) {
    args.insert(args.end(), {"--uid", "65534", "--gid", "65534"});
  } else {
    args.push_back("--no-setuid");
  }
  args.insert(args.end(), mode.extra_args.begin(), mode.extra_args.end());
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);

  auto started = Clock::now();
  pid_t pid = fork();
  if (pid == 0) {
    if (fds[1] == 3) {
      fcntl(3, F_SETFD, 0);
    } else {
      dup2(fds[1], 3);
    }
    execv(argv[0], argv.data());
    _exit(99);
  }
  close(fds[1]);
  auto deadline = Clock::now() + std::chrono::seconds(20);
  auto sent = WriteFrame(fds[0], EncodeJob(job), deadline);
  EXPECT_TRUE(sent.ok());
  auto frame = ReadSealedFrame(fds[0], job.report_key, deadline, mode.calls);
  run.report = frame.ok() ? DecodeReport(*frame) : Expected<Report>(frame.error());
  close(fds[0]);
  waitpid(pid, &run.wait_status, 0);
  run.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
  return run;
}

// True when `pid` no longer exists (or is someone else's zombie we cannot
// see). Polls briefly: a killed process disappears asynchronously.
bool Gone(pid_t pid) {
  for (int i = 0; i < 200; ++i) {
    if (kill(pid, 0) != 0 && errno == ESRCH) return true;
    usleep(10'000);
  }
  return false;
}

pid_t PidFrom(const TempDir& work, const std::string& name) {
  return static_cast<pid_t>(std::atoi(work.Read(name).c_str()));
}

std::vector<Mode> Modes() {
  std::vector<Mode> modes = {{false, false}};
  if (IsRoot()) modes.push_back({true, false});
  return modes;
}

TEST(GuestAgent, PythonSnippet) {
  for (Mode mode : Modes()) {
    TempDir work;
    Request request;
    request.timeout_ms = 10'000;
    request.python = PythonPayload{"import os\nprint(6*7)\nprint(os.getuid())\n"};
    auto job = JobFromRequest(request, Limits{}, kKey);
    ASSERT_TRUE(job.ok());
    AgentRun run = RunAgent(*job, work, mode);
    ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
    EXPECT_TRUE(WIFEXITED(run.wait_status) && WEXITSTATUS(run.wait_status) == 0);
    Result result;
    FillResult(request, *run.report, &result);
    EXPECT_EQ(result.exit_code, 0) << result.stderr_bytes;
    std::string uid = mode.setuid ? "65534" : std::to_string(getuid());
    EXPECT_EQ(result.stdout_bytes, "42\n" + uid + "\n");
    EXPECT_FALSE(result.timed_out);
    if (mode.setuid) {
      struct stat info {};
      ASSERT_EQ(stat((work.path() + "/main.py").c_str(), &info), 0);
      EXPECT_EQ(info.st_uid, 65534u);
    }
  }
}

TEST(GuestAgent, ProjectStepsRunInOrderAndAFailingStepStopsTheRest) {
  TempDir work;
  Job job = BaseJob();
  job.files = {{"a/b/c.txt", "content\n"}, {"top.txt", "top"}};
  job.steps = {
      {"cat", "a/b/c.txt"}, {"sh", "-c", "echo out; echo err >&2; exit 3"}, {"touch", "never"}};
  AgentRun run = RunAgent(job, work);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  const Report& report = *run.report;
  EXPECT_EQ(report.outcome, ProjectOutcome::kCompleted);
  ASSERT_EQ(report.steps.size(), 2u);
  EXPECT_EQ(report.steps[0].stdout_bytes, "content\n");
  EXPECT_EQ(report.steps[0].exit_code, 0);
  EXPECT_EQ(report.steps[1].command, job.steps[1]);
  EXPECT_EQ(report.steps[1].exit_code, 3);
  EXPECT_EQ(report.steps[1].stdout_bytes, "out\n");
  EXPECT_EQ(report.steps[1].stderr_bytes, "err\n");
  EXPECT_FALSE(work.Exists("never"));
}

// A filter that answers mkdir and mkdirat with EPERM and allows the rest
// (the microvm provider sends our whole policy this way).
std::string DenyMkdirFilter() {
  std::vector<sock_filter> filter = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mkdir, 2, 0),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mkdirat, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
  };
  return std::string(reinterpret_cast<const char*>(filter.data()),
                     filter.size() * sizeof(sock_filter));
}

TEST(GuestAgent, TheJobsSeccompFilterHoldsEveryStepAndNotTheAgent) {
  TempDir work;
  Job job = BaseJob();
  job.seccomp_filter = DenyMkdirFilter();
  // The agent itself makes the file's directory (a/): it is not filtered.
  job.files = {{"a/file.txt", "x"}};
  job.steps = {{"sh", "-c", "grep Seccomp: /proc/self/status; mkdir made || echo refused"},
               {"sh", "-c", "mkdir again 2>&1 | grep -c 'not permitted'"}};
  AgentRun run = RunAgent(job, work);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  ASSERT_EQ(run.report->steps.size(), 2u) << run.report->detail;
  EXPECT_EQ(run.report->steps[0].stdout_bytes, "Seccomp:\t2\nrefused\n")
      << run.report->steps[0].stderr_bytes;
  EXPECT_EQ(run.report->steps[1].stdout_bytes, "1\n");
  EXPECT_TRUE(work.Exists("a/file.txt"));
  EXPECT_FALSE(work.Exists("made"));
  EXPECT_FALSE(work.Exists("again"));
}

TEST(GuestAgent, ASeccompFilterTheKernelRefusesIsASetupFailure) {
  TempDir work;
  Job job = BaseJob();
  // A jump past the end: the kernel's checker refuses the program (EINVAL).
  sock_filter bad[] = {BPF_JUMP(BPF_JMP | BPF_JA, 5, 0, 0)};
  job.seccomp_filter = std::string(reinterpret_cast<const char*>(bad), sizeof bad);
  job.steps = {{"true"}};
  AgentRun run = RunAgent(job, work);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  EXPECT_EQ(run.report->outcome, ProjectOutcome::kSetupFailed);
  ASSERT_EQ(run.report->steps.size(), 1u);
  EXPECT_EQ(run.report->steps[0].exit_code, kExitCannotExecute);
  EXPECT_NE(run.report->steps[0].stderr_bytes.find("seccomp"), std::string::npos)
      << run.report->steps[0].stderr_bytes;
}

TEST(GuestAgent, CleanEnvironmentWorkDirectoryAndLimits) {
  TempDir work;
  Job job = BaseJob();
  job.environment = {"EXTRA=1", "LANG=C"};
  job.steps = {{"sh", "-c", "env | sort; pwd; ulimit -n; ulimit -c; ulimit -f"}};
  job.fsize_bytes = 1 << 20;
  AgentRun run = RunAgent(job, work);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  ASSERT_EQ(run.report->steps.size(), 1u);
  std::string out = run.report->steps[0].stdout_bytes;
  // sh adds PWD (and may add SHLVL/_): only check what must and must not be there.
  EXPECT_NE(out.find("PATH=/usr/local/bin:/usr/bin:/bin\n"), std::string::npos) << out;
  EXPECT_NE(out.find("HOME=" + work.path() + "\n"), std::string::npos) << out;
  EXPECT_NE(out.find("LANG=C\n"), std::string::npos) << out;
  EXPECT_NE(out.find("EXTRA=1\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("PLIMSOLL"), std::string::npos) << out;
  EXPECT_EQ(out.find("GTEST"), std::string::npos) << out;
  EXPECT_NE(out.find(work.path() + "\n64\n0\n" + std::to_string((1 << 20) / 512) + "\n"),
            std::string::npos)
      << out;
}

TEST(GuestAgent, OnlyStandardDescriptorsReachTheStep) {
  TempDir work;
  Job job = BaseJob();
  job.steps = {{"python3", "-c",
                "import os\n"
                "for fd in range(3, 64):\n"
                "    try:\n"
                "        os.fstat(fd); print('open', fd)\n"
                "    except OSError: pass\n"
                "print(os.read(0, 10) == b'')\n"}};
  AgentRun run = RunAgent(job, work);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  EXPECT_EQ(run.report->steps[0].stdout_bytes, "True\n") << run.report->steps[0].stderr_bytes;
}

TEST(GuestAgent, AProgramThatCannotStartIsASetupFailure) {
  TempDir work;
  Job job = BaseJob();
  job.files = {{"script.sh", "#!/bin/sh\necho hi\n"}};  // 0644: not executable
  job.steps = {{"no-such-program-plimsoll"}};
  AgentRun run = RunAgent(job, work);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  EXPECT_EQ(run.report->outcome, ProjectOutcome::kSetupFailed);
  ASSERT_EQ(run.report->steps.size(), 1u);
  EXPECT_EQ(run.report->steps[0].exit_code, kExitNotFound);
  EXPECT_NE(run.report->steps[0].stderr_bytes.find("no such program"), std::string::npos);
  EXPECT_NE(run.report->detail.find("Step 1 could not start"), std::string::npos);

  job.steps = {{"./script.sh"}};
  run = RunAgent(job, TempDir());
  ASSERT_TRUE(run.report.ok());
  EXPECT_EQ(run.report->steps[0].exit_code, kExitCannotExecute);
  EXPECT_EQ(run.report->outcome, ProjectOutcome::kSetupFailed);
}

TEST(GuestAgent, DeadlineKillsTheStepAndEverythingItStarted) {
  TempDir work;
  Job job = BaseJob();
  job.timeout_ms = 600;
  job.steps = {{"sh", "-c",
                "sleep 1000 & echo $! > child.pid; "
                "setsid sh -c 'sleep 1000 & echo $! > daemon.pid; wait' & "
                "sleep 1000"},
               {"touch", "never"}};
  AgentRun run = RunAgent(job, work);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  EXPECT_EQ(run.report->outcome, ProjectOutcome::kTimedOut);
  ASSERT_EQ(run.report->steps.size(), 1u);
  EXPECT_TRUE(run.report->steps[0].timed_out);
  EXPECT_EQ(run.report->steps[0].exit_code, kExitTimedOut);
  EXPECT_LT(run.elapsed, std::chrono::seconds(5));
  EXPECT_FALSE(work.Exists("never"));
  ASSERT_TRUE(work.Exists("child.pid") && work.Exists("daemon.pid"));
  EXPECT_TRUE(Gone(PidFrom(work, "child.pid")));
  EXPECT_TRUE(Gone(PidFrom(work, "daemon.pid")));
}

// The provider crashed mid-run (a daemon killed with -9): its end of the
// channel closes. Nobody will read the report, so the agent ends the job at
// once (its lifeline, lifeline.h) rather than at the job's 30 s deadline,
// and what the step started dies with it.
TEST(GuestAgent, AProviderThatHangsUpMidRunEndsTheJobAtOnce) {
  TempDir work;
  Job job = BaseJob();
  job.timeout_ms = 30'000;
  job.steps = {{"sh", "-c", "sleep 1000 & echo $! > child.pid; wait"}};
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 3);
    execl(PLIMSOLL_GUEST_BINARY, PLIMSOLL_GUEST_BINARY, "--channel", "3", "--work",
          work.path().c_str(), "--displays", "", "--no-setuid", static_cast<char*>(nullptr));
    _exit(99);
  }
  close(fds[1]);
  ASSERT_TRUE(WriteFrame(fds[0], EncodeJob(job), Clock::now() + std::chrono::seconds(10)).ok());
  for (int i = 0; i < 500 && !work.Exists("child.pid"); ++i) usleep(10'000);
  ASSERT_TRUE(work.Exists("child.pid")) << "the step did not start";
  usleep(50'000);  // the pid is written before echo returns: let it land
  pid_t child = PidFrom(work, "child.pid");
  auto hung_up = Clock::now();
  close(fds[0]);
  int status = 0;
  pid_t reaped = 0;
  while ((reaped = waitpid(pid, &status, WNOHANG)) == 0 &&
         Clock::now() - hung_up < std::chrono::seconds(10)) {
    usleep(10'000);
  }
  if (reaped == 0) {
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    FAIL() << "the agent was still running the job 10 s after the provider hung up";
  }
  EXPECT_LT(Clock::now() - hung_up, std::chrono::seconds(3));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) != 0) << "status " << status;
  EXPECT_TRUE(Gone(child)) << "the step's child outlived the agent";
}

// --await-hangup (the microvm init's): after the report the agent stays
// until the host hangs up, so a VM's reboot cannot cut a report still
// queued in its port; the host hanging up ends it at once.
TEST(GuestAgent, WithAwaitHangupTheAgentExitsOnlyOnceTheHostHasHungUp) {
  TempDir work;
  Job job = BaseJob();
  job.steps = {{"sh", "-c", "echo done"}};
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 3);
    execl(PLIMSOLL_GUEST_BINARY, PLIMSOLL_GUEST_BINARY, "--channel", "3", "--work",
          work.path().c_str(), "--displays", "", "--no-setuid", "--await-hangup",
          static_cast<char*>(nullptr));
    _exit(99);
  }
  close(fds[1]);
  auto deadline = Clock::now() + std::chrono::seconds(10);
  ASSERT_TRUE(WriteFrame(fds[0], EncodeJob(job), deadline).ok());
  auto frame = ReadSealedFrame(fds[0], job.report_key, deadline);
  ASSERT_TRUE(frame.ok()) << frame.error().ToString();
  usleep(300'000);
  int status = 0;
  EXPECT_EQ(waitpid(pid, &status, WNOHANG), 0) << "the agent exited before the host hung up";
  auto hung_up = Clock::now();
  close(fds[0]);
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_LT(Clock::now() - hung_up, std::chrono::seconds(2));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
}

TEST(GuestAgent, ADaemonLeftByAFinishedStepIsKilledAndDoesNotHoldTheRun) {
  TempDir work;
  Job job = BaseJob();
  // The daemon keeps stdout open; the step itself exits at once.
  job.steps = {{"sh", "-c", "(setsid sleep 1000 & echo $! > daemon.pid); echo started"},
               {"sh", "-c", "echo second"}};
  AgentRun run = RunAgent(job, work);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  EXPECT_EQ(run.report->outcome, ProjectOutcome::kCompleted);
  ASSERT_EQ(run.report->steps.size(), 2u);
  EXPECT_EQ(run.report->steps[0].stdout_bytes, "started\n");
  EXPECT_EQ(run.report->steps[1].stdout_bytes, "second\n");
  EXPECT_LT(run.elapsed, std::chrono::seconds(5));
  EXPECT_TRUE(Gone(PidFrom(work, "daemon.pid")));
}

TEST(GuestAgent, OutputIsCappedAndFlaggedAndAFloodDoesNotBlock) {
  TempDir work;
  Job job = BaseJob();
  job.output_cap_bytes = 1000;
  job.steps = {{"sh", "-c", "head -c 30000000 /dev/zero; printf eeeee >&2"},
               {"sh", "-c", "exec >&-; sleep 0.1; echo closed-early >&2"}};
  AgentRun run = RunAgent(job, work);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  ASSERT_EQ(run.report->steps.size(), 2u);
  const StepResult& flood = run.report->steps[0];
  EXPECT_EQ(flood.exit_code, 0);
  EXPECT_EQ(flood.stdout_bytes, std::string(1000, '\0'));
  EXPECT_TRUE(flood.stdout_truncated);
  EXPECT_EQ(flood.stderr_bytes, "eeeee");
  EXPECT_FALSE(flood.stderr_truncated);
  EXPECT_EQ(run.report->steps[1].stderr_bytes, "closed-early\n");
  EXPECT_EQ(run.report->steps[1].exit_code, 0);
}

TEST(GuestAgent, AHugeFileStopsAtTheSizeLimit) {
  TempDir work;
  Job job = BaseJob();
  job.fsize_bytes = 1 << 20;
  job.steps = {{"sh", "-c", "head -c 5000000 /dev/zero > big.bin"}};
  AgentRun run = RunAgent(job, work);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  EXPECT_NE(run.report->steps[0].exit_code, 0);
  struct stat info {};
  ASSERT_EQ(stat((work.path() + "/big.bin").c_str(), &info), 0);
  EXPECT_LE(info.st_size, 1 << 20);
}

TEST(GuestAgent, ArtifactsAreRegularFilesReachedWithoutSymlinks) {
  TempDir work;
  Job job = BaseJob();
  job.max_artifact_bytes = 100;
  job.steps = {{"sh", "-c",
                "echo hello > result.txt; ln -s /etc/passwd link.txt; ln -s /etc etc; "
                "mkdir dir; mkfifo fifo; head -c 200 /dev/zero > big.bin; echo late > late.txt"}};
  job.artifacts = {"result.txt", "missing.txt", "link.txt", "etc/passwd",
                   "dir",        "fifo",        "big.bin",  "late.txt"};
  AgentRun run = RunAgent(job, work);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  const auto& artifacts = run.report->artifacts;
  ASSERT_EQ(artifacts.size(), 3u) << run.report->detail;
  EXPECT_EQ(artifacts[0], (Artifact{"result.txt", "hello\n", false}));
  EXPECT_EQ(artifacts[1].path, "big.bin");
  EXPECT_EQ(artifacts[1].content, std::string(94, '\0'));
  EXPECT_TRUE(artifacts[1].truncated);
  EXPECT_EQ(artifacts[2], (Artifact{"late.txt", "", true}));
  for (const char* name : {"missing.txt", "link.txt", "etc/passwd", "dir", "fifo"}) {
    EXPECT_NE(run.report->detail.find("\"" + std::string(name) + "\" was not brought back"),
              std::string::npos)
        << name << "\n"
        << run.report->detail;
  }
  EXPECT_EQ(run.report->detail.find("root:"), std::string::npos);
}

TEST(GuestAgent, FilesAreNotWrittenThroughPlantedSymlinks) {
  // Two files where the second's directory is the first file: refused, and
  // nothing runs.
  TempDir work;
  Job job = BaseJob();
  job.files = {{"a", "x"}, {"a/b", "y"}};
  job.steps = {{"touch", "ran"}};
  AgentRun run = RunAgent(job, work);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  EXPECT_EQ(run.report->outcome, ProjectOutcome::kSetupFailed);
  EXPECT_TRUE(run.report->steps.empty());
  EXPECT_NE(run.report->detail.find("\"a/b\" cannot be written"), std::string::npos);
  EXPECT_FALSE(work.Exists("ran"));

  // A symlink already in the work directory is not followed.
  TempDir planted;
  ASSERT_EQ(symlink("/tmp", (planted.path() + "/link").c_str()), 0);
  job.files = {{"link/escaped.txt", "x"}};
  run = RunAgent(job, planted);
  ASSERT_TRUE(run.report.ok());
  EXPECT_EQ(run.report->outcome, ProjectOutcome::kSetupFailed);
  EXPECT_NE(access("/tmp/escaped.txt", F_OK), 0);
}

TEST(GuestAgent, OutputThatLooksLikeAReportCannotReachTheChannel) {
  TempDir work;
  // A perfectly framed and sealed report -- except that the step cannot know
  // the key, so it seals with another; and fd 3 is closed for it anyway.
  Report fake;
  fake.outcome = ProjectOutcome::kCompleted;
  fake.steps.push_back(StepResult{{"forged"}, 0, false, "forged", "", false, false, 0});
  std::string fake_bytes = EncodeReport(fake);
  std::string fake_key(kReportKeyBytes, 'f');
  std::string fake_frames;
  for (const std::string& part : {fake_bytes, Seal(fake_key, fake_bytes)}) {
    uint32_t size = static_cast<uint32_t>(part.size());
    fake_frames += std::string{static_cast<char>(size >> 24), static_cast<char>(size >> 16),
                               static_cast<char>(size >> 8), static_cast<char>(size)};
    fake_frames += part;
  }
  Job job = BaseJob();
  job.files = {{"fake.bin", fake_frames}};
  job.steps = {{"sh", "-c", "cat fake.bin; cat fake.bin >&3; cat fake.bin >&2; exit 0"}};
  AgentRun run = RunAgent(job, work);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  ASSERT_EQ(run.report->steps.size(), 1u);
  EXPECT_EQ(run.report->steps[0].command, job.steps[0]);
  EXPECT_EQ(run.report->steps[0].stdout_bytes, fake_frames);
  EXPECT_NE(run.report->steps[0].stderr_bytes.find("3"), std::string::npos);  // "Bad fd 3"
}

// A fake agent: reads the job, then writes `answer` raw on the channel.
Expected<Report> AnswerFromFakeAgent(const std::string& answer) {
  int fds[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    auto job = ReadFrame(fds[1], Clock::now() + std::chrono::seconds(5));
    ssize_t ignored = write(fds[1], answer.data(), answer.size());
    (void)ignored;
    _exit(job.ok() ? 0 : 1);
  }
  close(fds[1]);
  auto deadline = Clock::now() + std::chrono::seconds(5);
  EXPECT_TRUE(WriteFrame(fds[0], EncodeJob(BaseJob()), deadline).ok());
  auto report = ReadSealedReport(fds[0], kKey, deadline);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return report;
}

std::string Frame(const std::string& bytes) {
  auto size = static_cast<uint32_t>(bytes.size());
  return std::string{static_cast<char>(size >> 24), static_cast<char>(size >> 16),
                     static_cast<char>(size >> 8), static_cast<char>(size)} +
         bytes;
}

TEST(GuestAgent, AForgedReportFromAFakeAgentIsRefused) {
  Report report;
  report.steps.push_back(StepResult{{"x"}, 0, false, "fine", "", false, false, 1});
  std::string bytes = EncodeReport(report);
  const std::string answers[] = {
      "garbage that is not a frame at all",
      Frame("{\"not\": \"a report\"}") + Frame(Seal(kKey, "something else")),
      Frame(bytes) + Frame(Seal(std::string(kReportKeyBytes, 'g'), bytes)),
      Frame(bytes),
      std::string("\xff\xff\xff\xff", 4),
  };
  for (const auto& answer : answers) {
    auto read = AnswerFromFakeAgent(answer);
    EXPECT_FALSE(read.ok()) << answer;
  }
  // The control: the right key is accepted.
  EXPECT_TRUE(AnswerFromFakeAgent(Frame(bytes) + Frame(Seal(kKey, bytes))).ok());
}

TEST(GuestAgent, AsPidOneOfAPidNamespaceAStepCannotKillTheAgent) {
  if (!IsRoot()) GTEST_SKIP() << "needs root for a pid namespace and the setuid path";
  if (access("/usr/bin/unshare", X_OK) != 0) GTEST_SKIP() << "no /usr/bin/unshare";
  TempDir work;
  Job job = BaseJob();
  job.timeout_ms = 5000;
  job.steps = {{"sh", "-c", "(setsid sleep 1000 &); echo $$; id -u; kill -9 -1; echo survived"},
               {"sh", "-c", "echo next"}};
  AgentRun run = RunAgent(job, work, Mode{true, true});
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  // kill -1 (which spares the caller) reached every other process of the
  // guest uid in the namespace, but not the root agent: its report came
  // back and it went on to the next step.
  ASSERT_EQ(run.report->steps.size(), 2u) << run.report->detail;
  EXPECT_EQ(run.report->steps[0].exit_code, 0);
  EXPECT_NE(run.report->steps[0].stdout_bytes.find("65534\nsurvived\n"), std::string::npos)
      << run.report->steps[0].stdout_bytes;
  EXPECT_EQ(run.report->steps[1].stdout_bytes, "next\n");
  EXPECT_LT(run.elapsed, std::chrono::seconds(5));
}

bool CanHideProc() {
  return IsRoot() && access("/usr/bin/unshare", X_OK) == 0 && access("/usr/bin/setpriv", X_OK) == 0;
}

// A step leaves a setsid orphan that appends to orphan.log every 20 ms; the
// next step says whether the log still grows.
Job OrphanLoggerJob() {
  Job job = BaseJob();
  job.timeout_ms = 5000;
  job.steps = {
      {"sh", "-c",
       "setsid sh -c 'while :; do echo x >> orphan.log; sleep 0.02; done' </dev/null >/dev/null "
       "2>&1 & sleep 0.1; echo started"},
      {"sh", "-c",
       "a=$(wc -c < orphan.log); sleep 0.3; b=$(wc -c < orphan.log); "
       "if [ \"$a\" = \"$b\" ]; then echo orphan gone; else echo orphan still writing; fi"}};
  return job;
}

TEST(GuestAgent, UnderInitTheAgentSweepsProcessesItCannotSeeInProc) {
  if (!CanHideProc()) GTEST_SKIP() << "needs root, /usr/bin/unshare and /usr/bin/setpriv";
  TempDir work;
  AgentRun run = RunAgent(OrphanLoggerJob(), work, Mode{true, false, true, true});
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  ASSERT_EQ(run.report->steps.size(), 2u) << run.report->detail;
  EXPECT_EQ(run.report->steps[0].stdout_bytes, "started\n");
  // kill(-1) after the first step reached the orphan that /proc hid.
  EXPECT_EQ(run.report->steps[1].stdout_bytes, "orphan gone\n");
  EXPECT_TRUE(WIFEXITED(run.wait_status) && WEXITSTATUS(run.wait_status) == 0)
      << "the init exits with the agent's status";
  // No sweep waited: the steps took ~0.4 s.
  EXPECT_LT(run.elapsed, std::chrono::milliseconds(1500));
}

TEST(GuestAgent, ALeftoverTheAgentCannotFindDoesNotCostTheWholeSweepBound) {
  if (!CanHideProc()) GTEST_SKIP() << "needs root, /usr/bin/unshare and /usr/bin/setpriv";
  // The agent is pid 2 under a shell: it does not own the namespace, and
  // /proc hides the orphan, so it cannot be found (the provider's backstop
  // is the namespace's end). The sweeps must give up at once rather than
  // wait 2 s each (after the step and at the end).
  TempDir work;
  Job job = OrphanLoggerJob();
  job.steps.pop_back();
  AgentRun run = RunAgent(job, work, Mode{true, false, true, false});
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  ASSERT_EQ(run.report->steps.size(), 1u) << run.report->detail;
  EXPECT_EQ(run.report->steps[0].stdout_bytes, "started\n");
  EXPECT_LT(run.elapsed, std::chrono::milliseconds(1500));
}

// What guest code can plant in the displays directory: the agent takes the
// regular files that start with a MIME type line, in name order, and leaves
// out symlinks, FIFOs, hard links, directories, bad headers and half-written
// dot-files; the directory is empty afterwards. A pooled agent (one with a
// prestart template, which makes the directory while it waits and reads it
// through the descriptor it kept) does the same.
TEST(GuestAgent, DisplaysAreTheRegularFilesOfTheDisplaysDirectory) {
  std::vector<Mode> modes = Modes();
  Mode pooled;
  Job prestart = BaseJob();  // a template this job does not fit
  prestart.files = {{"main.txt", ""}};
  prestart.steps = {{"/bin/cat", "main.txt"}};
  pooled.extra_args = {"--prestart-job", EncodeJob(prestart)};
  modes.push_back(pooled);
  for (Mode mode : modes) {
    TempDir work;
    TempDir displays_parent;
    mode.displays = displays_parent.path() + "/displays";
    if (mode.setuid) {
      ASSERT_EQ(chown(displays_parent.path().c_str(), 65534, 65534), 0);
    }
    Job job = BaseJob();
    job.steps = {{"/bin/sh", "-c",
                  "d=$PLIMSOLL_DISPLAYS; cd \"$d\" || exit 3\n"
                  "printf 'text/plain\\nhello' > 0001\n"
                  "ln -s /etc/passwd 0002\n"
                  "mkfifo 0003\n"
                  "printf 'not a mime\\nx' > 0004\n"
                  "printf 'text/html\\n<b>x</b>' > 0005\n"
                  "printf 'image/png\\npartial' > .0006\n"
                  "mkdir 0007\n"
                  "printf 'text/plain\\nlinked' > 0008 && ln 0008 0009\n"
                  "echo \"$d\""}};
    AgentRun run = RunAgent(job, work, mode);
    ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
    ASSERT_EQ(run.report->steps.size(), 1u);
    EXPECT_EQ(run.report->steps[0].exit_code, 0) << run.report->steps[0].stderr_bytes;
    EXPECT_EQ(run.report->steps[0].stdout_bytes, mode.displays + "\n");
    ASSERT_EQ(run.report->displays.size(), 2u) << run.report->detail;
    EXPECT_EQ(run.report->displays[0].mime, "text/plain");
    EXPECT_EQ(run.report->displays[0].data, "hello");
    EXPECT_EQ(run.report->displays[1].mime, "text/html");
    EXPECT_EQ(run.report->displays[1].data, "<b>x</b>");
    EXPECT_FALSE(run.report->displays_truncated);
    for (const char* name : {"0002", "0003", "0004", "0007", "0008", "0009"}) {
      EXPECT_NE(run.report->detail.find(std::string("\"") + name + "\""), std::string::npos)
          << name << " is not named in: " << run.report->detail;
    }
    EXPECT_EQ(run.report->detail.find(".0006"), std::string::npos);
    EXPECT_FALSE(displays_parent.Exists("displays/0001")) << "the directory was not emptied";
    EXPECT_TRUE(CheckReportAgainstJob(*run.report, job).ok());
  }
}

TEST(GuestAgent, DisplaysAreCutAtTheirCountAndByteCaps) {
  TempDir work;
  TempDir displays_parent;
  Mode mode;
  mode.displays = displays_parent.path() + "/displays";
  Job job = BaseJob();
  // 20 small displays: the first 16 come back, flagged truncated.
  job.steps = {{"/bin/sh", "-c",
                "cd \"$PLIMSOLL_DISPLAYS\" && for i in $(seq 10 29); do "
                "printf 'text/plain\\n%s' $i > $i; done"}};
  AgentRun run = RunAgent(job, work, mode);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  ASSERT_EQ(run.report->displays.size(), kMaxDisplays) << run.report->detail;
  EXPECT_EQ(run.report->displays.front().data, "10");
  EXPECT_EQ(run.report->displays.back().data, "25");
  EXPECT_TRUE(run.report->displays_truncated);

  // A display over the byte cap is dropped with every later one; an earlier one stays.
  job.steps = {{"/bin/sh", "-c",
                "cd \"$PLIMSOLL_DISPLAYS\" && printf 'text/plain\\nfirst' > a && "
                "{ printf 'image/png\\n'; head -c 5000000 /dev/zero; } > b && "
                "printf 'text/plain\\nlast' > c"}};
  run = RunAgent(job, work, mode);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  ASSERT_EQ(run.report->displays.size(), 1u) << run.report->detail;
  EXPECT_EQ(run.report->displays[0].data, "first");
  EXPECT_TRUE(run.report->displays_truncated);

  // A writer that dropped some itself says so with a `truncated` file.
  job.steps = {{"/bin/sh", "-c",
                "cd \"$PLIMSOLL_DISPLAYS\" && printf 'text/plain\\nkept' > a && : > truncated"}};
  run = RunAgent(job, work, mode);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  ASSERT_EQ(run.report->displays.size(), 1u) << run.report->detail;
  EXPECT_EQ(run.report->displays[0].data, "kept");
  EXPECT_TRUE(run.report->displays_truncated);
}

TEST(GuestAgent, InitModeRefusesToRunAnywhereButAsPidOne) {
  TempDir work;
  std::string command = std::string(PLIMSOLL_GUEST_BINARY) + " --init --channel 3 --work " +
                        work.path() + " --no-setuid 3</dev/null 2>/dev/null";
  int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);  // usage: no kill(-1) outside a namespace of its own
}

// A step that says whether it was prestarted (its file argument is "-") and
// prints its file, which a prestarted one reads from stdin: `cat` of the
// file or of "-" gives the same bytes, as qjs does (prestart.h).
Job PrestartableJob(const std::string& marker) {
  Job job = BaseJob();
  job.files = {{"main.txt", "the file's content\n"}};
  job.steps = {{"/bin/sh", "-c",
                ": " + marker + "; [ \"$0\" = - ] && echo prestarted; cat -- \"$0\"", "main.txt"}};
  return job;
}

TEST(GuestAgent, APrestartedStepRunsTheJobThatAsksForExactlyIt) {
  for (Mode mode : Modes()) {
    TempDir work;
    Job job = PrestartableJob("fits");
    mode.extra_args = {"--prestart-job", EncodeJob(job)};
    AgentRun run = RunAgent(job, work, mode);
    ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
    ASSERT_EQ(run.report->steps.size(), 1u);
    EXPECT_EQ(run.report->steps[0].command, job.steps[0]);
    EXPECT_EQ(run.report->steps[0].stdout_bytes, "prestarted\nthe file's content\n");
    EXPECT_EQ(run.report->steps[0].exit_code, 0);
    // Its one file went to its stdin only: nothing else of the run reads it.
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(work.path()) / "main.txt"));
  }
}

TEST(GuestAgent, AJobThatAsksForAnArtifactBackNeverUsesAPrestartedStep) {
  // Its files must be in /work (an artifact may be one of them), so it runs
  // as a cold job does: the prestarted step is discarded.
  TempDir work;
  Job job = PrestartableJob("artifact");
  Mode mode;
  mode.extra_args = {"--prestart-job", EncodeJob(job)};
  job.artifacts = {"main.txt"};
  AgentRun run = RunAgent(job, work, mode);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  ASSERT_EQ(run.report->steps.size(), 1u);
  EXPECT_EQ(run.report->steps[0].stdout_bytes, "the file's content\n");
  ASSERT_EQ(run.report->artifacts.size(), 1u);
  EXPECT_EQ(run.report->artifacts[0].content, "the file's content\n");
}

TEST(GuestAgent, APrestartedStepThatDoesNotFitTheJobIsKilledAndTheJobRunsAsUsual) {
  TempDir work;
  Job prestart = PrestartableJob("plimsoll-prestart-unfit-" + std::to_string(getpid()));
  Job job = PrestartableJob("another");
  job.nofile = prestart.nofile + 1;  // any option of the process differs: not it
  // (The bracket keeps the pattern from matching this step's own command; the
  // anchor, from matching the agent, whose argv carries the template.)
  job.steps[0][2] +=
      "; pgrep -f '^/bin/sh -c : plimsoll-prestart-unfi[t]-' >/dev/null && echo left running";
  Mode mode;
  mode.extra_args = {"--prestart-job", EncodeJob(prestart)};
  AgentRun run = RunAgent(job, work, mode);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  ASSERT_EQ(run.report->steps.size(), 1u);
  EXPECT_EQ(run.report->steps[0].stdout_bytes, "the file's content\n");
}

TEST(GuestAgent, APrestartTemplateMustBeAOneStepJobNamingItsFileAndNotForSessions) {
  TempDir work;
  Job no_file = PrestartableJob("x");
  no_file.steps[0].back() = "other.txt";
  for (const std::string& extra :
       {"--prestart-job '" + EncodeJob(no_file) + "'", std::string("--prestart-job '{'"),
        "--session --prestart-job '" + EncodeJob(PrestartableJob("x")) + "'"}) {
    std::string command = std::string(PLIMSOLL_GUEST_BINARY) + " --channel 3 --work " +
                          work.path() + " --no-setuid " + extra + " 3</dev/null 2>/dev/null";
    int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    // A template it cannot start is said on stderr; the agent goes on (and
    // finds no job on /dev/null: 3). The others are usage errors.
    EXPECT_EQ(WEXITSTATUS(status), extra.find("other.txt") != std::string::npos ? 3 : 2) << extra;
  }
}

// Answers the relay's calls as a broker would, and remembers them.
class RecordingCalls final : public GrantedCalls {
 public:
  HostCallAnswer Call(std::string_view method, std::string_view path, std::string_view body,
                      std::string_view content_type, Clock::time_point) override {
    seen.push_back(std::string(method) + "|" + std::string(path) + "|" + std::string(body) + "|" +
                   std::string(content_type));
    if (path == "/items/7") {
      return {.status = 200, .content_type = "application/json", .body = R"({"id":7})"};
    }
    return {.status = 403,
            .content_type = "application/json",
            .body = R"({"error":"not_allowed"})",
            .refused = "not_allowed",
            .message = "No allow entry matches."};
  }
  BrokerSummary Summary() const override { return {}; }
  std::vector<::plimsoll::Advice> Advice() const override { return {}; }
  std::vector<std::string> seen;
};

// What a step sends through the relay's socket: an ordinary HTTP client
// (Python's http.client over AF_UNIX), then bytes that are not HTTP.
constexpr char kRelayClient[] = R"(
import http.client, socket, sys
class Unix(http.client.HTTPConnection):
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(sys.argv[1])
try:
    c = Unix("localhost")
    c.request("GET", "/items/7")
    r = c.getresponse()
    print(r.status, r.getheader("Content-Type"), r.read().decode())
    c = Unix("localhost")
    c.request("POST", "/admin", body=b"xyz", headers={"Content-Type": "text/plain"})
    r = c.getresponse()
    print(r.status, r.getheader("Plimsoll-Refused"))
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    s.sendall(b"NOT HTTP AT ALL\r\n\r\n")
    print(s.recv(64).split(b"\r\n")[0].decode())
except OSError as error:
    print("no relay:", type(error).__name__)
)";

TEST(GuestAgent, AGrantedJobsStepsReachTheHostOnlyThroughTheRelaySocket) {
  TempDir work;
  TempDir relay_parent;
  const std::string socket_path = relay_parent.path() + "/run/api.sock";
  Job job = BaseJob();
  job.steps = {{"python3", "-c", kRelayClient, socket_path}};
  job.host_calls = true;
  RecordingCalls calls;
  Mode mode;
  mode.host_call_socket = socket_path;
  mode.calls = &calls;
  AgentRun run = RunAgent(job, work, mode);
  ASSERT_TRUE(run.report.ok()) << run.report.error().ToString();
  ASSERT_EQ(run.report->steps.size(), 1u);
  EXPECT_EQ(run.report->steps[0].stdout_bytes,
            "200 application/json {\"id\":7}\n403 not_allowed\nHTTP/1.1 400 Bad Request\n")
      << run.report->steps[0].stderr_bytes;
  // Every request reached the host, the unreadable one as a call the broker
  // refuses (no method, no path), so it is counted.
  ASSERT_EQ(calls.seen.size(), 3u);
  EXPECT_EQ(calls.seen[0], "GET|/items/7||");
  EXPECT_EQ(calls.seen[1], "POST|/admin|xyz|text/plain");
  EXPECT_EQ(calls.seen[2], "|||");
  // The socket is gone once the job is.
  struct stat info {};
  EXPECT_NE(stat(socket_path.c_str(), &info), 0);

  // A job without a grant has no socket at all.
  RecordingCalls unused;
  job.host_calls = false;
  mode.calls = &unused;
  AgentRun plain = RunAgent(job, work, mode);
  ASSERT_TRUE(plain.report.ok()) << plain.report.error().ToString();
  EXPECT_EQ(plain.report->steps[0].stdout_bytes, "no relay: FileNotFoundError\n");
  EXPECT_TRUE(unused.seen.empty());
}

}  // namespace
}  // namespace plimsoll::guest
