// After the whole suite: no leftover processes, mounts, cgroups or temporary
// directories on the host, and the host process itself unaffected. The global
// environment snapshots the host before the first test and compares after the
// last one, once every sandbox has been destroyed. The tests below prove the
// snapshot notices each kind of leftover (a check that sees nothing proves
// nothing).
#include "hostile/leftovers.h"

#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <thread>

#include "hostile/hostile.h"

namespace plimsoll::hostile {
namespace {

using namespace std::chrono_literals;

class HostileEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    Host();  // the fixtures exist before the snapshot, so they are not leftovers
    before_ = SnapshotHost(Host().token);
  }

  void TearDown() override {
    CloseAllSandboxes();
    // Cleanup may finish a moment after the last sandbox is destroyed: give
    // it up to 5 s, then report what is still there.
    std::vector<std::string> found;
    auto give_up = std::chrono::steady_clock::now() + 5s;
    for (;;) {
      found = Leftovers(before_, SnapshotHost(Host().token));
      if (found.empty() || std::chrono::steady_clock::now() > give_up) break;
      std::this_thread::sleep_for(100ms);
    }
    for (const std::string& leftover : found) ADD_FAILURE() << leftover;
    DestroyHost();
  }

 private:
  HostSnapshot before_;
};

[[maybe_unused]] ::testing::Environment* const kEnvironment =
    ::testing::AddGlobalTestEnvironment(new HostileEnvironment);

bool Mentions(const std::vector<std::string>& found, const std::string& text) {
  for (const auto& sentence : found) {
    if (sentence.find(text) != std::string::npos) return true;
  }
  return false;
}

TEST(LeftoversTest, AChildProcessIsNoticed) {
  HostSnapshot before = SnapshotHost();
  pid_t child = fork();
  if (child == 0) {
    for (;;) pause();
  }
  ASSERT_GT(child, 0);
  std::vector<std::string> found = Leftovers(before, SnapshotHost());
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  EXPECT_TRUE(Mentions(found, "pid " + std::to_string(child) + " "))
      << ::testing::PrintToString(found);
  // Reaped, it is no leftover. (Only the child is asked about: the suites
  // beside this one may make plimsoll-named temporary entries meanwhile, as
  // the replay pages' Chromium profile did once.)
  std::vector<std::string> after = Leftovers(before, SnapshotHost());
  EXPECT_FALSE(Mentions(after, "pid " + std::to_string(child) + " "))
      << ::testing::PrintToString(after);
}

TEST(LeftoversTest, ATemporaryDirectoryIsNoticed) {
  HostSnapshot before = SnapshotHost();
  std::string directory = "/tmp/plimsoll-leftovers-probe-" + std::to_string(getpid());
  ASSERT_EQ(mkdir(directory.c_str(), 0700), 0);
  std::vector<std::string> found = Leftovers(before, SnapshotHost());
  rmdir(directory.c_str());
  EXPECT_TRUE(Mentions(found, directory)) << ::testing::PrintToString(found);
}

TEST(LeftoversTest, ACgroupIsNoticed) {
  std::string cgroup = "/sys/fs/cgroup/pids/plimsoll-leftovers-probe-" + std::to_string(getpid());
  HostSnapshot before = SnapshotHost();
  if (mkdir(cgroup.c_str(), 0755) != 0) {
    GTEST_SKIP() << "skipped: cannot create " << cgroup << " here (" << std::strerror(errno) << ")";
  }
  std::vector<std::string> found = Leftovers(before, SnapshotHost());
  rmdir(cgroup.c_str());
  EXPECT_TRUE(Mentions(found, cgroup)) << ::testing::PrintToString(found);
}

TEST(LeftoversTest, AMountIsNoticed) {
  std::string directory = "/tmp/plimsoll-leftovers-mount-" + std::to_string(getpid());
  ASSERT_EQ(mkdir(directory.c_str(), 0700), 0);
  HostSnapshot before = SnapshotHost();
  if (mount("plimsoll-probe", directory.c_str(), "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
            "size=64k") != 0) {
    int error = errno;
    rmdir(directory.c_str());
    GTEST_SKIP() << "skipped: cannot mount a tmpfs here (" << std::strerror(error) << ")";
  }
  std::vector<std::string> found = Leftovers(before, SnapshotHost());
  umount2(directory.c_str(), MNT_DETACH);
  rmdir(directory.c_str());
  EXPECT_TRUE(Mentions(found, "plimsoll-probe")) << ::testing::PrintToString(found);
}

TEST(LeftoversTest, AChangeToTheHostProcessIsNoticed) {
  HostSnapshot before = SnapshotHost();
  mode_t old = umask(0077);
  std::vector<std::string> found = Leftovers(before, SnapshotHost());
  umask(old);
  EXPECT_TRUE(Mentions(found, "status.Umask")) << ::testing::PrintToString(found);
}

}  // namespace
}  // namespace plimsoll::hostile
