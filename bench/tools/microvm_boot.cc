// plimsoll-microvm-boot: the microvm provider's cold boot against a raw QEMU
// boot of the same kernel, measured alternately in one process
// (bench/scenarios.py: qemu-microvm-boot, microvm.boot_to_ready).
//
//   raw    QEMU started directly (no jailer, no QMP) with the provider's own
//          command line (microvm::QemuArgv, the same VmConfig the provider
//          builds from default Limits: memory, vCPUs, kernel, kernel command
//          line, disk, virtio-serial port, -sandbox) except two arguments:
//          `-initrd` is a
//          minimal initramfs (static busybox, /dev/console and an /init that
//          echoes a marker and runs `reboot -f`) and `-serial` is
//          `file:/dev/stdout` (QEMU's stdout: our pipe). Timed from just
//          before the spawn to the marker read from that pipe: the kernel's
//          boot to its first userspace output. QEMU's exit afterwards
//          (`reboot -f`, -no-reboot) is waited for, untimed.
//   agent  microvm::MicrovmVm::Start, the call the provider makes for a cold
//          boot: the VM's uid lease, directory and cgroup, plimsoll-vmm-jail
//          exec'ing QEMU with the real initramfs and disk, /init (modules,
//          mounts, pid namespace), plimsoll-guest, its ready frame on the
//          virtio-serial channel, QMP's answers. Timed around Start();
//          Destroy() (channel closed, the VM powers off, cgroup and uid
//          freed) is untimed. The jail's uid base comes from
//          SANDBOX_MICROVM_JAIL_UID_BASE as in the provider.
//
// One raw and one agent boot per iteration, their order alternating, never
// two VMs at once; warm-ups first. Prints two sampler lines (bench/README.md)
// with `facts` (accelerator, QEMU, VM size, initramfs sizes); the raw
// command line goes to stderr.
//
//   plimsoll-microvm-boot --artifacts DIR --raw-initramfs FILE --state DIR
//       [--accel tcg|kvm] [--raw-scenario NAME] [--agent-scenario NAME]
//       [--marker TEXT] [--runs N] [--warmup N]
//
// Exit status: 0; 1 when a boot fails (an "error" line per scenario says
// why); 2 for usage errors.
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/unique_fd.h"
#include "os/spawn.h"
#include "plimsoll/limits.h"
#include "providers/microvm/microvm_provider.h"
#include "providers/microvm/microvm_vm.h"
#include "tools/sampler_output.h"

namespace {

using Clock = std::chrono::steady_clock;
using Facts = std::vector<std::pair<std::string, std::string>>;
using plimsoll::base::UniqueFd;

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr auto kBootBudget = std::chrono::seconds(60);
constexpr auto kExitBudget = std::chrono::seconds(10);

int64_t CeilDiv(int64_t value, int64_t unit) {
  return (value + unit - 1) / unit;
}

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string_view rest = path ? path : "/usr/bin:/bin";
  while (!rest.empty()) {
    size_t colon = rest.find(':');
    std::string candidate = std::string(rest.substr(0, colon)) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
  }
  return "";
}

std::string FileSize(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return "?";
  return std::to_string(info.st_size) + " bytes";
}

