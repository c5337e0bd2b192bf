#include "providers/microvm/microvm_provider.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>

#include "guest/exchange.h"
#include "guest/protocol.h"
#include "image/image.h"
#include "providers/linux/cgroup.h"
#include "providers/linux/self_check.h"
#include "providers/microvm/jail_evidence.h"
#include "providers/microvm/microvm_vm.h"
#include "providers/pool/warm_pool.h"
#include "providers/oci/spawn.h"

namespace plimsoll {
namespace {

using Clock = std::chrono::steady_clock;
using linux_sandbox::SelfCheckProfile;
using microvm::MicrovmVm;
using microvm::VmConfig;

constexpr const char* kQemuName = "qemu-system-x86_64";
constexpr int64_t kMiB = int64_t{1} << 20;
// As in the other providers: the agent's own budget is the timeout plus its
// grace and wrap-up; the host waits a little longer for the report.
constexpr auto kReportGrace =
    std::chrono::milliseconds(guest::kJavascriptGraceMs + guest::kAgentWrapUpMs + 1000);
// The longest a cold boot may take before the run is refused (TCG boots in
// 2-3 s here when the host is quiet, 7-9 s when it is loaded).
constexpr auto kSetupBudget = std::chrono::seconds(30);
// The bounded KVM test boot of `auto` (and of `kvm`, which refuses on failure).
constexpr auto kKvmProbeBudget = std::chrono::seconds(15);
constexpr auto kCommandBudget = std::chrono::seconds(10);
constexpr size_t kMaxPendingDestroys = 16;

Error EnvironmentRefusal(const std::string& message) {
  return Refusal(NotDispatched::kEnvironment, message);
}

std::string ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string Trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string HostKernel() {
  utsname name{};
  if (uname(&name) != 0) return "unknown";
  return std::string(name.sysname) + " " + name.release;
}

int64_t MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

std::string FindInPath(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr && *path != '\0' ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty() || dir[0] != '/') continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

Expected<std::string> Sha256File(const std::string& path) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return EnvironmentRefusal("Cannot read " + path + ": " + std::strerror(errno));
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  EVP_DigestInit_ex(context, EVP_sha256(), nullptr);
  std::vector<char> buffer(1 << 20);
  ssize_t got = 0;
  while ((got = read(fd, buffer.data(), buffer.size())) > 0) {
    EVP_DigestUpdate(context, buffer.data(), static_cast<size_t>(got));
  }
  close(fd);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(context, digest, &length);
  EVP_MD_CTX_free(context);
  if (got < 0) return EnvironmentRefusal("Reading " + path + " failed.");
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

int64_t CeilDiv(int64_t value, int64_t unit) { return (value + unit - 1) / unit; }

// What every run needs, prepared once.
struct Prepared {
  VmConfig config;
  std::string artifacts_dir;
  std::string identity;       // the disk's guest image identity
  std::string kernel;         // the artifacts' `kernel` file
  std::string qemu_version;   // first line of `qemu-system-x86_64 --version`
  std::string artifacts_sha256;
  std::string accel_reason;   // why this accelerator
  std::string jail;           // how QEMU is jailed, for Describe and the evidence
};

// The result of a KVM test boot, kept for the process: a hanging KVM costs
// its whole budget, and the answer does not change while the host runs.
struct KvmProbe {
  bool works = false;
  std::string why;
};

std::mutex kvm_probe_mutex;
std::map<std::string, KvmProbe> kvm_probes;  // by QEMU and kernel

KvmProbe ProbeKvm(VmConfig config) {
  std::string key = config.qemu + "\n" + config.kernel;
  std::lock_guard lock(kvm_probe_mutex);
  if (auto found = kvm_probes.find(key); found != kvm_probes.end()) return found->second;
  KvmProbe probe;
  int kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
  if (kvm < 0) {
    probe.why = std::string("/dev/kvm cannot be opened (") + std::strerror(errno) + ")";
  } else {
    close(kvm);
    config.accelerator = "kvm";
    Clock::time_point start = Clock::now();
    auto vm = MicrovmVm::Start(config, start + kKvmProbeBudget);
    if (vm.ok()) {
      probe.works = true;
      probe.why = "a test boot with -accel kvm reached the agent in " +
                  std::to_string(MillisecondsSince(start)) + " ms";
      (void)(*vm)->Destroy(Clock::now() + std::chrono::seconds(5));
    } else {
      bool late = vm.error().not_dispatched() == NotDispatched::kCapacity;
      probe.why = "/dev/kvm is present, but a test boot with -accel kvm " +
                  (late ? "did not reach the agent within " +
                              std::to_string(kKvmProbeBudget.count()) + " s (QEMU killed)"
                        : "failed after " + std::to_string(MillisecondsSince(start)) + " ms") +
                  ": " + vm.error().message().substr(0, 600);
      while (!probe.why.empty() && probe.why.back() == '.') probe.why.pop_back();  // the refusal adds its own
      for (char& c : probe.why) c = c == '\n' ? ' ' : c;
    }
  }
  kvm_probes[key] = probe;
  return probe;
}

class MicrovmProvider final : public Provider {
 public:
  MicrovmProvider(const Limits& limits, const MicrovmSettings& settings)
      : limits_(limits),
        settings_(settings),
        pool_(settings.pool_size, [this] { return StartPooled(); },
              [this](std::unique_ptr<MicrovmVm> vm) { destroyer_.Add(std::move(vm)); }) {}

