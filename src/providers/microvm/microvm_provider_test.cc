// The `microvm` provider against real QEMU VMs (issue 7, second slice): the
// tier is honest (TCG never yields `vm`; `auto` here ends in TCG with its
// reason), runs work cold and from the warm pool, a timeout ends the VM and
// nothing is left, Reconcile removes a crashed provider's VMs, and KVM is
// refused (or, where it works, proven) with its reason.
//
// Each test uses its own state directory. Skipped with the reason where QEMU
// or the guest artifacts (PLIMSOLL_MICROVM_DIR, set by ctest) are missing.
#include "providers/microvm/microvm_provider.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "os/owner.h"
#include "os/spawn.h"
#include "plimsoll/provider.h"
#include "providers/microvm/microvm_test_support.h"

namespace plimsoll {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

std::string FactOf(const Evidence& evidence, const std::string& name) {
  for (const auto& [key, value] : evidence.facts) {
    if (key == name) return value;
  }
  return "";
}

std::string DetailOf(const Description& description, const std::string& name) {
  for (const auto& [key, value] : description.details) {
    if (key == name) return value;
  }
  return "";
}

std::string ChecksText(const Evidence& evidence) {
  std::string text;
  for (const EvidenceCheck& check : evidence.checks) {
    text += (check.passed ? "  pass " : "  FAIL ") + check.name + ": " + check.detail + "\n";
  }
  return text;
}

Request Javascript(const std::string& code, int64_t timeout_ms = 10'000) {
  Request request;
  request.javascript = JavascriptPayload{code};
  request.timeout_ms = timeout_ms;
  return request;
}

class MicrovmProviderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    PLIMSOLL_REQUIRE_HOST("microvm");
    unsetenv("SANDBOX_MICROVM_ACCEL");
    char pattern[] = "/tmp/plimsoll-microvm-provider-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    state_dir_ = pattern;
  }
  void TearDown() override {
    if (state_dir_.empty()) return;
    EXPECT_TRUE(microvm::ProcessesMentioning(state_dir_ + "/").empty())
        << "a QEMU still names " << state_dir_;
    std::error_code error;
    std::filesystem::remove_all(state_dir_, error);
  }

  MicrovmSettings Settings(MicrovmAccel accel, size_t pool_size) const {
    MicrovmSettings settings;
    settings.accel = accel;
    settings.pool_size = pool_size;
    settings.state_dir = state_dir_;
    return settings;
  }

  size_t VmDirectories() const {
    size_t count = 0;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(state_dir_, error)) {
      if (entry.path().filename().string().rfind("vm-", 0) == 0) ++count;
    }
    return count;
  }

  std::string state_dir_;
};