// One raw boot: spawn → marker on the serial console (QEMU's stdout).
plimsoll::Expected<double> RawBoot(const std::vector<std::string>& argv,
                                   const std::string& marker) {
  using plimsoll::ErrorCode;
  using plimsoll::Failure;
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return Failure(ErrorCode::kInternal, "socketpair failed");
  }
  UniqueFd host_end(pair[0]);
  UniqueFd guest_end(pair[1]);  // -chardev socket,fd=3: nobody opens the port
  int output[2];
  if (pipe2(output, O_CLOEXEC) != 0) return Failure(ErrorCode::kInternal, "pipe2 failed");
  UniqueFd read_end(output[0]);
  UniqueFd write_end(output[1]);
  fcntl(read_end.get(), F_SETFL, O_NONBLOCK);

  plimsoll::os::SpawnOptions spawn;
  spawn.argv = argv;
  spawn.channel = guest_end.get();
  spawn.channel_target = 3;
  spawn.output = write_end.get();
  Clock::time_point start = Clock::now();
  auto process = plimsoll::os::Spawn(spawn);
  if (!process.ok()) return Failure(ErrorCode::kInternal, process.error().message());
  guest_end.Reset();
  write_end.Reset();
  std::string seen;
  double elapsed = -1;
  Clock::time_point deadline = start + kBootBudget;
  while (Clock::now() < deadline) {
    pollfd entry{read_end.get(), POLLIN, 0};
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (poll(&entry, 1, static_cast<int>(std::max<int64_t>(1, left.count()))) < 0) continue;
    size_t before = seen.size();
    plimsoll::os::DrainAvailable(read_end.get(), &seen, 64 * 1024);
    if (seen.find(marker) != std::string::npos) {
      elapsed = MillisecondsSince(start);
      break;
    }
    if (seen.size() == before && (entry.revents & (POLLHUP | POLLERR))) break;  // QEMU gone
  }
  auto status = process->Wait(Clock::now() + kExitBudget);  // reboot -f ends QEMU
  if (!status) process->KillAndReap();
  if (elapsed < 0) {
    std::string tail = seen.size() > 600 ? seen.substr(seen.size() - 600) : seen;
    for (char& c : tail) c = (c == '\n' || c == '\r') ? ' ' : c;
    return Failure(ErrorCode::kInternal,
                   "no marker on the serial console within the budget (QEMU " +
                       std::string(status ? "exited" : "killed") + "); it said: " + tail);
  }
  if (!status) {
    return Failure(ErrorCode::kInternal, "QEMU did not exit after the raw guest's reboot -f");
  }
  return elapsed;
}