  ~MicrovmProvider() override {
    pool_.Disable();
    destroyer_.Drain();
  }

  std::string_view name() const override { return "microvm"; }

  Description Describe() const override {
    Description description;
    description.provider = "microvm";
    description.capabilities.payloads = {PayloadKind::kJavascript, PayloadKind::kPython,
                                         PayloadKind::kProject};
    description.limits = limits_;
    std::shared_ptr<const Prepared> prepared = Current();
    std::string accelerator;
    if (prepared) {
      accelerator = prepared->config.accelerator + " (" + prepared->accel_reason + ")";
      description.tier = prepared->config.accelerator == "kvm" ? Tier::kVm : Tier::kKernel;
      description.environment = prepared->identity;
    } else {
      accelerator = std::string(AccelName()) + " (not resolved yet: the first smoke test or run "
                    "does)";
      description.tier = settings_.accel == MicrovmAccel::kKvm ? Tier::kVm : Tier::kKernel;
    }
    description.details = {{"accelerator", accelerator}};
    if (prepared) {
      description.details.emplace_back("qemu", prepared->qemu_version);
      description.details.emplace_back("kernel", prepared->kernel);
      description.details.emplace_back(
          "vm", std::to_string(prepared->config.memory_mib) + " MiB (memory limit + " +
                    std::to_string(kMicrovmOverheadBytes / kMiB) +
                    " MiB for the guest kernel), " + std::to_string(prepared->config.cpus) +
                    " vCPU");
      description.details.emplace_back("artifacts", prepared->artifacts_dir);
      description.details.emplace_back("jail", prepared->jail);
    } else if (auto dir = ArtifactsDirectory(); dir.ok()) {
      description.details.emplace_back("kernel", Trim(ReadFileText(*dir + "/kernel")));
      description.details.emplace_back("artifacts", *dir);
    }
    description.details.emplace_back("host_kernel", HostKernel());
    description.details.emplace_back(
        "qmp", "a private socket per VM (<vm dir>/qmp.sock, 0700, the VM's uid): after each boot "
               "query-kvm (the tier needs enabled:true for vm) and query-status; last: " +
                   LastQmp());
    description.details.emplace_back("pool", pool_.Describe());
    description.pool = pool_.State();
    return description;
  }

