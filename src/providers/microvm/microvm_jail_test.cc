// One VM booted through plimsoll-vmm-jail under TCG, checked from the host
// through /proc/<QEMU pid> (independently of InspectJail, which is checked
// too): an unprivileged uid of its own, no capabilities, no_new_privs,
// QEMU's seccomp filter, its own mount/network/IPC/UTS namespaces, a root
// holding only the jail, its cgroup with the limits; QMP's query-kvm says
// KVM is not enabled under TCG; Destroy leaves no process, cgroup, directory
// or uid lease; Reconcile removes a crashed owner's VM cgroup; a jailer that
// cannot build the jail says why in one line and starts nothing.
//
// Skipped with the reason where QEMU or the guest artifacts
// (PLIMSOLL_MICROVM_DIR, set by ctest) are missing, or when not root.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "os/spawn.h"
#include "providers/microvm/jail_evidence.h"
#include "providers/microvm/jail_spec.h"
#include "providers/microvm/microvm_provider.h"
#include "providers/microvm/microvm_test_support.h"
#include "providers/microvm/microvm_vm.h"

namespace plimsoll::microvm {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

bool Exists(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0;
}

class MicrovmJailTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PLIMSOLL_REQUIRE_HOST("microvm");
    Status startable = MicrovmVmCanStart();
    ASSERT_TRUE(startable.ok()) << startable.error().ToString();
    char pattern[] = "/tmp/plimsoll-microvm-jail-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    state_dir_ = pattern;
    config_ = TcgVmConfig(state_dir_);
  }
  void TearDown() override {
    if (state_dir_.empty()) return;
    std::error_code error;
    std::filesystem::remove_all(state_dir_, error);
  }

  std::string state_dir_;
  VmConfig config_;
};

