// Faults: what a provider does when the host fails under it, and that it
// recovers when the fault goes. Each fault is made for real on this host:
//   - disk full under the oci state directory (a 2 MiB tmpfs mounted there
//     by the test, then filled);
//   - EMFILE: this process's RLIMIT_NOFILE lowered to what is open now, so
//     the next descriptors the linux provider asks for fail;
//   - a missing runtime binary (the oci provider's configured runc is a
//     symlink the test removes);
//   - an unreadable image (PLIMSOLL_IMAGE is a directory whose rootfs is a
//     bind of the real one: the bind is taken away, then the identity).
// Each must give a clear error that is a marked refusal (nothing ran:
// SPEC §3), never a crash; once the fault is gone, the next run succeeds.
//
// Runs the providers in this process (a daemon only maps these refusals to
// their marks). Needs root, the guest image and runc; skipped with the
// precondition it lacks. ~10 s.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "base/scoped_env_for_tests.h"
#include "common/host_preconditions.h"
#include "plimsoll/provider.h"
#include "plimsoll/request.h"
#include "plimsoll/sandbox.h"
#include "providers/linux/linux_provider.h"
#include "providers/oci/oci_provider.h"

namespace plimsoll::reliability {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

Request Snippet() {
  Request request;
  request.python = PythonPayload{"print(6*7)"};
  request.timeout_ms = 20'000;
  return request;
}

// Through a Sandbox, as the daemon runs code: a configuration serves only
// after its smoke test, so a fault met while preparing one is the evidence
// collection's refusal, and one met by a run is the run's.
Expected<Result> RunOnce(Sandbox& sandbox) {
  return sandbox.Run(Snippet());
}

void ExpectRuns(Sandbox& sandbox, const std::string& when) {
  auto result = RunOnce(sandbox);
  ASSERT_TRUE(result.ok()) << when << ": " << result.error().ToString();
  EXPECT_EQ(result->stdout_bytes, "42\n") << when << ": " << result->stderr_bytes;
}

// The fault must be a marked refusal ("nothing ran") naming `needle`.
void ExpectMarkedRefusal(Sandbox& sandbox, const std::string& needle) {
  auto result = RunOnce(sandbox);
  ASSERT_FALSE(result.ok()) << "ran despite the fault: " << result->stdout_bytes;
  EXPECT_TRUE(result.error().not_dispatched().has_value())
      << "an unmarked error (a client may not retry it): " << result.error().ToString();
  EXPECT_NE(result.error().message().find(needle), std::string::npos)
      << "the message does not say what failed: " << result.error().ToString();
}

std::string PrivateDirectory(const std::string& what) {
  std::string pattern = "/run/plimsoll-faults-test-" + what + "-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) return "";
  return buffer.data();
}

TEST(FaultsTest, DiskFullUnderTheStateDirectoryIsRefusedThenRecovers) {
  PLIMSOLL_REQUIRE_HOST("oci:runc");
  std::string state = PrivateDirectory("disk");
  ASSERT_FALSE(state.empty());
  ASSERT_EQ(mount("tmpfs", state.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=2m,mode=0700"), 0)
      << std::strerror(errno);
  Limits limits;
  {
    OciSettings settings;
    settings.runtime = oci::RuntimeKind::kRunc;
    settings.runtime_options.state_dir = state;
    settings.pool_size = 0;
    Sandbox provider(MakeOciProvider(limits, settings));
    ExpectRuns(provider, "before the disk filled");
    // The first run's container is removed in the background: wait until
    // it is gone (its removal would free room), then fill the tmpfs to the
    // last byte, topping it up a few times.
    auto containers_left = [&state] {
      std::error_code error;
      for (auto it = fs::recursive_directory_iterator(state, error);
           !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
        if (it->path().filename().string().rfind("plimsoll-", 0) == 0) return true;
      }
      return false;
    };
    for (auto until = Clock::now() + 15s; containers_left() && Clock::now() < until;) {
      std::this_thread::sleep_for(50ms);
    }
    std::string filler = state + "/filler";
    {
      int fd = open(filler.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
      ASSERT_GE(fd, 0);
      std::vector<char> block(64 << 10, 'x');
      for (int round = 0; round < 6; ++round) {
        while (write(fd, block.data(), block.size()) > 0) {
        }
        for (char byte = 'x'; write(fd, &byte, 1) == 1;) {
        }
        std::this_thread::sleep_for(250ms);
      }
      close(fd);
    }
    ExpectMarkedRefusal(provider, "No space left on device");
    ASSERT_EQ(unlink(filler.c_str()), 0);
    ExpectRuns(provider, "after the disk was freed");
  }
  EXPECT_EQ(umount2(state.c_str(), MNT_DETACH), 0);
  std::error_code error;
  fs::remove_all(state, error);
}

TEST(FaultsTest, EmfileIsRefusedThenRecovers) {
  PLIMSOLL_REQUIRE_HOST("linux");
  // The fault is in building a sandbox: a pooled one, built before the
  // descriptors ran out, would serve the run (as it should), so no pool.
  testing::ScopedEnv no_pool("SANDBOX_LINUX_POOL_SIZE", "0");
  Limits limits;
  Sandbox provider(MakeLinuxProvider(limits));
  ExpectRuns(provider, "before the descriptors ran out");
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &saved), 0);
  // The highest descriptor open now: the limit is set just above it, so the
  // sandbox's socketpairs and pipes fail with EMFILE.
  int highest = 0;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd")) {
    highest = std::max(highest, std::atoi(entry.path().filename().c_str()));
  }
  rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(highest + 1);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &low), 0);
  // Fill the holes below it too: no descriptor is left at all.
  std::vector<int> fillers;
  for (int fd; (fd = open("/dev/null", O_RDONLY | O_CLOEXEC)) >= 0;) fillers.push_back(fd);
  auto result = RunOnce(provider);
  for (int fd : fillers) close(fd);
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &saved), 0);
  ASSERT_FALSE(result.ok()) << "ran without descriptors: " << result->stdout_bytes;
  EXPECT_TRUE(result.error().not_dispatched().has_value()) << result.error().ToString();
  EXPECT_NE(result.error().message().find("Too many open files"), std::string::npos)
      << result.error().ToString();
  ExpectRuns(provider, "after the limit was raised again");
}