  Status Reconcile() override {
    // Our VMs' directories whose owner is gone: <state>/vm-<owner>-*. Every
    // QEMU whose command line names one of them (its console log lives
    // there) is ours and is killed, found through /proc: this holds from the
    // moment QEMU starts, with no pid file a crash could leave unwritten.
    std::string problems;
    std::error_code error;
    std::vector<std::string> directories;
    for (const auto& entry : std::filesystem::directory_iterator(settings_.state_dir, error)) {
      std::string name = entry.path().filename().string();
      std::string_view prefix = microvm::kVmDirectoryPrefix;
      if (name.rfind(prefix, 0) != 0) continue;
      // A live owner's VMs (another daemon or CLI with this state
      // directory) are left alone.
      if (linux_sandbox::LeftByDeadOwner(std::string_view(name).substr(prefix.size()))) {
        directories.push_back(entry.path());
      }
    }
    std::error_code listing;
    for (const auto& process : std::filesystem::directory_iterator("/proc", listing)) {
      std::string name = process.path().filename().string();
      if (directories.empty() || name.find_first_not_of("0123456789") != std::string::npos) {
        continue;
      }
      std::string cmdline = ReadFileText(process.path().string() + "/cmdline");
      for (const std::string& directory : directories) {
        if (cmdline.find(directory + "/") != std::string::npos) {
          KillOurQemu(static_cast<pid_t>(std::atol(name.c_str())), directory);
        }
      }
    }
    for (const std::string& directory : directories) {
      std::error_code removing;
      std::filesystem::remove_all(directory, removing);
      if (removing) problems += "could not remove " + directory + ": " + removing.message() + "; ";
    }
    // The VMs' cgroups whose owner is gone (their QEMUs, if any, die too).
    // No cgroups on this host: nothing of ours can be there.
    if (auto layout = microvm::MicrovmCgroupLayout(); layout.ok()) {
      auto removed = linux_sandbox::ReconcileCgroups(*layout);
      if (!removed.ok()) problems += "cgroups: " + removed.error().message() + "; ";
    }
    if (!problems.empty()) return Failure(ErrorCode::kInternal, "Reconcile: " + problems);
    return Status::Ok();
  }

  Status Preflight() override {
    auto prepared = Prepare();
    if (!prepared.ok()) return prepared.error();
    return Status::Ok();
  }

  Expected<Evidence> SmokeTest(Deadline deadline) override {
    auto evidence = CollectEvidence(deadline);
    pool_.FollowEvidence(evidence);
    return evidence;
  }

  Expected<Result> Run(const Request& request, Deadline deadline) override {
    if (request.cell) {
      return Refusal(NotDispatched::kUnsupported,
                     "The microvm provider has no sessions yet, so no cells.");
    }
    auto prepared = Prepare();
    if (!prepared.ok()) return prepared.error();
    return RunJob(**prepared, request, deadline, /*use_pool=*/true);
  }

 private:
  const char* AccelName() const {
    switch (settings_.accel) {
      case MicrovmAccel::kKvm:
        return "kvm";
      case MicrovmAccel::kTcg:
        return "tcg";
      case MicrovmAccel::kAuto:
        break;
    }
    return "auto";
  }

  static std::string QmpText(const microvm::QmpFacts& qmp) {
    return std::string("QEMU ") + qmp.version + " query-kvm {enabled: " +
           (qmp.kvm_enabled ? "true" : "false") + ", present: " +
           (qmp.kvm_present ? "true" : "false") + "}, query-status " + qmp.status;
  }

  void RememberQmp(const microvm::QmpFacts& qmp) {
    std::lock_guard lock(state_mutex_);
    last_qmp_ = QmpText(qmp);
  }

  std::string LastQmp() const {
    std::lock_guard lock(state_mutex_);
    return last_qmp_.empty() ? "none yet (the smoke test asks)" : last_qmp_;
  }

  std::shared_ptr<const Prepared> Current() const {
    std::lock_guard lock(state_mutex_);
    return prepared_;
  }

