#include "providers/microvm/microvm_vm.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>

#include "guest/protocol.h"
#include "os/owner.h"
#include "providers/microvm/jail_spec.h"

namespace plimsoll::microvm {
namespace {

using Clock = std::chrono::steady_clock;
using base::UniqueFd;

constexpr size_t kDiagnosticsCap = 4096;
// After the channel closes, a waiting agent exits and the VM powers off by
// itself (~0.1 s); after this QEMU is killed.
constexpr auto kPowerOffWait = std::chrono::milliseconds(300);
constexpr auto kReapWait = std::chrono::seconds(5);
// QMP answers within milliseconds once the agent is up.
constexpr auto kQmpBudget = std::chrono::seconds(5);
constexpr int64_t kMiB = int64_t{1} << 20;

Expected<std::string> NewVmName() {
  unsigned char bytes[8];
  if (getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes)) {
    return Refusal(NotDispatched::kEnvironment, "No randomness for a VM name.");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  // The owner's tag: Reconcile leaves a live process's VMs alone.
  std::string name = kVmDirectoryPrefix + os::OwnerTag() + "-";
  for (unsigned char byte : bytes) {
    name += kHex[byte >> 4];
    name += kHex[byte & 15];
  }
  return name;
}

// The VM directory belongs to the jailed QEMU's uid: whatever it holds may
// have been planted by a compromised QEMU. Only a regular file is read,
// never through a symlink (it could name /etc/shadow), never a FIFO.
std::string Tail(const std::string& path, size_t bytes) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  struct stat st {};
  if (!fd.valid() || fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  off_t start = st.st_size > static_cast<off_t>(bytes) ? st.st_size - static_cast<off_t>(bytes) : 0;
  std::string text(bytes, '\0');
  ssize_t got = pread(fd.get(), text.data(), bytes, start);
  text.resize(got > 0 ? static_cast<size_t>(got) : 0);
  return text;
}

}  // namespace

Expected<std::string> LocateJailer() {
  std::string tried;
  auto usable = [&](const std::string& path) {
    if (access(path.c_str(), X_OK) == 0) return true;
    tried += (tried.empty() ? "" : ", ") + path;
    return false;
  };
  if (const char* configured = std::getenv("PLIMSOLL_MICROVM_JAILER");
      configured != nullptr && *configured != '\0') {
    if (configured[0] == '/' && usable(configured)) return std::string(configured);
    return Refusal(NotDispatched::kEnvironment, std::string("PLIMSOLL_MICROVM_JAILER=") +
                                                    configured +
                                                    " is not an absolute path to an executable.");
  }
  std::error_code error;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    std::string beside = (self.parent_path() / kJailerName).string();
    if (usable(beside)) return beside;
  }
#ifdef PLIMSOLL_BUILD_TREE_JAILER
  if (usable(PLIMSOLL_BUILD_TREE_JAILER)) return std::string(PLIMSOLL_BUILD_TREE_JAILER);
#endif
  return Refusal(NotDispatched::kEnvironment,
                 std::string("No ") + kJailerName + " (tried " + tried +
                     "); install it beside plimsoll/plimsolld or set PLIMSOLL_MICROVM_JAILER.");
}

Expected<os::CgroupLayout> MicrovmCgroupLayout() {
  auto layout = os::DetectCgroups();
  if (!layout.ok()) {
    return Refusal(NotDispatched::kEnvironment,
                   "The microvm jail needs cgroups: " + layout.error().message());
  }
  layout->parent = kMicrovmCgroupParent;
  if (Status made = os::EnsureCgroupParents(*layout); !made.ok()) {
    return Refusal(NotDispatched::kEnvironment,
                   "Cannot make the microvm cgroups: " + made.error().message());
  }
  return *layout;
}

