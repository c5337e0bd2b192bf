// The real plimsoll-guest with --session, as the linux provider runs it: in
// a fresh pid namespace whose /proc is mounted hidepid=invisible, under
// --init, keeping CAP_SYS_PTRACE (os::SessionAgentCapabilities) and running
// cells as uid 65534. Several jobs go over one socketpair; the Python
// interpreter is the host's python3 with the agent's embedded server.
// Needs root (unshare, mount); prints skipped otherwise.
#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "guest/protocol.h"
#include "guest/report_bounds.h"

namespace plimsoll::guest {
namespace {

using Clock = std::chrono::steady_clock;

class WorkDirectory {
 public:
  WorkDirectory() {
    char pattern[] = "/tmp/plimsoll-session-agent-XXXXXX";
    char* made = mkdtemp(pattern);
    EXPECT_NE(made, nullptr);
    path_ = made ? made : "";
    chmod(path_.c_str(), 0777);
  }
  ~WorkDirectory() {
    nftw(
        path_.c_str(),
        [](const char* path, const struct stat*, int, FTW*) { return remove(path); }, 16,
        FTW_DEPTH | FTW_PHYS);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Host processes whose command line contains `marker`.
int CountProcesses(const std::string& marker) {
  int count = 0;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return -1;
  while (dirent* entry = readdir(proc)) {
    if (entry->d_name[0] < '1' || entry->d_name[0] > '9') continue;
    std::ifstream file(std::string("/proc/") + entry->d_name + "/cmdline");
    if (!file) continue;
    std::string line((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    for (char& c : line) {
      if (c == '\0') c = ' ';
    }
    if (line.find(marker) != std::string::npos && line.find("python3 -I -c") == std::string::npos)
      ++count;
  }
  closedir(proc);
  return count;
}

class SessionAgent {
 public:
  explicit SessionAgent(const std::string& work) {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    std::vector<std::string> args = {
        "/usr/bin/unshare", "--pid", "--fork", "--mount", "--propagation", "private",
        "/bin/sh", "-c",
        "mount -t proc -o hidepid=invisible proc /proc && exec \"$@\"", "sh",
        PLIMSOLL_GUEST_BINARY, "--init", "--session", "--channel", "3", "--work", work,
        "--uid", "65534", "--gid", "65534"};
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      dup2(fds[1], 3);
      execv(argv[0], argv.data());
      _exit(99);
    }
    close(fds[1]);
    channel_ = fds[0];
  }
  ~SessionAgent() { End(); }

  // Sends the job and reads its report as a provider does.
  Expected<Report> Send(Job job) {
    job.report_key = std::string(kReportKeyBytes, static_cast<char>('a' + ++jobs_));
    auto deadline = Clock::now() + std::chrono::seconds(30);
    Status sent = WriteFrame(channel_, EncodeJob(job), deadline);
    if (!sent.ok()) return sent.error();
    return ReadSealedReport(channel_, job, deadline);
  }

  Expected<Report> Cell(const std::string& language, const std::string& code,
                        int64_t timeout_ms = 10'000) {
    Job job;
    job.timeout_ms = timeout_ms;
    job.output_cap_bytes = 64 << 10;
    job.cell = JobCell{language, code, 1024, jobs_ + 1, 0};
    return Send(job);
  }

  // Closes the channel; returns the agent's wait status.
  int End() {
    if (channel_ >= 0) close(channel_);
    channel_ = -1;
    if (pid_ <= 0) return status_;
    waitpid(pid_, &status_, 0);
    pid_ = -1;
    return status_;
  }

 private:
  pid_t pid_ = -1;
  int channel_ = -1;
  int64_t jobs_ = 0;
  int status_ = -1;
};

bool CanRun() {
  return geteuid() == 0 && access("/usr/bin/unshare", X_OK) == 0 &&
         access("/usr/bin/python3", X_OK) == 0;
}

#define SKIP_UNLESS_ROOT() \
  if (!CanRun()) GTEST_SKIP() << "needs root, unshare and python3 (pid namespace, /proc mount)"

TEST(SessionAgent, PythonStateIsKeptAcrossJobsAndTheChannelClosingEndsIt) {
  SKIP_UNLESS_ROOT();
  WorkDirectory work;
  SessionAgent agent(work.path());
  auto first = agent.Cell("python", "x = 41\nprint('set')");
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  ASSERT_EQ(first->steps.size(), 1u);
  EXPECT_EQ(first->steps[0].command, CellCommand("python"));
  EXPECT_EQ(first->steps[0].exit_code, 0) << first->steps[0].stderr_bytes;
  EXPECT_EQ(first->steps[0].stdout_bytes, "set\n");
  ASSERT_TRUE(first->cell.has_value());
  EXPECT_TRUE(first->cell->interpreter_started);
  EXPECT_TRUE(first->cell->state_kept);
  EXPECT_FALSE(first->cell->value.has_value());
  EXPECT_EQ(first->interpreters, std::vector<std::string>{"python"});

  auto second = agent.Cell("python", "x + 1");
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_FALSE(second->cell->interpreter_started);
  EXPECT_EQ(second->cell->value, "42");

  auto thrown = agent.Cell("python", "raise ValueError('on purpose')");
  ASSERT_TRUE(thrown.ok());
  EXPECT_EQ(thrown->steps[0].exit_code, 1);
  EXPECT_NE(thrown->steps[0].stderr_bytes.find("on purpose"), std::string::npos);
  EXPECT_TRUE(thrown->cell->state_kept);

  auto uid = agent.Cell("python", "import os; os.getuid()");
  ASSERT_TRUE(uid.ok());
  EXPECT_EQ(uid->cell->value, "65534");

  EXPECT_TRUE(WIFEXITED(agent.End()));
}

TEST(SessionAgent, WhatACellLeftRunningIsGoneBeforeItsReportAndTheInterpreterStays) {
  SKIP_UNLESS_ROOT();
  WorkDirectory work;
  SessionAgent agent(work.path());
  const std::string marker = "1000." + std::to_string(getpid());
  auto started = agent.Cell("python",
                            "import subprocess, os\n"
                            "p = subprocess.Popen(['sleep', '" + marker + "'])\n"
                            "q = subprocess.Popen(['setsid', 'sleep', '" + marker + "'])\n"
                            "os.system('sleep " + marker + " &')\n"
                            "assert p.poll() is None and q.poll() is None\n"
                            "kept = 'yes'");
  ASSERT_TRUE(started.ok()) << started.error().ToString();
  EXPECT_EQ(started->steps[0].exit_code, 0) << started->steps[0].stderr_bytes;
  EXPECT_EQ(CountProcesses("sleep " + marker), 0) << "a sleep outlived its call";
  auto next = agent.Cell("python", "kept");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ(next->cell->value, "'yes'");
  EXPECT_FALSE(next->cell->interpreter_started);
}

TEST(SessionAgent, ABackgroundThreadDoesNotRunBetweenCalls) {
  SKIP_UNLESS_ROOT();
  WorkDirectory work;
  SessionAgent agent(work.path());
  auto started = agent.Cell("python",
                            "import threading, time\n"
                            "ticks = 0\n"
                            "def tick():\n"
                            "    global ticks\n"
                            "    while True:\n"
                            "        ticks += 1\n"
                            "        time.sleep(0.01)\n"
                            "threading.Thread(target=tick, daemon=True).start()\n"
                            "time.sleep(0.1)");
  ASSERT_TRUE(started.ok());
  auto before = agent.Cell("python", "ticks");
  ASSERT_TRUE(before.ok());
  usleep(500'000);  // 50 ticks if the interpreter ran meanwhile
  auto after = agent.Cell("python", "ticks");
  ASSERT_TRUE(after.ok());
  ASSERT_TRUE(before->cell->value && after->cell->value);
  EXPECT_LT(std::stoi(*after->cell->value) - std::stoi(*before->cell->value), 10)
      << "the interpreter ran while no call did";
}

TEST(SessionAgent, ADeadlineKillsTheInterpreterAndTheNextCellStartsAFreshOne) {
  SKIP_UNLESS_ROOT();
  WorkDirectory work;
  SessionAgent agent(work.path());
  ASSERT_TRUE(agent.Cell("python", "lost = 1").ok());
  auto busy = agent.Cell("python", "while True: pass", 300);
  ASSERT_TRUE(busy.ok()) << busy.error().ToString();
  EXPECT_EQ(busy->steps[0].exit_code, 124);
  EXPECT_TRUE(busy->steps[0].timed_out);
  EXPECT_EQ(busy->outcome, ProjectOutcome::kTimedOut);
  EXPECT_FALSE(busy->cell->state_kept);
  EXPECT_TRUE(busy->interpreters->empty());
  auto fresh = agent.Cell("python", "'lost' in globals()");
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(fresh->cell->interpreter_started);
  EXPECT_EQ(fresh->cell->value, "False");
}

TEST(SessionAgent, AnInterpreterThatExitsOrForgesItsAnswerIsEndedAndReplaced) {
  SKIP_UNLESS_ROOT();
  WorkDirectory work;
  SessionAgent agent(work.path());
  auto exited = agent.Cell("python", "import os; os._exit(7)");
  ASSERT_TRUE(exited.ok()) << exited.error().ToString();
  EXPECT_EQ(exited->steps[0].exit_code, 7);
  EXPECT_FALSE(exited->cell->state_kept);
  // A cell writing garbage on the server's answer channel (fd >= 100).
  auto forged = agent.Cell("python",
                           "import os\n"
                           "for fd in range(100, 110):\n"
                           "    try: os.write(fd, b'\\xff\\xff\\xff\\xffjunk')\n"
                           "    except OSError: pass\n");
  ASSERT_TRUE(forged.ok()) << forged.error().ToString();
  EXPECT_EQ(forged->steps[0].exit_code, 1);
  EXPECT_NE(forged->steps[0].stderr_bytes.find("broke its channel"), std::string::npos)
      << forged->steps[0].stderr_bytes;
  EXPECT_FALSE(forged->cell->state_kept);
  auto fresh = agent.Cell("python", "1 + 1");
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(fresh->cell->interpreter_started);
  EXPECT_EQ(fresh->cell->value, "2");
}

TEST(SessionAgent, AnInterpreterThatClosesItsAnswerChannelEndsAtOnceNotAtTheDeadline) {
  SKIP_UNLESS_ROOT();
  WorkDirectory work;
  SessionAgent agent(work.path());
  auto started = Clock::now();
  auto closed = agent.Cell("python",
                           "import os, time\n"
                           "for fd in range(100, 110):\n"
                           "    try: os.close(fd)\n"
                           "    except OSError: pass\n"
                           "time.sleep(30)",
                           20'000);
  ASSERT_TRUE(closed.ok()) << closed.error().ToString();
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(5));
  EXPECT_EQ(closed->steps[0].exit_code, 1);
  EXPECT_NE(closed->steps[0].stderr_bytes.find("closed its answer channel"), std::string::npos)
      << closed->steps[0].stderr_bytes;
  auto fresh = agent.Cell("python", "2 + 2");
  ASSERT_TRUE(fresh.ok());
  EXPECT_TRUE(fresh->cell->interpreter_started);
  EXPECT_EQ(fresh->cell->value, "4");
}

TEST(SessionAgent, FilesOfLaterJobsReplaceEarlierOnesAndStepsSeeTheCellsFiles) {
  SKIP_UNLESS_ROOT();
  WorkDirectory work;
  SessionAgent agent(work.path());
  ASSERT_TRUE(agent.Cell("python", "open('made.txt', 'w').write('by a cell')").ok());
  for (const char* content : {"one", "two"}) {
    Job job;
    job.timeout_ms = 10'000;
    job.output_cap_bytes = 4096;
    job.files = {{"data.txt", content}};
    job.steps = {{"cat", "data.txt", "made.txt"}};
    auto report = agent.Send(job);
    ASSERT_TRUE(report.ok()) << report.error().ToString();
    ASSERT_EQ(report->steps.size(), 1u);
    EXPECT_EQ(report->steps[0].stdout_bytes, std::string(content) + "by a cell");
    EXPECT_EQ(report->interpreters, std::vector<std::string>{"python"});
  }
  auto still = agent.Cell("python", "open('data.txt').read()");
  ASSERT_TRUE(still.ok());
  EXPECT_EQ(still->cell->value, "'two'");
  EXPECT_FALSE(still->cell->interpreter_started);
}

}  // namespace
}  // namespace plimsoll::guest