  static Expected<std::string> ArtifactsDirectory() {
    if (const char* dir = std::getenv("PLIMSOLL_MICROVM_DIR"); dir != nullptr && *dir != '\0') {
      return std::string(dir);
    }
    auto image = image::LocateDefaultImage();
    if (!image.ok()) {
      return EnvironmentRefusal("No microvm guest artifacts: PLIMSOLL_MICROVM_DIR is not set "
                                "and no guest image was found (" + image.error().message() + ").");
    }
    return (image->directory.parent_path() / "microvm").string();
  }

  static void KillOurQemu(pid_t pid, const std::string& directory) {
    int pidfd = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
    if (pidfd < 0) return;
    // Checked after opening the pidfd, which pins the process.
    std::string cmdline = ReadFileText("/proc/" + std::to_string(pid) + "/cmdline");
    if (cmdline.find(directory + "/") != std::string::npos) {
      syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0);
      // Not our child (its parent crashed): wait until it is gone.
      for (int i = 0; i < 100 && kill(pid, 0) == 0 &&
                      ReadFileText("/proc/" + std::to_string(pid) + "/cmdline") == cmdline;
           ++i) {
        usleep(20'000);
      }
    }
    close(pidfd);
  }

  // Finds and checks the artifacts, QEMU and the accelerator; once, then the
  // same answer (a failure is tried again on the next call).
  Expected<std::shared_ptr<const Prepared>> Prepare() {
    std::lock_guard preparing(prepare_mutex_);
    if (auto current = Current()) return current;
    auto fresh = std::make_shared<Prepared>();
    auto dir = ArtifactsDirectory();
    if (!dir.ok()) return dir.error();
    fresh->artifacts_dir = *dir;
    if (access((*dir + "/inputs").c_str(), R_OK) != 0) {
      return EnvironmentRefusal("No complete microvm guest build in " + *dir +
                                " (build the microvm_guest target; it needs the guest image).");
    }
    VmConfig& config = fresh->config;
    config.kernel = *dir + "/vmlinuz";
    config.initramfs = *dir + "/initramfs.cpio.gz";
    config.disk = *dir + "/rootfs.erofs";
    fresh->identity = Trim(ReadFileText(*dir + "/identity"));
    fresh->kernel = Trim(ReadFileText(*dir + "/kernel"));
    // The artifacts must be the ones their build recorded.
    std::istringstream sums(ReadFileText(*dir + "/sha256sums"));
    std::map<std::string, std::string> recorded;
    for (std::string hex, file; sums >> hex >> file;) recorded[file] = hex;
    for (const char* file : {"vmlinuz", "initramfs.cpio.gz", "rootfs.erofs"}) {
      auto digest = Sha256File(*dir + "/" + file);
      if (!digest.ok()) return digest.error();
      if (recorded[file] != *digest) {
        return EnvironmentRefusal(*dir + "/" + file + " does not match its sha256sums entry (" +
                                  *digest + " vs \"" + recorded[file] + "\"); rebuild microvm_guest.");
      }
      fresh->artifacts_sha256 += (fresh->artifacts_sha256.empty() ? "" : ", ") +
                                 std::string(file) + " " + *digest;
    }
    config.qemu = FindInPath(kQemuName);
    if (config.qemu.empty()) {
      return EnvironmentRefusal(std::string(kQemuName) +
                                " is not installed (scripts/bootstrap installs qemu-system-x86).");
    }
    oci::SpawnOptions version;
    version.argv = {config.qemu, "--version"};
    auto said = oci::RunCommand(version, Clock::now() + kCommandBudget);
    if (!said.ok()) return EnvironmentRefusal(config.qemu + " --version: " + said.error().message());
    fresh->qemu_version = said->output.substr(0, said->output.find('\n'));
    config.memory_mib = CeilDiv(limits_.memory_bytes + kMicrovmOverheadBytes, kMiB);
    config.cpus = std::max<int64_t>(1, CeilDiv(limits_.cpus_millis, 1000));
    config.tmp_mib = std::max<int64_t>(1, CeilDiv(limits_.tmp_bytes, kMiB));
    config.work_mib = std::max<int64_t>(1, CeilDiv(limits_.work_bytes, kMiB));
    config.state_dir = settings_.state_dir;
    // The jail (microvm/jail.h): required, never skipped.
    auto jailer = microvm::LocateJailer();
    if (!jailer.ok()) return jailer.error();
    config.jailer = *jailer;
    auto cgroups = microvm::MicrovmCgroupLayout();
    if (!cgroups.ok()) return cgroups.error();
    config.cgroups = *cgroups;
    config.uids.base = settings_.jail_uid_base;

    switch (settings_.accel) {
      case MicrovmAccel::kTcg:
        config.accelerator = "tcg";
        fresh->accel_reason = "SANDBOX_MICROVM_ACCEL=tcg";
        break;
      case MicrovmAccel::kKvm: {
        KvmProbe probe = ProbeKvm(config);
        if (!probe.works) {
          return EnvironmentRefusal("SANDBOX_MICROVM_ACCEL=kvm, but KVM does not work here: " +
                                    probe.why + ".");
        }
        config.accelerator = "kvm";
        fresh->accel_reason = "SANDBOX_MICROVM_ACCEL=kvm; " + probe.why;
        break;
      }
      case MicrovmAccel::kAuto: {
        KvmProbe probe = ProbeKvm(config);
        config.accelerator = probe.works ? "kvm" : "tcg";
        fresh->accel_reason =
            "SANDBOX_MICROVM_ACCEL=auto: " + probe.why +
            (probe.works ? "" : "; fell back to TCG (software emulation)");
        break;
      }
    }
    fresh->jail =
        config.jailer + ": QEMU in its own mount, network, IPC and UTS namespaces, root a "
        "read-only tmpfs (pivot_root) holding only /usr, the loader's links, /dev/{null,zero,"
        "urandom" + std::string(config.accelerator == "kvm" ? ",kvm" : "") +
        "}, the artifacts and its VM directory; uid/gid one of " +
        std::to_string(config.uids.base) + "-" +
        std::to_string(config.uids.base + config.uids.count - 1) +
        " per live VM; no capabilities, no_new_privs, RLIMIT_CORE 0; cgroup " +
        config.cgroups->Describe() + " " + microvm::kMicrovmCgroupParent + "/<vm> (memory = VM + " +
        std::to_string(microvm::kVmmOverheadMiB) + " MiB, pids " +
        std::to_string(microvm::kVmmPids) + ", CPU " + std::to_string(config.cpus) + ")";
    std::lock_guard lock(state_mutex_);
    prepared_ = fresh;
    return std::shared_ptr<const Prepared>(fresh);
  }

