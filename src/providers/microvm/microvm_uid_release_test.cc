// A VM's uid lease is released only after every process of that uid is
// gone. A stand-in jailer (a shell script) leaves a process running as the
// VM's uid outside the VM's cgroup (as a VMM child that escaped the cgroup
// kill would) and fails; MicrovmVm::Start's cleanup must end that process
// before it frees the uid, so nothing runs as the uid once Start returned.
//
// Needs root (the lease directory under /run is private, chown, setpriv,
// cgroups); skipped with the reason otherwise.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include "providers/microvm/jail_uid.h"
#include "providers/microvm/microvm_vm.h"

namespace plimsoll::microvm {
namespace {

constexpr uid_t kUidBase = 972000;
constexpr uint32_t kUidCount = 4;

bool AnyProcessInRange() {
  for (uid_t uid : UidsInUse()) {
    if (uid >= kUidBase && uid < kUidBase + kUidCount) return true;
  }
  return false;
}

TEST(MicrovmUidReleaseTest, AFailedStartEndsWhatRunsAsTheUidBeforeFreeingIt) {
  if (geteuid() != 0) GTEST_SKIP() << "skipped: the uid lease and setpriv need root";
  if (access("/usr/bin/setpriv", X_OK) != 0) GTEST_SKIP() << "skipped: no /usr/bin/setpriv";
  if (auto layout = MicrovmCgroupLayout(); !layout.ok()) {
    GTEST_SKIP() << "skipped: " << layout.error().message();
  }
  ASSERT_FALSE(AnyProcessInRange()) << "something already runs as a test uid";
  char pattern[] = "/run/plimsoll-microvm-uid-release-test.XXXXXX";
  ASSERT_NE(mkdtemp(pattern), nullptr);
  const std::string dir = pattern;
  const std::string jailer = dir + "/fake-jailer";
  {
    // Leaves `sleep` running as the --uid it was given, with none of the
    // jailer's descriptors (so the channel closes when the script exits).
    std::ofstream script(jailer);
    script << "#!/bin/sh\n"
              "while [ $# -gt 0 ]; do [ \"$1\" = --uid ] && uid=$2; shift; done\n"
              "setpriv --reuid=$uid --regid=$uid --clear-groups /bin/sleep 60 "
              "</dev/null >/dev/null 2>&1 3>&- &\n"
              "pid=$!\n"
              "until grep -q \"^Uid:[[:space:]]*$uid\" /proc/$pid/status; do sleep 0.05; done\n"
              "exit 125\n";
  }
  ASSERT_EQ(chmod(jailer.c_str(), 0755), 0);
  VmConfig config;
  config.qemu = "/usr/bin/qemu-system-x86_64";
  config.kernel = dir + "/vmlinuz";
  config.initramfs = dir + "/initramfs";
  config.disk = dir + "/disk";
  config.accelerator = "tcg";
  config.state_dir = dir + "/state";
  config.jailer = jailer;
  config.uids = {dir + "/uids", kUidBase, kUidCount};

  auto vm = MicrovmVm::Start(config, std::chrono::steady_clock::now() + std::chrono::seconds(20));
  EXPECT_FALSE(vm.ok()) << "the stand-in jailer cannot boot a VM";
  bool left = AnyProcessInRange();
  EXPECT_FALSE(left) << "the uid was freed while a process still ran as it";
  if (left)
    (void)EndProcessesOf(kUidBase, std::chrono::steady_clock::now() + std::chrono::seconds(5));
  // Freed once its processes are gone: the next lease gets the same uid.
  auto lease = LeaseJailUid(config.uids);
  ASSERT_TRUE(lease.ok()) << lease.error().ToString();
  EXPECT_EQ(lease->uid(), kUidBase);
  std::error_code error;
  std::filesystem::remove_all(dir, error);
}

}  // namespace
}  // namespace plimsoll::microvm