TEST(FaultsTest, AMissingRuntimeBinaryIsRefusedThenRecovers) {
  PLIMSOLL_REQUIRE_HOST("oci:runc");
  std::string dir = PrivateDirectory("runtime");
  ASSERT_FALSE(dir.empty());
  std::string binary = dir + "/runc";
  ASSERT_EQ(symlink("/usr/sbin/runc", binary.c_str()), 0);
  Limits limits;
  {
    OciSettings settings;
    settings.runtime = oci::RuntimeKind::kRunc;
    settings.runtime_options.binary = binary;
    settings.runtime_options.state_dir = dir + "/state";
    settings.pool_size = 0;
    Sandbox provider(MakeOciProvider(limits, settings));
    ExpectRuns(provider, "with the runtime present");
    ASSERT_EQ(unlink(binary.c_str()), 0);
    ExpectMarkedRefusal(provider, binary);
    ASSERT_EQ(symlink("/usr/sbin/runc", binary.c_str()), 0);
    ExpectRuns(provider, "after the runtime came back");
  }
  std::error_code error;
  fs::remove_all(dir, error);
}

TEST(FaultsTest, AnUnreadableImageIsRefusedThenRecovers) {
  PLIMSOLL_REQUIRE_HOST("linux");
  const std::string real = std::getenv("PLIMSOLL_IMAGE");
  std::string dir = PrivateDirectory("image");
  ASSERT_FALSE(dir.empty());
  // The sandbox's user namespace reaches the tree by path as a host uid
  // that is not root: mkdtemp's 0700 would stop it.
  ASSERT_EQ(chmod(dir.c_str(), 0755), 0);
  // An image directory of our own: the real one's small files and a bind of
  // its tree, so the faults below touch nothing shared.
  for (const char* name : {"manifest", "identity", "inputs"}) {
    std::error_code error;
    fs::copy_file(real + "/" + name, dir + "/" + name, error);
  }
  const std::string rootfs = dir + "/rootfs";
  ASSERT_EQ(mkdir(rootfs.c_str(), 0755), 0);
  auto bind = [&] {
    return mount((real + "/rootfs").c_str(), rootfs.c_str(), nullptr, MS_BIND | MS_REC, nullptr);
  };
  ASSERT_EQ(bind(), 0) << std::strerror(errno);
  const char* saved = std::getenv("PLIMSOLL_IMAGE");
  std::string saved_image = saved;
  setenv("PLIMSOLL_IMAGE", dir.c_str(), 1);
  Limits limits;
  {
    Sandbox provider(MakeLinuxProvider(limits));
    ExpectRuns(provider, "with the image readable");
    // The tree goes: what is at rootfs is an empty directory.
    ASSERT_EQ(umount2(rootfs.c_str(), MNT_DETACH), 0);
    Sandbox fresh(MakeLinuxProvider(limits));
    ExpectMarkedRefusal(fresh, dir);
    // The identity goes too.
    ASSERT_EQ(rename((dir + "/identity").c_str(), (dir + "/identity.away").c_str()), 0);
    ExpectMarkedRefusal(fresh, "identity");
    ASSERT_EQ(rename((dir + "/identity.away").c_str(), (dir + "/identity").c_str()), 0);
    ASSERT_EQ(bind(), 0);
    ExpectRuns(fresh, "after the image came back");
  }
  setenv("PLIMSOLL_IMAGE", saved_image.c_str(), 1);
  (void)umount2(rootfs.c_str(), MNT_DETACH);
  // Never remove_all here: were the bind still mounted, it would reach the
  // real tree. rmdir fails on anything not empty.
  for (const char* name : {"manifest", "identity", "inputs"}) unlink((dir + "/" + name).c_str());
  EXPECT_EQ(rmdir(rootfs.c_str()), 0) << std::strerror(errno);
  EXPECT_EQ(rmdir(dir.c_str()), 0) << std::strerror(errno);
}

}  // namespace
}  // namespace plimsoll::reliability