  Expected<std::unique_ptr<MicrovmVm>> StartPooled() {
    auto prepared = Prepare();
    if (!prepared.ok()) return prepared.error();
    return MicrovmVm::Start((*prepared)->config, Clock::now() + kSetupBudget);
  }

  Expected<Evidence> CollectEvidence(Deadline deadline) {
    auto prepared_or = Prepare();
    if (!prepared_or.ok()) return prepared_or.error();
    const Prepared& ready = **prepared_or;
    bool kvm = ready.config.accelerator == "kvm";
    Evidence evidence;
    evidence.collected_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
    evidence.facts = {
        {"accelerator", (kvm ? "kvm (" : "qemu-tcg, software emulation (") + ready.accel_reason +
                            ")"},
        {"qemu", ready.qemu_version + " (" + ready.config.qemu + ")"},
        {"kernel", ready.kernel},
        {"host_kernel", HostKernel()},
        {"image", ready.identity},
        {"artifacts_sha256", ready.artifacts_sha256},
        {"vm", std::to_string(ready.config.memory_mib) + " MiB (memory limit + " +
                   std::to_string(kMicrovmOverheadBytes / kMiB) + " MiB for the guest kernel), " +
                   std::to_string(ready.config.cpus) + " vCPU, no network device, read-only disk"},
        {"vmm", "QEMU -M microvm -nodefaults, -sandbox on (seccomp; no privilege changes, no "
                "spawn), started by plimsoll-vmm-jail"},
        {"jail", ready.jail},
        {"attestation", "none: these are checks made from inside, not a hardware proof"}};
    if (!kvm) {
      evidence.facts.emplace_back(
          "tier_note", "TCG is not a security boundary in QEMU's security policy, so the tier "
                       "is kernel (a separate guest kernel), never vm");
    }

    // 0. The jail and QMP, seen from the host, on the VM the self-check
    // then runs in.
    auto booted = MicrovmVm::Start(ready.config, std::min(deadline, Clock::now() + kSetupBudget));
    if (!booted.ok()) return booted.error().WithContext("The evidence VM did not boot");
    evidence.checks = microvm::InspectJail(**booted);
    const microvm::QmpFacts qmp = (*booted)->qmp();
    RememberQmp(qmp);
    evidence.facts.emplace_back("qmp", QmpText(qmp));
    evidence.facts.emplace_back("boot_ms", std::to_string((*booted)->boot_time().count()) +
                                               " (jailer start to the agent's ready frame)");
    evidence.checks.push_back(
        {"qmp_accelerator", qmp.kvm_enabled == kvm,
         "QEMU started with -accel " + ready.config.accelerator + "; QMP query-kvm says " +
             (qmp.kvm_enabled ? "enabled" : "not enabled") + " (present: " +
             (qmp.kvm_present ? "true" : "false") + "), query-status " + qmp.status});

    // 1. The wall seen from inside, by the real agent in a real VM.
    Request check;
    check.project = linux_sandbox::SelfCheckProject(limits_, SelfCheckProfile::kMicrovm);
    check.timeout_ms = 60'000;
    auto run = RunJob(ready, check, std::min(deadline, Clock::now() + std::chrono::seconds(90)),
                      /*use_pool=*/false, std::move(*booted));
    if (!run.ok()) return run.error().WithContext("The self-check run failed");
    if (run->exit_code != 0) {
      return Failure(ErrorCode::kInternal, "The self-check exited with " +
                                               std::to_string(run->exit_code) + ": " +
                                               run->stderr_bytes.substr(0, 2000));
    }
    auto checks = linux_sandbox::ParseSelfCheckOutput(run->stdout_bytes, SelfCheckProfile::kMicrovm);
    if (!checks.ok()) return checks.error();
    evidence.checks.insert(evidence.checks.end(), checks->begin(), checks->end());

    // 2. Under KVM only: the hardware-virtualised guest that `vm` rests on.
    if (kvm) {
      bool flag = false;
      for (const EvidenceCheck& c : evidence.checks) {
        if (c.name == "guest_kernel_is_own") {
          flag = c.passed && c.detail.find("hypervisor flag: present") != std::string::npos;
        }
      }
      evidence.checks.push_back(
          {"hardware_virtualisation", flag,
           std::string("QEMU started with -accel kvm; the guest's own kernel ") +
               (flag ? "sees the hypervisor CPU flag" : "does not show the hypervisor CPU flag")});
    }

    // 3. The VM's size bounds memory: a hoarder is OOM-killed inside.
    auto hoarded = RunJob(ready, MemoryProbe(), std::min(deadline, Clock::now() + std::chrono::seconds(90)),
                          /*use_pool=*/false);
    if (!hoarded.ok()) return hoarded.error().WithContext("The memory probe failed");
    evidence.checks.push_back(MemoryProbeCheck(*hoarded));

    if (!evidence.AllChecksPassed()) {
      evidence.tier = Tier::kUnknown;
      evidence.summary = "No tier: at least one check of the wall failed inside the VM.";
    } else if (kvm && qmp.kvm_enabled) {
      evidence.tier = Tier::kVm;
      evidence.summary =
          "Tier vm: QEMU ran the guest under KVM, and inside it the guest's own kernel (" +
          ready.kernel + ") saw the hypervisor CPU flag, a read-only root, bounded tmpfs mounts, "
          "loopback only, an unprivileged user and the process and memory limits; QMP's "
          "query-kvm reported KVM enabled; QEMU ran jailed (checked from the host).";
    } else {
      evidence.tier = Tier::kKernel;
      evidence.summary =
          "Tier kernel: the guest runs its own kernel (" + ready.kernel +
          ") in a QEMU microvm under TCG, software emulation, which QEMU's security policy does "
          "not treat as a security boundary, so not vm; inside, the self-check found a read-only "
          "root, bounded tmpfs mounts, loopback only, an unprivileged user and the process and "
          "memory limits; QEMU ran jailed (checked from the host). Accelerator: " +
          ready.accel_reason + ".";
    }
    return evidence;
  }