TEST_F(MicrovmJailTest, QemuRunsJailedAndDestroyLeavesNothing) {
  auto started = MicrovmVm::Start(config_, Clock::now() + seconds(120));
  ASSERT_TRUE(started.ok()) << started.error().ToString();
  MicrovmVm& vm = **started;
  std::cout << "boot through the jail: " << vm.boot_time().count() << " ms\n";
  const pid_t pid = vm.pid();
  const std::string proc = "/proc/" + std::to_string(pid);
  const uid_t uid = vm.jail().uid;

  // Credentials.
  auto status = ReadProcStatus(pid);
  EXPECT_EQ(status["Name"].rfind("qemu", 0), 0u) << status["Name"];
  std::string ids = std::to_string(uid);
  EXPECT_NE(uid, 0u);
  EXPECT_GE(uid, kDefaultJailUidBase);
  EXPECT_EQ(status["Uid"], ids + "\t" + ids + "\t" + ids + "\t" + ids);
  EXPECT_EQ(status["Gid"], ids + "\t" + ids + "\t" + ids + "\t" + ids);
  EXPECT_EQ(status["Groups"], "");
  for (const char* set : {"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"}) {
    EXPECT_EQ(status[set], "0000000000000000") << set;
  }
  EXPECT_EQ(status["NoNewPrivs"], "1");
  EXPECT_EQ(status["Seccomp"], "2");

  // Namespaces.
  for (const char* ns : {"mnt", "net", "ipc", "uts"}) {
    EXPECT_NE(std::filesystem::read_symlink(proc + "/ns/" + ns),
              std::filesystem::read_symlink(std::string("/proc/self/ns/") + ns))
        << ns;
  }
  EXPECT_EQ(std::filesystem::read_symlink(proc + "/ns/pid"),
            std::filesystem::read_symlink("/proc/self/ns/pid"));  // by design (docs)

  // Its root: only the jail.
  const std::string root = proc + "/root";
  for (const char* absent :
       {"/root", "/home", "/proc", "/sys", "/etc/passwd", "/etc/shadow", "/var", "/boot"}) {
    EXPECT_FALSE(Exists(root + absent)) << absent;
  }
  EXPECT_TRUE(Exists(root + "/usr/bin/qemu-system-x86_64"));
  EXPECT_TRUE(Exists(root + "/dev/null"));
  EXPECT_FALSE(Exists(root + "/dev/kvm"));  // TCG: no /dev/kvm
  EXPECT_FALSE(Exists(root + "/dev/mem"));
  EXPECT_TRUE(Exists(root + config_.kernel));
  EXPECT_TRUE(Exists(root + vm.directory() + "/console.log"));
  EXPECT_TRUE(Exists(vm.directory() + "/console.log"));  // the same directory on the host
  EXPECT_TRUE(Exists(vm.directory() + "/qmp.sock"));
  struct stat directory {};
  ASSERT_EQ(stat(vm.directory().c_str(), &directory), 0);
  EXPECT_EQ(directory.st_uid, uid);
  EXPECT_EQ(directory.st_mode & 07777, 0700u);
  std::string mountinfo = ReadSmallTextFile(proc + "/mountinfo");
  bool tmpfs_root = false;
  std::istringstream mounts(mountinfo);
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream fields(line);
    std::string id, parent, devices, source_root, mount_point, options;
    fields >> id >> parent >> devices >> source_root >> mount_point >> options;
    if (mount_point == "/") {
      tmpfs_root = line.find(" - tmpfs ") != std::string::npos && options.rfind("ro,", 0) == 0;
    }
    if (mount_point == "/usr" || mount_point == config_.disk) {
      EXPECT_EQ(options.rfind("ro,", 0), 0u) << line;
    }
    EXPECT_EQ(mount_point.rfind("/proc", 0), std::string::npos) << line;
  }
  EXPECT_TRUE(tmpfs_root) << mountinfo;

  // Its cgroup and limits.
  std::string cgroups = ReadSmallTextFile(proc + "/cgroup");
  EXPECT_NE(cgroups.find(std::string(":/") + kMicrovmCgroupParent + "/"), std::string::npos)
      << cgroups;
  std::map<std::string, std::string> limits;
  for (const auto& [file, value] : vm.CgroupLimits()) limits[file] = value;
  std::string memory = std::to_string((config_.memory_mib + kVmmOverheadMiB) << 20);
  EXPECT_TRUE(limits["memory.limit_in_bytes"] == memory || limits["memory.max"] == memory);
  EXPECT_EQ(limits["pids.max"], std::to_string(kVmmPids));
  ASSERT_FALSE(vm.jail().cgroups.empty());

  // QMP: TCG, so KVM is not enabled; the VM runs.
  EXPECT_FALSE(vm.qmp().kvm_enabled);
  EXPECT_EQ(vm.qmp().status, "running");
  EXPECT_EQ(vm.qmp().version.rfind("7.", 0), 0u) << vm.qmp().version;

  // The provider's own inspection agrees.
  for (const EvidenceCheck& check : InspectJail(vm)) {
    EXPECT_TRUE(check.passed) << check.name << ": " << check.detail;
  }

  std::vector<std::string> cgroup_dirs = vm.jail().cgroups;
  std::string vm_dir = vm.directory();
  ASSERT_TRUE(vm.Destroy(Clock::now() + seconds(10)).ok());
  EXPECT_TRUE(kill(pid, 0) != 0 && errno == ESRCH) << "QEMU " << pid << " survived";
  for (const std::string& dir : cgroup_dirs) EXPECT_FALSE(Exists(dir)) << dir;
  EXPECT_FALSE(Exists(vm_dir));
  // The uid is free again.
  UidRange just_that;
  just_that.base = uid;
  just_that.count = 1;
  auto lease = LeaseJailUid(just_that);
  ASSERT_TRUE(lease.ok()) << lease.error().message();
}