// `auto` on this machine: /dev/kvm exists but KVM cannot boot Debian's
// kernel, so the bounded probe fails and the provider says tcg and kernel.
// Then the pool fills and serves JavaScript and Python runs.
TEST_F(MicrovmProviderTest, AutoEndsInTcgWithTierKernelAndThePoolServes) {
  auto provider = MakeMicrovmProvider(Limits{}, Settings(MicrovmAccel::kAuto, 1));
  ASSERT_TRUE(provider->Reconcile().ok());
  Description before = provider->Describe();
  EXPECT_NE(before.tier, Tier::kVm);
  ASSERT_TRUE(before.pool.has_value());
  EXPECT_FALSE(before.pool->enabled);

  Clock::time_point start = Clock::now();
  auto evidence = provider->SmokeTest(Clock::now() + seconds(300));
  ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
  std::cout << "smoke test (with the KVM probe): "
            << std::chrono::duration_cast<milliseconds>(Clock::now() - start).count() << " ms\n"
            << evidence->summary << "\n"
            << ChecksText(*evidence);
  std::string accelerator = FactOf(*evidence, "accelerator");
  if (accelerator.rfind("kvm", 0) == 0) {
    // A host where KVM works: vm, proven.
    EXPECT_EQ(evidence->tier, Tier::kVm) << ChecksText(*evidence);
  } else {
    EXPECT_EQ(accelerator.rfind("qemu-tcg", 0), 0u) << accelerator;
    EXPECT_NE(accelerator.find("SANDBOX_MICROVM_ACCEL=auto"), std::string::npos) << accelerator;
    EXPECT_NE(accelerator.find("kvm"), std::string::npos) << "no reason: " << accelerator;
    EXPECT_EQ(evidence->tier, Tier::kKernel) << ChecksText(*evidence);
    EXPECT_NE(FactOf(*evidence, "tier_note").find("never vm"), std::string::npos);
  }
  ASSERT_TRUE(evidence->AllChecksPassed()) << ChecksText(*evidence);
  EXPECT_NE(FactOf(*evidence, "qemu").find("QEMU emulator version"), std::string::npos);
  EXPECT_NE(FactOf(*evidence, "kernel").find("cloud-amd64"), std::string::npos);
  EXPECT_EQ(FactOf(*evidence, "image").rfind("sha256:", 0), 0u);
  EXPECT_NE(FactOf(*evidence, "artifacts_sha256").find("rootfs.erofs "), std::string::npos);
  // The jail and QMP, checked from the host (microvm_jail_test has the details).
  for (const char* name : {"jail_user", "jail_capabilities", "jail_no_new_privs", "jail_seccomp",
                           "jail_namespaces", "jail_root", "jail_cgroup", "qmp_accelerator"}) {
    bool found = false;
    for (const EvidenceCheck& check : evidence->checks) found = found || check.name == name;
    EXPECT_TRUE(found) << "no check " << name << "\n" << ChecksText(*evidence);
  }
  EXPECT_NE(FactOf(*evidence, "jail").find("plimsoll-vmm-jail"), std::string::npos);
  if (accelerator.rfind("kvm", 0) != 0) {
    EXPECT_NE(FactOf(*evidence, "qmp").find("query-kvm {enabled: false"), std::string::npos)
        << FactOf(*evidence, "qmp");
  }

  // The pool fills after the smoke test.
  Clock::time_point filling = Clock::now();
  Description described;
  do {
    std::this_thread::sleep_for(milliseconds(200));
    described = provider->Describe();
  } while (described.pool->ready < 1 && Clock::now() < filling + seconds(120));
  std::cout << "pool: " << DetailOf(described, "pool")
            << "\naccelerator: " << DetailOf(described, "accelerator")
            << "\nqemu: " << DetailOf(described, "qemu")
            << "\nkernel: " << DetailOf(described, "kernel") << "\n";
  EXPECT_TRUE(described.pool->enabled);
  EXPECT_EQ(described.pool->ready, 1u) << DetailOf(described, "pool");
  EXPECT_NE(DetailOf(described, "accelerator"), "");
  EXPECT_NE(DetailOf(described, "qemu").find("QEMU"), std::string::npos);
  EXPECT_NE(described.tier, accelerator.rfind("kvm", 0) == 0 ? Tier::kKernel : Tier::kVm);

  auto js = provider->Run(Javascript("console.log(6*7)"), Clock::now() + seconds(10));
  ASSERT_TRUE(js.ok()) << js.error().ToString();
  EXPECT_EQ(js->stdout_bytes, "42\n") << js->stderr_bytes;
  EXPECT_EQ(js->exit_code, 0);
  EXPECT_EQ(js->isolation, evidence->tier);
  EXPECT_EQ(provider->Describe().pool->handed_out, 1u);

  Request python;
  python.python = PythonPayload{"import os\nprint(6*7, os.getuid(), os.uname().release)"};
  python.timeout_ms = 20'000;
  auto py = provider->Run(python, Clock::now() + seconds(20));
  ASSERT_TRUE(py.ok()) << py.error().ToString();
  EXPECT_EQ(py->stdout_bytes.rfind("42 1000 ", 0), 0u) << py->stdout_bytes << py->stderr_bytes;
  EXPECT_NE(py->stdout_bytes.find("cloud-amd64"), std::string::npos) << py->stdout_bytes;

  // Pooled JavaScript runs: wait for a ready VM before each, then time it.
  std::vector<int64_t> pooled_ms;
  for (int i = 0; i < 10; ++i) {
    Clock::time_point wait = Clock::now();
    while (provider->Describe().pool->ready < 1 && Clock::now() < wait + seconds(120)) {
      std::this_thread::sleep_for(milliseconds(100));
    }
    Clock::time_point run_start = Clock::now();
    auto run = provider->Run(Javascript("console.log(6*7)"), Clock::now() + seconds(10));
    int64_t took = std::chrono::duration_cast<milliseconds>(Clock::now() - run_start).count();
    ASSERT_TRUE(run.ok()) << run.error().ToString();
    EXPECT_EQ(run->stdout_bytes, "42\n");
    pooled_ms.push_back(took);
  }
  std::sort(pooled_ms.begin(), pooled_ms.end());
  std::cout << "pooled JavaScript runs (ms, sorted):";
  for (int64_t ms : pooled_ms) std::cout << " " << ms;
  std::cout << "\npooled p50: " << pooled_ms[pooled_ms.size() / 2] << " ms\n"
            << "pool: " << DetailOf(provider->Describe(), "pool") << "\n";
  RecordProperty("pooled_js_p50_ms", std::to_string(pooled_ms[pooled_ms.size() / 2]));
  provider.reset();
  EXPECT_EQ(VmDirectories(), 0u);
}