namespace {

// The host's TSC rate in kHz, measured once per process (3 x 20 ms, the
// median). Under TCG the guest's TSC is the host's counter, and with
// tsc_early_khz the guest kernel takes the rate it is given as final: a
// wrong one makes the guest's clock run fast or slow (a fixed 2000000 on a
// 2.6 GHz host ran it 1.3x fast, so the agent's deadlines and the steps'
// durations were 30% short in real time).
int64_t HostTscKhz() {
  constexpr int64_t kFallbackKhz = 2'000'000;
#if defined(__x86_64__)
  static const int64_t measured = [] {
    auto now_ns = [] {
      timespec at{};
      clock_gettime(CLOCK_MONOTONIC_RAW, &at);
      return int64_t{at.tv_sec} * 1'000'000'000 + at.tv_nsec;
    };
    std::vector<int64_t> rates;
    for (int i = 0; i < 3; ++i) {
      int64_t start_ns = now_ns();
      uint64_t start_ticks = __rdtsc();
      timespec pause{0, 20'000'000};
      nanosleep(&pause, nullptr);
      int64_t end_ns = now_ns();
      uint64_t end_ticks = __rdtsc();
      if (end_ns <= start_ns || end_ticks <= start_ticks) continue;
      rates.push_back(static_cast<int64_t>((end_ticks - start_ticks) * 1'000'000 /
                                           static_cast<uint64_t>(end_ns - start_ns)));
    }
    if (rates.empty()) return kFallbackKhz;
    std::sort(rates.begin(), rates.end());
    return rates[rates.size() / 2];
  }();
  return measured;
#else
  return kFallbackKhz;
#endif
}

}  // namespace

std::vector<std::string> QemuArgv(const VmConfig& config, const std::string& console,
                                  const std::string& qmp_socket) {
  // tsc_early_khz and no_timer_check: without them the kernel hangs at TSC
  // calibration under TCG (docs/microvm.md). The rate is the host's: the
  // guest keeps it as its clock's (see HostTscKhz).
  std::string command_line =
      "console=ttyS0 quiet panic=-1 reboot=t tsc_early_khz=" + std::to_string(HostTscKhz()) +
      " no_timer_check "
      "plimsoll.tmp_mb=" +
      std::to_string(config.tmp_mib) + " plimsoll.work_mb=" + std::to_string(config.work_mib);
  if (config.session) command_line += " plimsoll.session=1";
  // clang-format off
  std::vector<std::string> argv = {
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
  if (!qmp_socket.empty()) {
    // The VM's private monitor (qmp.h); wait=off: QEMU does not wait for us.
    argv.insert(argv.end(), {"-qmp", "unix:" + qmp_socket + ",server=on,wait=off"});
  }
  return argv;
}

Expected<std::unique_ptr<MicrovmVm>> MicrovmVm::Start(const VmConfig& config, Deadline deadline) {
  for (const std::string* path :
       {&config.kernel, &config.initramfs, &config.disk, &config.state_dir}) {
    // QEMU's option syntax takes ',' as a separator; the jail binds each
    // at its own path, which must be normal and absolute.
    if (path->find(',') != std::string::npos || !IsNormalAbsolutePath(*path)) {
      return Refusal(NotDispatched::kEnvironment,
                     "The path " + *path + " must be absolute, normal and free of ','.");
    }
  }
  auto jailer = config.jailer.empty() ? LocateJailer() : Expected<std::string>(config.jailer);
  if (!jailer.ok()) return jailer.error();
  auto layout =
      config.cgroups ? Expected<os::CgroupLayout>(*config.cgroups) : MicrovmCgroupLayout();
  if (!layout.ok()) return layout.error();
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
  auto environment = [](const Error& failure, const std::string& context) {
    return Refusal(NotDispatched::kEnvironment, context + ": " + failure.message());
  };

  // The VM's own uid owns its directory (console.log, qmp.sock).
  auto lease = LeaseJailUid(config.uids);
  if (!lease.ok()) return environment(lease.error(), "No uid for the VM's jail");
  uid_t uid = lease->uid();
  vm->uid_.emplace(std::move(*lease));
  if (chown(directory.c_str(), uid, uid) != 0) {
    return Refusal(NotDispatched::kEnvironment,
                   "Cannot chown " + directory + ": " + std::strerror(errno));
  }
  Limits bounds;
  bounds.memory_bytes = (config.memory_mib + kVmmOverheadMiB) * kMiB;
  bounds.pids = kVmmPids;
  bounds.cpus_millis = config.cpus * 1000;
  auto cgroup = os::RunCgroup::Create(*layout, os::NextRunName(), bounds);
  if (!cgroup.ok()) return environment(cgroup.error(), "Cannot make the VM's cgroup");
  vm->cgroup_.emplace(std::move(*cgroup));

  auto descriptors = os::MakeAgentDescriptors();
  if (!descriptors.ok()) return descriptors.error();
  vm->channel_ = std::move(descriptors->channel);
  vm->output_ = std::move(descriptors->output);
  UniqueFd guest_end = std::move(descriptors->child_channel);
  UniqueFd output_write = std::move(descriptors->child_output);

  bool kvm = config.accelerator == "kvm";
  vm->jail_ =
      QemuJailSpec(QemuArgv(config, directory + "/console.log", kQmpSocketName),
                   {config.kernel, config.initramfs, config.disk}, directory, uid, uid, kvm);
  vm->jail_.cgroups = vm->cgroup_->directories();
  if (kvm) {
    // Only the group that owns /dev/kvm, and only under KVM.
    struct stat device {};
    if (stat("/dev/kvm", &device) != 0) {
      return Refusal(NotDispatched::kEnvironment,
                     std::string("stat /dev/kvm: ") + std::strerror(errno));
    }
    if (device.st_gid == 0 || (device.st_mode & 0060) != 0060) {
      char mode[8];
      std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(device.st_mode & 07777));
      return Refusal(NotDispatched::kEnvironment,
                     std::string("/dev/kvm (mode ") + mode + ", group " +
                         std::to_string(device.st_gid) +
                         ") is not read-write for a non-root group, so the jailed QEMU cannot "
                         "open it; give it the kvm group (udev's default: root:kvm 0660).");
    }
    vm->jail_.groups.push_back(device.st_gid);
  }
  os::SpawnOptions spawn;
  spawn.argv = JailCommandLine(*jailer, vm->jail_);
  spawn.channel = guest_end.get();
  spawn.channel_target = 3;
  spawn.output = output_write.get();
  Clock::time_point started = Clock::now();
  auto process = os::Spawn(spawn);
  if (!process.ok()) return Refusal(NotDispatched::kEnvironment, process.error().message());
  vm->process_.emplace(std::move(*process));
  guest_end.Reset();
  output_write.Reset();
  auto ready = guest::ReadFrame(vm->channel(), deadline);
  std::string why;
  if (ready.ok() && *ready == guest::kReadyFrame) {
    vm->boot_time_ = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started);
    auto facts = QueryQmpFacts(directory + "/" + kQmpSocketName,
                               std::min(deadline, Clock::now() + kQmpBudget));
    if (facts.ok()) {
      vm->qmp_ = *facts;
      return vm;
    }
    why = "QMP did not answer: " + facts.error().message();
  } else {
    why = ready.ok() ? "the agent sent something other than its ready frame"
                     : ready.error().message();
  }
  bool late = !ready.ok() && ready.error().code() == ErrorCode::kDeadlineExceeded;
  std::string said = vm->Diagnostics();
  Status destroyed = vm->Destroy(Clock::now() + kReapWait);
  std::string message = "The " + config.accelerator + " VM did not reach its agent (" + why + ")" +
                        (said.empty() ? "" : "; the jailer, QEMU and the console said: " + said);
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