  // The memory probe inside a VM. The self_check.h probe (one
  // bytearray(memory_bytes + 64 MiB)) is refused by the guest kernel's
  // overcommit heuristic at once (MemoryError, exit 1: measured), which
  // says nothing about the OOM killer. This one writes 8 MiB chunks up to
  // memory_bytes + 64 MiB, so the pages are really used and the guest's OOM
  // killer must act: the hoarder is killed inside the VM (exit 137).
  Request MemoryProbe() const {
    Request hoard;
    hoard.python = PythonPayload{
        "chunks = []\n"
        "while len(chunks) * 8 < " + std::to_string(CeilDiv(limits_.memory_bytes, kMiB) + 64) +
        ":\n"
        "    chunks.append(b'\\x01' * (8 << 20))\n"
        "print('survived', len(chunks) * 8, 'MiB')\n"};
    hoard.timeout_ms = 60'000;
    return hoard;
  }

  static EvidenceCheck MemoryProbeCheck(const Result& probe) {
    return {"memory_limit_enforced", probe.exit_code == kExitOutOfMemory,
            "writing memory_bytes + 64 MiB in 8 MiB chunks inside the VM: exit " +
                std::to_string(probe.exit_code) +
                (probe.exit_code == kExitOutOfMemory ? " (killed by the guest's OOM killer)" : "") +
                (probe.stdout_bytes.empty() ? std::string() : ", stdout " + probe.stdout_bytes) +
                (probe.stderr_bytes.empty() ? std::string()
                                            : ", stderr " + probe.stderr_bytes.substr(0, 300))};
  }

