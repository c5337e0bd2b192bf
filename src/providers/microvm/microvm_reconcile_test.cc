// Reconcile kills only the QEMUs it can prove are its own
// (microvm_reconcile.h). Stand-in processes whose argv names a stale VM
// directory: one that meets every proof (with /bin/sleep standing in for
// the configured QEMU) is killed; decoys that each miss one proof survive,
// through ReconcileVmDirectories and through the provider's Reconcile (which
// compares with the real QEMU, so every stand-in is a decoy there).
//
// Needs root (setuid, chown, cgroups); skipped with the reason otherwise.
#include "providers/microvm/microvm_reconcile.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "os/cgroup.h"
#include "providers/microvm/microvm_provider.h"
#include "providers/microvm/microvm_vm.h"

namespace plimsoll::microvm {
namespace {

// A pid above any pid_max: this owner tag has no live process.
constexpr const char* kDeadOwner = "2147483646-5";
constexpr uid_t kUidBase = 971000;

struct StandIn {
  std::string exe = "/bin/sleep";
  uid_t uid = kUidBase;
  bool in_cgroup = true;
  pid_t pid = -1;
};

class MicrovmReconcileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "skipped: setuid, chown and cgroups need root";
    auto layout = MicrovmCgroupLayout();
    if (!layout.ok()) GTEST_SKIP() << "skipped: " << layout.error().message();
    auto cgroup = os::RunCgroup::Create(*layout, os::NextRunName(), Limits{});
    ASSERT_TRUE(cgroup.ok()) << cgroup.error().ToString();
    cgroup_.emplace(std::move(*cgroup));
    char pattern[] = "/run/plimsoll-microvm-reconcile-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    state_dir_ = pattern;
    vm_dir_ = state_dir_ + "/" + kVmDirectoryPrefix + kDeadOwner + "-0123456789abcdef";
    ASSERT_EQ(mkdir(vm_dir_.c_str(), 0700), 0);
    ASSERT_EQ(chown(vm_dir_.c_str(), kUidBase, kUidBase), 0);
    scope_.state_dir = state_dir_;
    scope_.qemu = "/bin/sleep";
    scope_.uids = {state_dir_ + "/uids", kUidBase, 8};
  }

  void TearDown() override {
    for (StandIn& process : processes_) {
      if (process.pid > 0) {
        kill(process.pid, SIGKILL);
        waitpid(process.pid, nullptr, 0);
      }
    }
    if (cgroup_) (void)cgroup_->Remove();
    std::error_code error;
    if (!state_dir_.empty()) std::filesystem::remove_all(state_dir_, error);
  }

  // Starts `process`, its argv naming the VM directory, and waits until it
  // has exec'd (its executable is the one asked for).
  void Start(StandIn& process) {
    std::vector<std::string> cgroup_procs;
    for (const std::string& dir : cgroup_->directories())
      cgroup_procs.push_back(dir + "/cgroup.procs");
    std::string console = vm_dir_ + "/console.log";
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      if (process.in_cgroup) {
        for (const std::string& procs : cgroup_procs) {
          std::ofstream(procs) << getpid();
        }
      }
      if (process.uid != 0 && (setgid(process.uid) != 0 || setuid(process.uid) != 0)) _exit(120);
      if (process.exe == "/bin/sleep") {
        execl("/bin/sleep", console.c_str(), "60", static_cast<char*>(nullptr));
      } else {
        execl(process.exe.c_str(), "sh", "-c", "while :; do sleep 1; done", console.c_str(),
              static_cast<char*>(nullptr));
      }
      _exit(121);
    }
    process.pid = pid;
    std::string expected = std::filesystem::canonical(process.exe).string();
    for (int i = 0; i < 200; ++i) {
      std::error_code error;
      auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", error);
      if (!error && exe.string() == expected) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    FAIL() << "the stand-in " << process.exe << " did not start";
  }

  static bool Alive(const StandIn& process) { return waitpid(process.pid, nullptr, WNOHANG) == 0; }

  std::optional<os::RunCgroup> cgroup_;
  std::string state_dir_, vm_dir_;
  VmReconcileScope scope_;
  std::vector<StandIn> processes_;
};

TEST_F(MicrovmReconcileTest, KillsOnlyAProvableQemuOfAStaleDirectory) {
  processes_ = {
      {},                     // every proof holds: ours
      {.exe = "/bin/sh"},     // another executable
      {.uid = 0},             // root, not a jail uid
      {.uid = 65534},         // outside the jail range
      {.uid = kUidBase + 1},  // a jail uid not owning the directory
      {.in_cgroup = false},   // outside our VM cgroups
  };
  for (StandIn& process : processes_) ASSERT_NO_FATAL_FAILURE(Start(process));
  VmReconcileOutcome outcome = ReconcileVmDirectories(scope_);
  EXPECT_EQ(outcome.problems, "");
  ASSERT_EQ(outcome.killed.size(), 1u);
  EXPECT_EQ(outcome.killed[0], processes_[0].pid);
  EXPECT_FALSE(Alive(processes_[0]));
  processes_[0].pid = -1;  // reaped above
  for (size_t i = 1; i < processes_.size(); ++i) {
    EXPECT_TRUE(Alive(processes_[i])) << "decoy " << i << " (" << processes_[i].exe << ", uid "
                                      << processes_[i].uid << ") was killed";
  }
  EXPECT_EQ(outcome.spared.size(), processes_.size() - 1);
  EXPECT_FALSE(std::filesystem::exists(vm_dir_)) << "the stale directory is still there";
}

TEST_F(MicrovmReconcileTest, TheProvidersReconcileSparesProcessesThatOnlyNameAStaleDirectory) {
  // Against the real QEMU binary every stand-in is a decoy, even one that
  // otherwise looks like a jailed QEMU in our cgroup.
  processes_ = {{}, {.exe = "/bin/sh", .uid = 0, .in_cgroup = false}};
  for (StandIn& process : processes_) ASSERT_NO_FATAL_FAILURE(Start(process));
  MicrovmSettings settings;
  settings.state_dir = state_dir_;
  settings.jail_uid_base = kUidBase;
  settings.pool_size = 0;
  auto provider = MakeMicrovmProvider(Limits{}, settings);
  Status reconciled = provider->Reconcile();
  EXPECT_TRUE(reconciled.ok()) << reconciled.error().ToString();
  for (const StandIn& process : processes_) {
    EXPECT_TRUE(Alive(process)) << process.exe << " naming a stale VM directory was killed";
  }
  EXPECT_FALSE(std::filesystem::exists(vm_dir_));
}

}  // namespace
}  // namespace plimsoll::microvm