std::vector<std::pair<std::string, std::string>> MicrovmVm::CgroupLimits() const {
  if (!cgroup_) return {};
  return cgroup_->ReadLimits();
}

std::string MicrovmVm::Diagnostics() {
  if (output_.valid()) os::DrainAvailable(output_.get(), &diagnostics_, kDiagnosticsCap / 2);
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
  if (output_.valid()) os::DrainAvailable(output_.get(), &diagnostics_, kDiagnosticsCap / 2);
  output_.Reset();
  if (cgroup_) {
    // Whatever QEMU left in its cgroup (nothing, normally) dies with it.
    if (Status killed = cgroup_->Kill(); !killed.ok()) problems += killed.error().message() + " ";
    if (Status removed = cgroup_->Remove(); !removed.ok()) {
      problems += removed.error().message() + " ";
    } else {
      cgroup_.reset();
    }
  }
  std::error_code error;
  std::filesystem::remove_all(directory_, error);
  if (error) problems += "Removing " + directory_ + ": " + error.message() + ". ";
  if (uid_) {
    // The uid is free again only once nothing runs as it: the cgroup kill
    // above normally saw to that; anything that escaped it (or a cgroup
    // that could not be killed) is ended here, and a uid still in use stays
    // leased for this process's life rather than go to the next VM.
    Status ended = EndProcessesOf(uid_->uid(), std::max(deadline, Clock::now() + kPowerOffWait));
    if (!ended.ok()) {
      problems += ended.error().message() + "; its uid stays leased. ";
      HoldUntilExit(std::move(*uid_));
    }
    uid_.reset();
  }
  if (!problems.empty()) return Failure(ErrorCode::kInternal, problems);
  return Status::Ok();
}

}  // namespace plimsoll::microvm