  // One job in one VM: a pooled one when the pool has one (and `use_pool`),
  // else one booted now (within kSetupBudget; the run's own time starts
  // once the VM is up). The VM is destroyed afterwards.
  Expected<Result> RunJob(const Prepared& prepared, const Request& request, Deadline deadline,
                          bool use_pool, std::unique_ptr<MicrovmVm> booted = nullptr) {
    Clock::time_point start = Clock::now();
    std::string key(guest::kReportKeyBytes, '\0');
    if (getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) {
      return EnvironmentRefusal("No randomness for the report key.");
    }
    auto job = guest::JobFromRequest(request, limits_, key);
    if (!job.ok()) return job.error();
    // No cgroup inside the VM: the guest's process limit is RLIMIT_NPROC.
    job->nproc = limits_.pids;

    std::unique_ptr<MicrovmVm> vm = booted ? std::move(booted) : use_pool ? pool_.Take() : nullptr;
    if (!vm) {
      auto started = MicrovmVm::Start(prepared.config, Clock::now() + kSetupBudget);
      if (!started.ok()) return started.error();
      vm = std::move(*started);
    }
    // A cold boot does not eat the run's own time.
    Deadline run_deadline =
        std::max(deadline, Clock::now() + std::chrono::milliseconds(request.timeout_ms));

    Result result;
    // vm only when QMP confirmed that KVM accelerates this very VM.
    result.isolation = prepared.config.accelerator == "kvm" && vm->qmp().kvm_enabled
                           ? Tier::kVm
                           : Tier::kKernel;
    result.environment = prepared.identity;
    result.kind = *request.kind();
    Status exchanged =
        guest::ExchangeJob(vm->channel(), *job, request, run_deadline + kReportGrace, &result);
    if (exchanged.ok()) {
      destroyer_.Add(std::move(vm));  // the VM powers off by itself; off the answer's path
      result.duration_ms = MillisecondsSince(start);
      return result;
    }
    std::string diagnostics = vm->Diagnostics();
    Status destroyed = vm->Destroy(Clock::now() + std::chrono::seconds(10));
    result.duration_ms = MillisecondsSince(start);
    std::string message =
        "The guest agent gave no valid report (" + exchanged.error().message() + ")" +
        (diagnostics.empty() ? "" : "; QEMU and the console said: " + diagnostics.substr(0, 1500));
    if (!destroyed.ok()) message += "; cleanup failed: " + destroyed.error().message();
    return guest::AnswerFailedExchange(request, exchanged.error(), message, std::move(result));
  }

