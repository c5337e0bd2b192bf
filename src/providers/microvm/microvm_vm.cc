#include "providers/microvm/microvm_vm.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "guest/protocol.h"

namespace plimsoll::microvm {
namespace {

using Clock = std::chrono::steady_clock;
using guest::agent::UniqueFd;

constexpr size_t kDiagnosticsCap = 4096;
// After the channel closes, a waiting agent exits and the VM powers off by
// itself (~0.1 s); after this QEMU is killed.
constexpr auto kPowerOffWait = std::chrono::milliseconds(300);
constexpr auto kReapWait = std::chrono::seconds(5);

Expected<std::string> NewVmName() {
  unsigned char bytes[8];
  if (getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    return Refusal(NotDispatched::kEnvironment, "No randomness for a VM name.");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string name(kVmDirectoryPrefix);
  for (unsigned char byte : bytes) {
    name += kHex[byte >> 4];
    name += kHex[byte & 15];
  }
  return name;
}

std::string Tail(const std::string& path, size_t bytes) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::string all = text.str();
  return all.size() > bytes ? all.substr(all.size() - bytes) : all;
}

}  // namespace

std::vector<std::string> QemuArgv(const VmConfig& config, const std::string& console) {
  // tsc_early_khz and no_timer_check: without them the kernel hangs at TSC
  // calibration under TCG (docs/microvm.md).
  std::string command_line =
      "console=ttyS0 quiet panic=-1 reboot=t tsc_early_khz=2000000 no_timer_check "
      "plimsoll.tmp_mb=" + std::to_string(config.tmp_mib) +
      " plimsoll.work_mb=" + std::to_string(config.work_mib);
  // clang-format off
  return {
      config.qemu, "-M", "microvm", "-accel", config.accelerator, "-cpu", "max",
      "-m", std::to_string(config.memory_mib), "-smp", std::to_string(config.cpus),
      "-nodefaults", "-no-user-config", "-nographic", "-no-reboot",
      "-sandbox", "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny",
      "-kernel", config.kernel, "-initrd", config.initramfs,
      "-append", command_line,
      "-drive", "id=root,file=" + config.disk + ",format=raw,if=none,readonly=on",
      "-device", "virtio-blk-device,drive=root",
      "-chardev", "socket,id=agent,fd=3",
      "-device", "virtio-serial-device",
      "-device", "virtserialport,chardev=agent,name=plimsoll.agent",
      "-serial", "file:" + console};
  // clang-format on
}

Expected<std::unique_ptr<MicrovmVm>> MicrovmVm::Start(const VmConfig& config, Deadline deadline) {
  for (const std::string* path : {&config.kernel, &config.initramfs, &config.disk,
                                  &config.state_dir}) {
    // QEMU's option syntax takes ',' as a separator.
    if (path->find(',') != std::string::npos) {
      return Refusal(NotDispatched::kEnvironment, "A ',' in the path " + *path);
    }
  }
  auto name = NewVmName();
  if (!name.ok()) return name.error();
  std::error_code error;
  std::filesystem::create_directories(config.state_dir, error);
  std::string directory = config.state_dir + "/" + *name;
  if (mkdir(directory.c_str(), 0700) != 0) {
    return Refusal(NotDispatched::kEnvironment,
                   "Cannot make " + directory + ": " + std::strerror(errno));
  }
  // From here on the destructor cleans up whatever exists.
  std::unique_ptr<MicrovmVm> vm(new MicrovmVm(directory));

  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return Refusal(NotDispatched::kEnvironment,
                   std::string("socketpair for the agent channel: ") + std::strerror(errno));
  }
  vm->channel_.Reset(pair[0]);
  UniqueFd guest_end(pair[1]);
  int output[2];
  if (pipe2(output, O_CLOEXEC) != 0) {
    return Refusal(NotDispatched::kEnvironment, std::string("pipe2: ") + std::strerror(errno));
  }
  vm->output_.Reset(output[0]);
  UniqueFd output_write(output[1]);
  fcntl(vm->output_.get(), F_SETFL, O_NONBLOCK);

  oci::SpawnOptions spawn;
  spawn.argv = QemuArgv(config, directory + "/console.log");
  spawn.channel = guest_end.get();
  spawn.channel_target = 3;
  spawn.output = output_write.get();
  Clock::time_point started = Clock::now();
  auto process = oci::Spawn(spawn);
  if (!process.ok()) return Refusal(NotDispatched::kEnvironment, process.error().message());
  vm->process_.emplace(std::move(*process));
  guest_end.Reset();
  output_write.Reset();
  auto ready = guest::ReadFrame(vm->channel(), deadline);
  if (ready.ok() && *ready == guest::kReadyFrame) {
    vm->boot_time_ = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
    return vm;
  }
  std::string why = ready.ok() ? "the agent sent something other than its ready frame"
                               : ready.error().message();
  bool late = !ready.ok() && ready.error().code() == ErrorCode::kDeadlineExceeded;
  std::string said = vm->Diagnostics();
  Status destroyed = vm->Destroy(Clock::now() + kReapWait);
  std::string message = "The " + config.accelerator + " VM did not reach its agent (" + why +
                        ")" + (said.empty() ? "" : "; QEMU and the console said: " + said);
  if (!destroyed.ok()) message += "; cleanup: " + destroyed.error().message();
  return Refusal(late ? NotDispatched::kCapacity : NotDispatched::kEnvironment, message);
}

MicrovmVm::~MicrovmVm() {
  if (!destroyed_) (void)Destroy(Clock::now() + kReapWait);
}

bool MicrovmVm::Healthy() const {
  if (destroyed_ || !channel_.valid() || !process_ || process_->Exited()) return false;
  pollfd entry{channel_.get(), POLLIN, 0};
  return poll(&entry, 1, 0) == 0;  // any event (data, hang-up, error) unfits it
}

std::optional<int> MicrovmVm::WaitForExit(Deadline deadline) {
  if (!process_) return std::nullopt;
  return process_->Wait(deadline);
}

std::string MicrovmVm::Diagnostics() {
  if (output_.valid()) oci::DrainAvailable(output_.get(), &diagnostics_, kDiagnosticsCap / 2);
  std::string console = Tail(directory_ + "/console.log", kDiagnosticsCap / 2);
  if (diagnostics_.empty()) return console;
  if (console.empty()) return diagnostics_;
  return diagnostics_ + "\n[console] " + console;
}

Status MicrovmVm::Destroy(Deadline deadline) {
  if (destroyed_) return Status::Ok();
  destroyed_ = true;
  channel_.Reset();  // a waiting agent exits; the VM powers off
  std::string problems;
  if (process_) {
    auto status = process_->Wait(std::min(deadline, Clock::now() + kPowerOffWait));
    // KillAndReap: SIGKILL through the pidfd, then waitpid.
    if (!status) process_->KillAndReap();
  }
  if (output_.valid()) oci::DrainAvailable(output_.get(), &diagnostics_, kDiagnosticsCap / 2);
  output_.Reset();
  std::error_code error;
  std::filesystem::remove_all(directory_, error);
  if (error) problems += "Removing " + directory_ + ": " + error.message() + ". ";
  if (!problems.empty()) return Failure(ErrorCode::kInternal, problems);
  return Status::Ok();
}

}  // namespace plimsoll::microvm
