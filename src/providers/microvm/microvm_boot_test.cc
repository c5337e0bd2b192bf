// Boots the microvm guest (image/microvm/build.sh: Debian's cloud kernel, our
// initramfs, the guest image as a read-only EROFS disk) the way the provider
// does (MicrovmVm::Start: the jailer, QEMU's microvm machine under TCG, QMP)
// and runs real jobs through plimsoll-guest over virtio-serial, below the
// provider: the guest's side of the protocol and its power-off.
//
// Each test boots one VM for one job and checks that QEMU powers off by
// itself once the agent is done (the init reboots, -no-reboot makes that an
// exit with status 0, the console names the agent's exit status), and that
// after Destroy nothing is left: no process naming the VM's directory, no
// directory.
//
// Skipped, with the reason, where QEMU, the artifacts (PLIMSOLL_MICROVM_DIR,
// set by ctest), root or cgroups are missing.
#include <gtest/gtest.h>
#include <openssl/rand.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "guest/protocol.h"
#include "plimsoll/limits.h"
#include "plimsoll/request.h"
#include "providers/microvm/microvm_test_support.h"
#include "providers/microvm/microvm_vm.h"

namespace plimsoll::microvm {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;
using std::chrono::seconds;

// TCG boots in ~2.5 s here; generous bounds for a loaded 2-core machine.
constexpr auto kBootBound = seconds(120);
constexpr auto kJobBound = seconds(120);
constexpr auto kPowerOffBound = seconds(60);

std::string RandomKey() {
  std::string key(guest::kReportKeyBytes, '\0');
  EXPECT_EQ(RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())),
            1);
  return key;
}

class MicrovmBoot : public ::testing::Test {
 protected:
  void SetUp() override {
    PLIMSOLL_REQUIRE_HOST("microvm");
    Status startable = MicrovmVmCanStart();
    ASSERT_TRUE(startable.ok()) << startable.error().ToString();
    char pattern[] = "/tmp/plimsoll-microvm-boot-test.XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    state_dir_ = pattern;
  }
  void TearDown() override {
    if (state_dir_.empty()) return;
    std::error_code error;
    std::filesystem::remove_all(state_dir_, error);
  }

  // Boots a VM: Start returns once the agent's ready frame arrived.
  std::unique_ptr<MicrovmVm> Boot() {
    auto vm = MicrovmVm::Start(TcgVmConfig(state_dir_), Clock::now() + kBootBound);
    EXPECT_TRUE(vm.ok()) << vm.error().ToString();
    if (!vm.ok()) return nullptr;
    std::cout << "boot to agent-ready under TCG: " << (*vm)->boot_time().count() << " ms\n";
    RecordProperty("boot_to_ready_ms", std::to_string((*vm)->boot_time().count()));
    return std::move(*vm);
  }

  // Sends the request's job and returns the sealed report.
  static guest::Report RunJob(MicrovmVm& vm, const Request& request) {
    std::string key = RandomKey();
    auto job = guest::JobFromRequest(request, Limits{}, key);
    EXPECT_TRUE(job.ok()) << job.error().ToString();
    if (!job.ok()) return {};
    auto start = Clock::now();
    auto sent = guest::WriteFrame(vm.channel(), guest::EncodeJob(*job), start + kJobBound);
    EXPECT_TRUE(sent.ok()) << (sent.ok() ? "" : sent.error().ToString());
    auto report = guest::ReadSealedReport(vm.channel(), key, start + kJobBound);
    EXPECT_TRUE(report.ok()) << report.error().ToString() << "\n" << vm.Diagnostics();
    if (!report.ok()) return {};
    std::cout << "job round trip: "
              << std::chrono::duration_cast<milliseconds>(Clock::now() - start).count() << " ms\n";
    return *report;
  }