  const Limits limits_;
  const MicrovmSettings settings_;
  std::mutex prepare_mutex_;
  mutable std::mutex state_mutex_;
  std::shared_ptr<const Prepared> prepared_;
  std::string last_qmp_;  // the evidence VM's QMP answers
  // Destroyed in reverse order: the pool first (its idle VMs go to the
  // destroyer), then the destroyer.
  pool::Destroyer<MicrovmVm> destroyer_{kMaxPendingDestroys};
  pool::WarmPool<MicrovmVm> pool_;
};

}  // namespace

Expected<MicrovmSettings> MicrovmSettingsFromEnvironment() {
  MicrovmSettings settings;
  if (const char* accel = std::getenv("SANDBOX_MICROVM_ACCEL"); accel != nullptr && *accel != '\0') {
    std::string_view text(accel);
    if (text == "auto") {
      settings.accel = MicrovmAccel::kAuto;
    } else if (text == "kvm") {
      settings.accel = MicrovmAccel::kKvm;
    } else if (text == "tcg") {
      settings.accel = MicrovmAccel::kTcg;
    } else {
      return Refusal(NotDispatched::kEnvironment, "Unknown accelerator \"" + std::string(text) +
                                                      "\" (SANDBOX_MICROVM_ACCEL); valid: kvm, "
                                                      "tcg, auto.");
    }
  }
  if (const char* size = std::getenv("SANDBOX_MICROVM_POOL_SIZE"); size != nullptr && *size != '\0') {
    std::string_view text(size);
    size_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value > 16) {
      return Refusal(NotDispatched::kEnvironment,
                     "SANDBOX_MICROVM_POOL_SIZE must be a whole number from 0 to 16.");
    }
    settings.pool_size = value;
  }
  if (const char* state = std::getenv("SANDBOX_MICROVM_STATE_DIR"); state != nullptr && *state != '\0') {
    settings.state_dir = state;
  }
  if (const char* base = std::getenv("SANDBOX_MICROVM_JAIL_UID_BASE");
      base != nullptr && *base != '\0') {
    std::string_view text(base);
    uint64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    constexpr uint64_t kHighest = uint64_t{0xFFFFFFFE} - microvm::kJailUidCount;
    if (error != std::errc() || end != text.data() + text.size() || value < 1 ||
        value > kHighest) {
      return Refusal(NotDispatched::kEnvironment,
                     "SANDBOX_MICROVM_JAIL_UID_BASE must be a whole number from 1 to " +
                         std::to_string(kHighest) + " (the first of " +
                         std::to_string(microvm::kJailUidCount) + " uids the jailed QEMUs use).");
    }
    settings.jail_uid_base = static_cast<uint32_t>(value);
  }
  return settings;
}

std::unique_ptr<Provider> MakeMicrovmProvider(const Limits& limits,
                                              const MicrovmSettings& settings) {
  return std::make_unique<MicrovmProvider>(limits, settings);
}

Expected<std::unique_ptr<Provider>> MakeMicrovmProvider(const Limits& limits) {
  auto settings = MicrovmSettingsFromEnvironment();
  if (!settings.ok()) return settings.error();
  return MakeMicrovmProvider(limits, *settings);
}

}  // namespace plimsoll