// TCG never yields vm, and a run past its timeout is answered as timed out;
// the VM is killed and nothing of it is left.
TEST_F(MicrovmProviderTest, TimeoutEndsTheVmAndLeavesNothing) {
  auto provider = MakeMicrovmProvider(Limits{}, Settings(MicrovmAccel::kTcg, 0));
  EXPECT_EQ(provider->Describe().tier, Tier::kKernel);
  // No configuration runs before its smoke test passed (issue 13).
  auto early = provider->Run(Javascript("console.log(1)"), Clock::now() + seconds(5));
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(early.error().not_dispatched(), NotDispatched::kEnvironment);
  auto evidence = provider->SmokeTest(Clock::now() + seconds(300));
  ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
  ASSERT_TRUE(evidence->AllChecksPassed()) << ChecksText(*evidence);
  Clock::time_point start = Clock::now();
  auto run = provider->Run(Javascript("for (;;) {}", 2'000), Clock::now() + seconds(2));
  ASSERT_TRUE(run.ok()) << run.error().ToString();
  std::cout << "cold run with a 2 s timeout: "
            << std::chrono::duration_cast<milliseconds>(Clock::now() - start).count() << " ms\n";
  EXPECT_TRUE(run->timed_out);
  EXPECT_EQ(run->exit_code, 124) << run->stderr_bytes;
  EXPECT_EQ(run->isolation, Tier::kKernel);
  provider.reset();  // drains the destroyer
  EXPECT_TRUE(microvm::ProcessesMentioning(state_dir_ + "/").empty());
  EXPECT_EQ(VmDirectories(), 0u);
}

// A session's VM is booted for it (no pool) and keeps its interpreters;
// outside a session a cell is refused. Killing QEMU from the host ends the
// session at its next boundary check: nothing runs in a VM that is gone.
TEST_F(MicrovmProviderTest, ASessionKeepsItsVmAndEndsAtTheBoundaryWhenQemuDies) {
  auto provider = MakeMicrovmProvider(Limits{}, Settings(MicrovmAccel::kTcg, 0));
  EXPECT_TRUE(provider->Describe().capabilities.sessions);
  Request cell;
  cell.cell = CellPayload{"python", "x = 41"};
  cell.timeout_ms = 30'000;
  auto outside = provider->Run(cell, Clock::now() + seconds(5));
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.error().not_dispatched(), NotDispatched::kUnsupported);
  auto evidence = provider->SmokeTest(Clock::now() + seconds(300));
  ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
  ASSERT_TRUE(evidence->AllChecksPassed()) << ChecksText(*evidence);

  Clock::time_point start = Clock::now();
  auto session = provider->OpenSession(SessionSpec{}, Clock::now() + seconds(60));
  ASSERT_TRUE(session.ok()) << session.error().ToString();
  std::cout << "session VM booted in "
            << std::chrono::duration_cast<milliseconds>(Clock::now() - start).count() << " ms\n";
  EXPECT_EQ((*session)->tier(), Tier::kKernel);
  ASSERT_TRUE((*session)->CheckBoundary().ok());
  auto first = (*session)->Run(cell, Clock::now() + seconds(30));
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  ASSERT_TRUE(first->cell.has_value()) << first->stderr_bytes;
  EXPECT_TRUE(first->cell->interpreter_started);
  EXPECT_EQ(first->isolation, Tier::kKernel);
  ASSERT_TRUE((*session)->CheckBoundary().ok());
  cell.cell = CellPayload{"python", "x + 1"};
  auto second = (*session)->Run(cell, Clock::now() + seconds(30));
  ASSERT_TRUE(second.ok()) << second.error().ToString();
  ASSERT_TRUE(second->cell.has_value());
  EXPECT_EQ(second->cell->value, "42") << second->stderr_bytes;
  EXPECT_FALSE(second->cell->interpreter_started);
  EXPECT_EQ((*session)->InterpretersAlive(), std::vector<std::string>{"python"});

  // Every QEMU of this test's state directory: the session's, and any the
  // smoke test left powering off.
  for (pid_t pid : microvm::ProcessesMentioning(state_dir_ + "/")) kill(pid, SIGKILL);
  Status boundary = Status::Ok();
  for (int i = 0; i < 500 && boundary.ok(); ++i) {
    std::this_thread::sleep_for(milliseconds(10));
    boundary = (*session)->CheckBoundary();
  }
  ASSERT_FALSE(boundary.ok()) << "the session's VM still looks healthy after QEMU was killed";
  EXPECT_NE(boundary.error().message().find("QEMU"), std::string::npos)
      << boundary.error().ToString();
  auto after = (*session)->Run(cell, Clock::now() + seconds(5));
  ASSERT_FALSE(after.ok());
  EXPECT_TRUE(after.error().not_dispatched().has_value()) << after.error().ToString();
  session->reset();
  provider.reset();
  EXPECT_EQ(VmDirectories(), 0u);
}

// A crashed provider's VM directories are removed; a live owner's are not.
// Processes whose command line merely names a stale VM directory (stand-ins:
// not the configured QEMU, not a jail uid, not in our cgroup) are spared:
// Reconcile kills only QEMUs it can prove are its own (issue 13;
// microvm_reconcile_test.cc has the provable ones).
TEST_F(MicrovmProviderTest, ReconcileRemovesLeftoverVmsAndSparesProcessesItCannotProveItsOwn) {
  std::string directory = state_dir_ + "/vm-00112233aabbccdd";
  ASSERT_TRUE(std::filesystem::create_directory(directory));
  os::SpawnOptions options;
  options.argv = {"/bin/sh", "-c", "sleep 600", directory + "/console.log"};
  auto child = os::Spawn(options);
  ASSERT_TRUE(child.ok()) << child.error().ToString();
  // A second VM directory and its process.
  std::string unrecorded = state_dir_ + "/vm-44556677eeff0011";
  ASSERT_TRUE(std::filesystem::create_directory(unrecorded));
  options.argv = {"/bin/sh", "-c", "sleep 600", unrecorded + "/console.log"};
  auto orphan = os::Spawn(options);
  ASSERT_TRUE(orphan.ok()) << orphan.error().ToString();
  // Another directory's process is not touched.
  std::string other = state_dir_ + "/unrelated";
  ASSERT_TRUE(std::filesystem::create_directory(other));
  // Nor a live owner's VM (ours here: a daemon sharing the state directory).
  std::string live = state_dir_ + "/vm-" + os::OwnerTag() + "-8899aabbccddeeff";
  ASSERT_TRUE(std::filesystem::create_directory(live));
  options.argv = {"/bin/sh", "-c", "sleep 600", live + "/console.log"};
  auto running = os::Spawn(options);
  ASSERT_TRUE(running.ok()) << running.error().ToString();

  auto provider = MakeMicrovmProvider(Limits{}, Settings(MicrovmAccel::kTcg, 0));
  ASSERT_TRUE(provider->Reconcile().ok());
  EXPECT_FALSE(child->Exited());  // a decoy: its argv names a stale VM directory
  EXPECT_FALSE(orphan->Exited());
  child->KillAndReap();
  orphan->KillAndReap();
  EXPECT_FALSE(std::filesystem::exists(unrecorded));
  EXPECT_FALSE(std::filesystem::exists(directory));
  EXPECT_TRUE(std::filesystem::exists(other));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_FALSE(running->Exited());
  running->KillAndReap();
}

// SANDBOX_MICROVM_ACCEL=kvm: where KVM cannot boot the guest (this machine),
// a refusal naming the reason; where it can, tier vm proven by the smoke test.
TEST_F(MicrovmProviderTest, KvmIsRefusedWithItsReasonOrProven) {
  setenv("SANDBOX_MICROVM_ACCEL", "kvm", 1);
  auto settings = MicrovmSettingsFromEnvironment();
  unsetenv("SANDBOX_MICROVM_ACCEL");
  ASSERT_TRUE(settings.ok());
  ASSERT_EQ(settings->accel, MicrovmAccel::kKvm);
  settings->state_dir = state_dir_;
  settings->pool_size = 0;
  auto provider = MakeMicrovmProvider(Limits{}, *settings);
  Status preflight = provider->Preflight();
  if (!preflight.ok()) {
    EXPECT_EQ(preflight.error().not_dispatched(), NotDispatched::kEnvironment);
    EXPECT_NE(preflight.error().message().find("KVM does not work here"), std::string::npos)
        << preflight.error().message();
    auto run = provider->Run(Javascript("console.log(1)"), Clock::now() + seconds(5));
    ASSERT_FALSE(run.ok());
    EXPECT_EQ(run.error().not_dispatched(), NotDispatched::kEnvironment);
    GTEST_SKIP() << "skipped: KVM does not work here, so the positive KVM path (tier vm) is not "
                    "tested: "
                 << preflight.error().message().substr(0, 400);
  }
  auto evidence = provider->SmokeTest(Clock::now() + seconds(120));
  ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
  EXPECT_EQ(evidence->tier, Tier::kVm) << ChecksText(*evidence);
  // `vm` rests on QMP's query-kvm (TCG shows the guest a hypervisor flag too).
  bool proven = false;
  for (const EvidenceCheck& check : evidence->checks) {
    if (check.name == "qmp_accelerator") proven = check.passed;
  }
  EXPECT_TRUE(proven) << ChecksText(*evidence);
}

TEST(MicrovmSettingsTest, BadValuesAreRefusals) {
  setenv("SANDBOX_MICROVM_ACCEL", "hvf", 1);
  auto settings = MicrovmSettingsFromEnvironment();
  unsetenv("SANDBOX_MICROVM_ACCEL");
  ASSERT_FALSE(settings.ok());
  EXPECT_NE(settings.error().message().find("SANDBOX_MICROVM_ACCEL"), std::string::npos);
  setenv("SANDBOX_MICROVM_POOL_SIZE", "lots", 1);
  settings = MicrovmSettingsFromEnvironment();
  unsetenv("SANDBOX_MICROVM_POOL_SIZE");
  ASSERT_FALSE(settings.ok());
  for (const char* bad : {"0", "-5", "root", "4294967295", "900000x"}) {
    setenv("SANDBOX_MICROVM_JAIL_UID_BASE", bad, 1);
    settings = MicrovmSettingsFromEnvironment();
    ASSERT_FALSE(settings.ok()) << bad;
    EXPECT_NE(settings.error().message().find("SANDBOX_MICROVM_JAIL_UID_BASE"), std::string::npos);
  }
  setenv("SANDBOX_MICROVM_JAIL_UID_BASE", "1200000", 1);
  settings = MicrovmSettingsFromEnvironment();
  unsetenv("SANDBOX_MICROVM_JAIL_UID_BASE");
  ASSERT_TRUE(settings.ok());
  EXPECT_EQ(settings->jail_uid_base, 1200000u);
  settings = MicrovmSettingsFromEnvironment();
  ASSERT_TRUE(settings.ok());
  EXPECT_EQ(settings->jail_uid_base, 900000u);
  EXPECT_EQ(settings->accel, MicrovmAccel::kAuto);
  EXPECT_EQ(settings->pool_size, 1u);
  auto made = MakeProvider("microvm", Limits{});
  ASSERT_TRUE(made.ok());
  EXPECT_EQ((*made)->name(), "microvm");
}

// Issue 13: a microvm generation boots the artifacts it verified, held
// open, whatever the build's directory holds later (before, QEMU reopened
// the files by path at every boot while the digests were kept for the
// process). Here the directory is replaced by a build whose disk is not
// bootable: runs keep booting the held disk under the old identity, and the
// new build's smoke test fails, so it never serves.
TEST_F(MicrovmProviderTest, ReplacedArtifactsAreNotBootedBeforeTheirSmokeTest) {
  const char* real = std::getenv("PLIMSOLL_MICROVM_DIR");
  ASSERT_NE(real, nullptr) << "ctest sets PLIMSOLL_MICROVM_DIR";
  std::string artifacts = state_dir_ + "/build";
  auto copy = [&](const std::string& to) {
    std::string command = "cp -a '" + std::string(real) + "' '" + to + "'";
    return std::system(command.c_str()) == 0;
  };
  ASSERT_TRUE(copy(artifacts));
  std::string old_dir = real;
  setenv("PLIMSOLL_MICROVM_DIR", artifacts.c_str(), 1);
  {
    auto provider = MakeMicrovmProvider(Limits{}, Settings(MicrovmAccel::kTcg, 1));
    auto evidence = provider->SmokeTest(Clock::now() + seconds(300));
    ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
    ASSERT_TRUE(evidence->AllChecksPassed()) << ChecksText(*evidence);
    const std::string identity = evidence->environment;
    ASSERT_FALSE(identity.empty());
    // A VM of the tested generation, booted before the rebuild.
    Clock::time_point filling = Clock::now();
    while (provider->Describe().pool->ready < 1 && Clock::now() < filling + seconds(120)) {
      std::this_thread::sleep_for(milliseconds(200));
    }
    ASSERT_EQ(provider->Describe().pool->ready, 1u);

    // The build's directory replaced the way image/microvm/build.sh does
    // (rm -rf, then mv): another identity, a disk of zeros, sums to match.
    std::string next = state_dir_ + "/build.partial";
    ASSERT_TRUE(copy(next));
    std::ofstream(next + "/rootfs.erofs", std::ios::trunc) << std::string(1 << 20, '\0');
    std::ofstream(next + "/identity", std::ios::trunc) << "sha256:" << std::string(64, 'b') << "\n";
    ASSERT_EQ(std::system(("cd '" + next +
                           "' && sha256sum vmlinuz initramfs.cpio.gz rootfs.erofs > sha256sums")
                              .c_str()),
              0);
    std::filesystem::remove_all(artifacts);
    std::filesystem::rename(next, artifacts);

    EXPECT_TRUE(provider->Preflight().ok());  // checks, installs nothing
    // The pooled VM runs the tested artifacts, under their identity.
    auto held = provider->Run(Javascript("console.log(6*7)"), Clock::now() + seconds(10));
    ASSERT_TRUE(held.ok()) << held.error().ToString();
    EXPECT_EQ(held->stdout_bytes, "42\n") << held->stderr_bytes;
    EXPECT_EQ(held->environment, identity);
    // A new VM cannot boot removed files: refused, nothing ran (before, QEMU
    // booted the new disk under the old identity).
    auto cold = provider->Run(Javascript("console.log(6*7)"), Clock::now() + seconds(10));
    ASSERT_FALSE(cold.ok());
    EXPECT_EQ(cold.error().not_dispatched(), NotDispatched::kEnvironment)
        << cold.error().ToString();

    auto replaced = provider->SmokeTest(Clock::now() + seconds(120));
    EXPECT_FALSE(replaced.ok() && replaced->AllChecksPassed());
    Request wants_new = Javascript("console.log(1)");
    wants_new.environment = "sha256:" + std::string(64, 'b');
    auto refused = provider->Run(wants_new, Clock::now() + seconds(10));
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().not_dispatched(), NotDispatched::kEnvironment);
  }
  setenv("PLIMSOLL_MICROVM_DIR", old_dir.c_str(), 1);
}

}  // namespace
}  // namespace plimsoll