  // QEMU ends by itself with status 0 and the console says how the agent
  // ended; then Destroy leaves nothing.
  static void ExpectPowersOffAndNothingLeft(std::unique_ptr<MicrovmVm> vm, int agent_status) {
    const std::string directory = vm->directory();
    auto status = vm->WaitForExit(Clock::now() + kPowerOffBound);
    ASSERT_TRUE(status.has_value()) << "QEMU still runs after the agent was done\n"
                                    << vm->Diagnostics();
    EXPECT_TRUE(WIFEXITED(*status) && WEXITSTATUS(*status) == 0)
        << "QEMU wait status " << *status << "\n"
        << vm->Diagnostics();
    std::string console = ReadWholeFile(directory + "/console.log");
    EXPECT_NE(
        console.find("plimsoll-init: the agent exited with status " + std::to_string(agent_status)),
        std::string::npos)
        << console;
    Status destroyed = vm->Destroy(Clock::now() + seconds(10));
    EXPECT_TRUE(destroyed.ok()) << destroyed.error().ToString();
    vm.reset();
    EXPECT_TRUE(ProcessesMentioning(directory).empty()) << "a process still names " << directory;
    EXPECT_FALSE(std::filesystem::exists(directory)) << directory;
  }

  std::string state_dir_;
};

TEST_F(MicrovmBoot, JavascriptSnippetRunsInTheVm) {
  std::unique_ptr<MicrovmVm> vm = Boot();
  ASSERT_NE(vm, nullptr);
  Request request;
  request.timeout_ms = 10'000;
  request.javascript = JavascriptPayload{"console.log(6*7)"};
  guest::Report report = RunJob(*vm, request);
  EXPECT_EQ(report.outcome, ProjectOutcome::kCompleted) << report.detail;
  ASSERT_EQ(report.steps.size(), 1u) << report.detail;
  EXPECT_EQ(report.steps[0].exit_code, 0) << report.steps[0].stderr_bytes;
  EXPECT_EQ(report.steps[0].stdout_bytes, "42\n");
  EXPECT_EQ(report.steps[0].stderr_bytes, "");
  ExpectPowersOffAndNothingLeft(std::move(vm), 0);
}

TEST_F(MicrovmBoot, PythonSnippetRunsUnprivilegedWithoutANetwork) {
  std::unique_ptr<MicrovmVm> vm = Boot();
  ASSERT_NE(vm, nullptr);
  Request request;
  request.timeout_ms = 20'000;
  request.python = PythonPayload{
      "import os, socket\n"
      "print(6*7)\n"
      "print(os.getuid(), os.getgid(), os.getcwd())\n"
      "print(sorted(name for _, name in socket.if_nameindex()))\n"};
  guest::Report report = RunJob(*vm, request);
  EXPECT_EQ(report.outcome, ProjectOutcome::kCompleted) << report.detail;
  ASSERT_EQ(report.steps.size(), 1u) << report.detail;
  EXPECT_EQ(report.steps[0].exit_code, 0) << report.steps[0].stderr_bytes;
  EXPECT_EQ(report.steps[0].stdout_bytes, "42\n1000 1000 /work\n['lo']\n")
      << report.steps[0].stderr_bytes;
  ExpectPowersOffAndNothingLeft(std::move(vm), 0);
}

// The host's end of the channel is the VM's lifeline: hanging up before any
// job makes the agent give up (exit 3) and the VM power off.
TEST_F(MicrovmBoot, HostHangingUpPowersTheVmOff) {
  std::unique_ptr<MicrovmVm> vm = Boot();
  ASSERT_NE(vm, nullptr);
  EXPECT_FALSE(vm->WaitForExit(Clock::now()).has_value()) << "the VM did not wait for its job";
  // Our end shut: the agent reads EOF instead of a job.
  ::shutdown(vm->channel(), SHUT_RDWR);
  ExpectPowersOffAndNothingLeft(std::move(vm), 3);
}

}  // namespace
}  // namespace plimsoll::microvm
