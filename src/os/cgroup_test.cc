#include "os/cgroup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace plimsoll::os {
namespace {

class CgroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "skipped: creating cgroups needs root";
    auto layout = DetectCgroups();
    if (!layout.ok()) GTEST_SKIP() << "skipped: " << layout.error().message();
    layout_ = *layout;
    Status parents = EnsureCgroupParents(layout_);
    if (!parents.ok())
      GTEST_SKIP() << "skipped: cannot create the parents: " << parents.error().message();
  }
  CgroupLayout layout_;
};

TEST(CgroupNameTest, RunNamesCarryTheOwnerAndCountUp) {
  std::string first = NextRunName(), second = NextRunName();
  std::string owner =
      std::to_string(getpid()) + "-" + std::to_string(ProcessStartTime(getpid())) + "-";
  EXPECT_EQ(first.rfind(owner, 0), 0u) << first;
  EXPECT_NE(first, second);
  EXPECT_EQ(ProcessStartTime(-5), -1);
}

TEST_F(CgroupTest, CreateWritesTheLimitsAndRemoveDeletesTheDirectories) {
  Limits limits;
  limits.memory_bytes = 64 << 20;
  limits.pids = 17;
  limits.cpus_millis = 500;
  std::vector<std::string> directories;
  {
    auto cgroup = RunCgroup::Create(layout_, NextRunName(), limits);
    ASSERT_TRUE(cgroup.ok()) << cgroup.error().ToString();
    directories = cgroup->directories();
    ASSERT_FALSE(directories.empty());
    auto values = cgroup->ReadLimits();
    auto value = [&](const std::string& file) {
      for (const auto& [name, text] : values) {
        if (name == file) return text;
      }
      return std::string("absent");
    };
    EXPECT_EQ(value("pids.max"), "17");
    if (layout_.version == CgroupVersion::kV1) {
      EXPECT_EQ(value("memory.limit_in_bytes"), std::to_string(64 << 20));
      if (layout_.swap_accounting) {
        EXPECT_EQ(value("memory.memsw.limit_in_bytes"), std::to_string(64 << 20));
      }
      if (!layout_.cpu.empty()) {
        EXPECT_EQ(value("cpu.cfs_quota_us"), "50000");
      }
    } else {
      EXPECT_EQ(value("memory.max"), std::to_string(64 << 20));
      if (!layout_.cpu.empty()) {
        EXPECT_EQ(value("cpu.max"), "50000 100000");
      }
    }
  }
  for (const std::string& dir : directories) {
    struct stat st {};
    EXPECT_NE(stat(dir.c_str(), &st), 0) << dir << " outlived its RunCgroup";
  }
}

TEST_F(CgroupTest, KillEmptiesTheCgroupOfEveryDescendant) {
  auto cgroup = RunCgroup::Create(layout_, NextRunName(), Limits{});
  ASSERT_TRUE(cgroup.ok()) << cgroup.error().ToString();
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[1]);
    // Wait to be moved, then spawn grandchildren that outlive us.
    char go;
    (void)!read(ready[0], &go, 1);
    for (int i = 0; i < 3; ++i) {
      if (fork() == 0) {
        setsid();
        for (;;) pause();
      }
    }
    for (;;) pause();
  }
  close(ready[0]);
  ASSERT_TRUE(cgroup->AddProcess(child).ok());
  ASSERT_EQ(write(ready[1], "g", 1), 1);
  // Forks after the move land in the cgroup too; wait until they are there.
  for (int i = 0; i < 2000 && cgroup->Processes().size() < 4; ++i) usleep(1000);
  EXPECT_EQ(cgroup->Processes().size(), 4u);
  ASSERT_TRUE(cgroup->Kill().ok());
  int status = 0;
  EXPECT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(cgroup->Processes().empty());
  EXPECT_TRUE(cgroup->Remove().ok());
  close(ready[1]);
}

}  // namespace
}  // namespace plimsoll::os

namespace plimsoll::os {
namespace {

pid_t SleepingChild() {
  pid_t pid = fork();
  if (pid == 0) {
    execl("/bin/sleep", "sleep", "60", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

bool Running(pid_t pid) {
  return waitpid(pid, nullptr, WNOHANG) == 0;
}

// The kill path reads pids from cgroup.procs and signals them later; a pid
// whose process left (exited) meanwhile may name a stranger by then. That
// stranger is simulated by a process that is not in the cgroup: it must
// never be signalled, and a member must be.
TEST_F(CgroupTest, SignalsAPidOnlyWhileItIsAMember) {
  auto cgroup = RunCgroup::Create(layout_, NextRunName(), Limits{});
  ASSERT_TRUE(cgroup.ok()) << cgroup.error().ToString();
  pid_t member = SleepingChild(), stranger = SleepingChild();
  ASSERT_GT(member, 0);
  ASSERT_GT(stranger, 0);
  ASSERT_TRUE(cgroup->AddProcess(member).ok());
  for (const std::string& dir : cgroup->directories()) {
    EXPECT_FALSE(SignalCgroupMember(dir, stranger, SIGKILL)) << dir;
  }
  EXPECT_TRUE(Running(stranger)) << "a process outside the cgroup was signalled";
  EXPECT_TRUE(SignalCgroupMember(cgroup->directories()[0], member, SIGKILL));
  int status = 0;
  ASSERT_EQ(waitpid(member, &status, 0), member);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  // A pid whose process is gone is nobody's to signal.
  EXPECT_FALSE(SignalCgroupMember(cgroup->directories()[0], member, SIGKILL));
  kill(stranger, SIGKILL);
  waitpid(stranger, nullptr, 0);
  EXPECT_TRUE(cgroup->Remove().ok());
}

// What a runtime left (oci): a cgroup by its path below the hierarchies,
// still holding a process. Every hierarchy's directory goes; the member is
// killed; a process outside it is not.
TEST_F(CgroupTest, RemoveEverywhereKillsMembersAndRemovesEachHierarchysDirectory) {
  auto cgroup = RunCgroup::Create(layout_, NextRunName(), Limits{});
  ASSERT_TRUE(cgroup.ok()) << cgroup.error().ToString();
  std::vector<std::string> directories = cgroup->directories();
  const std::string mount =
      layout_.version == CgroupVersion::kV1 ? layout_.memory : layout_.unified;
  ASSERT_EQ(directories[0].rfind(mount, 0), 0u) << directories[0];
  const std::string path = directories[0].substr(mount.size());
  pid_t member = SleepingChild(), stranger = SleepingChild();
  ASSERT_GT(member, 0);
  ASSERT_GT(stranger, 0);
  ASSERT_TRUE(cgroup->AddProcess(member).ok());

  std::vector<std::string> left =
      RemoveCgroupEverywhere(path, std::chrono::steady_clock::now() + std::chrono::seconds(5));
  EXPECT_TRUE(left.empty()) << left.front();
  int status = 0;
  ASSERT_EQ(waitpid(member, &status, 0), member);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_TRUE(Running(stranger)) << "a process outside the cgroup was signalled";
  for (const std::string& directory : directories) {
    struct stat info {};
    EXPECT_NE(stat(directory.c_str(), &info), 0) << directory << " is still there";
  }
  kill(stranger, SIGKILL);
  waitpid(stranger, nullptr, 0);
}

}  // namespace
}  // namespace plimsoll::os