// The second VM also lives under a state directory so deep that its QMP
// socket's absolute path would not fit a sockaddr_un (107 bytes): QEMU
// names the socket relative to its working directory, the VM directory.
TEST_F(MicrovmJailTest, TwoLiveVmsGetDistinctUids) {
  auto first = MicrovmVm::Start(config_, Clock::now() + seconds(120));
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  VmConfig deep = config_;
  deep.state_dir = state_dir_ + "/" + std::string(60, 'd') + "/" + std::string(40, 'e');
  auto second = MicrovmVm::Start(deep, Clock::now() + seconds(120));
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  EXPECT_GT((*second)->directory().size() + 1 + std::strlen(kQmpSocketName), 107u);
  EXPECT_NE((*first)->jail().uid, (*second)->jail().uid);
  EXPECT_NE((*first)->jail().cgroups, (*second)->jail().cgroups);
}

TEST_F(MicrovmJailTest, AJailThatCannotBeBuiltSaysWhyAndStartsNothing) {
  auto jailer = LocateJailer();
  ASSERT_TRUE(jailer.ok()) << jailer.error().message();
  JailSpec spec = QemuJailSpec({"/usr/bin/qemu-system-x86_64", "-version"},
                               {"/nonexistent/vmlinuz"}, state_dir_, 900999, 900999, false);
  os::SpawnOptions options;
  options.argv = JailCommandLine(*jailer, spec);
  auto ran = os::RunCommand(options, Clock::now() + seconds(30));
  ASSERT_TRUE(ran.ok()) << ran.error().message();
  EXPECT_TRUE(WIFEXITED(ran->status) && WEXITSTATUS(ran->status) == kJailFailureExit)
      << ran->output;
  EXPECT_NE(ran->output.find("plimsoll-vmm-jail: lstat /nonexistent/vmlinuz"), std::string::npos)
      << ran->output;
  EXPECT_EQ(ran->output.find("QEMU emulator"), std::string::npos) << ran->output;

  options.argv = {*jailer, "--uid", "0", "--gid", "0", "--", "/usr/bin/true"};
  ran = os::RunCommand(options, Clock::now() + seconds(30));
  ASSERT_TRUE(ran.ok());
  EXPECT_TRUE(WIFEXITED(ran->status) && WEXITSTATUS(ran->status) == kJailFailureExit)
      << ran->output;
  EXPECT_NE(ran->output.find("plimsoll-vmm-jail: bad command line"), std::string::npos)
      << ran->output;
}

// A crashed provider's VM cgroup (owner pid gone) is killed and removed by
// Reconcile; a live owner's is not touched.
TEST_F(MicrovmJailTest, ReconcileRemovesACrashedOwnersCgroup) {
  auto layout = MicrovmCgroupLayout();
  ASSERT_TRUE(layout.ok());
  std::vector<std::string> stale;
  for (const std::string& parent : layout->ParentDirectories()) {
    stale.push_back(parent + "/999999998-1-1");
    ASSERT_EQ(mkdir(stale.back().c_str(), 0755), 0) << stale.back();
  }
  os::SpawnOptions sleeper;
  sleeper.argv = {"/bin/sleep", "600"};
  auto child = os::Spawn(sleeper);
  ASSERT_TRUE(child.ok());
  for (const std::string& dir : stale) {
    std::ofstream(dir + "/cgroup.procs") << child->pid();
  }
  auto live = MicrovmVm::Start(config_, Clock::now() + seconds(120));
  ASSERT_TRUE(live.ok()) << live.error().ToString();

  MicrovmSettings settings;
  settings.accel = MicrovmAccel::kTcg;
  settings.pool_size = 0;
  settings.state_dir = state_dir_ + "/other";
  auto provider = MakeMicrovmProvider(Limits{}, settings);
  ASSERT_TRUE(provider->Reconcile().ok());
  auto ended = child->Wait(Clock::now() + seconds(5));
  ASSERT_TRUE(ended.has_value());
  EXPECT_TRUE(WIFSIGNALED(*ended) && WTERMSIG(*ended) == SIGKILL);
  for (const std::string& dir : stale) EXPECT_FALSE(Exists(dir)) << dir;
  EXPECT_TRUE((*live)->Healthy());
  for (const std::string& dir : (*live)->jail().cgroups) EXPECT_TRUE(Exists(dir)) << dir;
}

}  // namespace
}  // namespace plimsoll::microvm