int Usage(const char* message) {
  std::fprintf(stderr,
               "plimsoll-microvm-boot: %s\nusage: plimsoll-microvm-boot --artifacts DIR "
               "--raw-initramfs FILE --state DIR [--accel tcg|kvm] [--raw-scenario NAME] "
               "[--agent-scenario NAME] [--marker TEXT] [--runs N] [--warmup N]\n",
               message);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string artifacts, raw_initramfs, state, accel = "tcg";
  std::string raw_scenario = "qemu-microvm-boot", agent_scenario = "microvm.boot_to_ready";
  std::string marker = "PLIMSOLL-BENCH-BOOTED";
  long runs = plimsoll::bench::EnvCount("PLIMSOLL_BENCH_RUNS", 10);
  long warmup = plimsoll::bench::EnvCount("PLIMSOLL_BENCH_WARMUP", 1);
  for (int i = 1; i < argc; ++i) {
    std::string_view flag = argv[i];
    if (i + 1 >= argc) return Usage("every flag takes a value");
    std::string value = argv[++i];
    if (flag == "--artifacts") {
      artifacts = value;
    } else if (flag == "--raw-initramfs") {
      raw_initramfs = value;
    } else if (flag == "--state") {
      state = value;
    } else if (flag == "--accel") {
      if (value != "tcg" && value != "kvm") return Usage("--accel is tcg or kvm");
      accel = value;
    } else if (flag == "--raw-scenario") {
      raw_scenario = value;
    } else if (flag == "--agent-scenario") {
      agent_scenario = value;
    } else if (flag == "--marker") {
      marker = value;
    } else if (flag == "--runs" || flag == "--warmup") {
      char* end = nullptr;
      long count = std::strtol(value.c_str(), &end, 10);
      if (value.empty() || *end != '\0' || count < 0) return Usage("counts are whole numbers");
      (flag == "--runs" ? runs : warmup) = count;
    } else {
      return Usage("unknown flag");
    }
  }
  if (artifacts.empty() || raw_initramfs.empty() || state.empty()) {
    return Usage("--artifacts, --raw-initramfs and --state are required");
  }
  if (runs < 1) return Usage("--runs must be at least 1");
  auto both = [&](auto print) {
    print(raw_scenario);
    print(agent_scenario);
  };
  auto fail = [&](const std::string& why) {
    both([&](const std::string& name) { plimsoll::bench::PrintError(name, why); });
    return 1;
  };

  // The VmConfig the provider's Prepare() builds for default Limits (the
  // jailer and the cgroup layout are located by Start(), as Prepare() does).
  auto settings = plimsoll::MicrovmSettingsFromEnvironment();
  if (!settings.ok()) return fail(settings.error().message());
  plimsoll::Limits limits;
  plimsoll::microvm::VmConfig config;
  config.qemu = FindInPath("qemu-system-x86_64");
  if (config.qemu.empty()) return fail("qemu-system-x86_64 is not on PATH");
  config.kernel = artifacts + "/vmlinuz";
  config.initramfs = artifacts + "/initramfs.cpio.gz";
  config.disk = artifacts + "/rootfs.erofs";
  config.accelerator = accel;
  config.memory_mib = CeilDiv(limits.memory_bytes + plimsoll::kMicrovmOverheadBytes, kMiB);
  config.cpus = std::max<int64_t>(1, CeilDiv(limits.cpus_millis, 1000));
  config.tmp_mib = std::max<int64_t>(1, CeilDiv(limits.tmp_bytes, kMiB));
  config.work_mib = std::max<int64_t>(1, CeilDiv(limits.work_bytes, kMiB));
  config.state_dir = state;
  config.uids.base = settings->jail_uid_base;
  std::error_code error;
  std::filesystem::create_directories(state, error);

  plimsoll::microvm::VmConfig raw_config = config;
  raw_config.initramfs = raw_initramfs;
  std::vector<std::string> raw_argv = plimsoll::microvm::QemuArgv(raw_config, "/dev/stdout");
  std::string shown;
  for (const std::string& arg : raw_argv) shown += (shown.empty() ? "" : " ") + arg;
  std::fprintf(stderr, "plimsoll-microvm-boot: raw: %s\n", shown.c_str());

  plimsoll::os::SpawnOptions version;
  version.argv = {config.qemu, "--version"};
  auto said = plimsoll::os::RunCommand(version, Clock::now() + std::chrono::seconds(10));
  std::string qemu_version = said.ok() ? said->output.substr(0, said->output.find('\n')) : "?";
  Facts facts = {
      {"accelerator", accel},
      {"qemu", qemu_version + " (" + config.qemu + ")"},
      {"vm", std::to_string(config.memory_mib) + " MiB, " + std::to_string(config.cpus) +
                 " vCPU (the provider's default Limits)"},
      {"initramfs", "provider " + FileSize(config.initramfs) + ", raw " + FileSize(raw_initramfs)},
      {"jail",
       "provider: plimsoll-vmm-jail (own uid, cgroup, namespaces) and QMP; raw: "
       "neither"}};

  std::vector<double> raw_samples, agent_samples;
  for (long i = 0; i < warmup + runs; ++i) {
    for (int half = 0; half < 2; ++half) {
      bool raw = (half == 0) == (i % 2 == 0);  // alternate which goes first
      if (raw) {
        auto boot = RawBoot(raw_argv, marker);
        if (!boot.ok())
          return fail("raw boot " + std::to_string(i) + ": " + boot.error().message());
        if (i >= warmup) raw_samples.push_back(*boot);
      } else {
        Clock::time_point start = Clock::now();
        auto vm = plimsoll::microvm::MicrovmVm::Start(config, start + kBootBudget);
        double elapsed = MillisecondsSince(start);
        if (!vm.ok()) {
          return fail("agent boot " + std::to_string(i) + ": " + vm.error().message());
        }
        plimsoll::Status destroyed = (*vm)->Destroy(Clock::now() + kExitBudget);
        if (!destroyed.ok())
          return fail("destroying VM " + std::to_string(i) + ": " + destroyed.error().message());
        if (i >= warmup) agent_samples.push_back(elapsed);
      }
    }
  }
  plimsoll::bench::PrintSamples(raw_scenario, "ms", raw_samples, facts);
  plimsoll::bench::PrintSamples(agent_scenario, "ms", agent_samples, facts);
  return 0;
}
