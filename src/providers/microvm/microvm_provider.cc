#include "providers/microvm/microvm_provider.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>

#include "base/unique_fd.h"
#include "guest/exchange.h"
#include "guest/protocol.h"
#include "guest/session_channel.h"
#include "image/image.h"
#include "os/cgroup.h"
#include "os/held_bind.h"
#include "os/seccomp.h"
#include "os/self_check.h"
#include "os/spawn.h"
#include "providers/generations.h"
#include "providers/microvm/jail_evidence.h"
#include "providers/microvm/microvm_reconcile.h"
#include "providers/microvm/microvm_vm.h"
#include "providers/pool/warm_pool.h"

namespace plimsoll {
namespace {

using Clock = std::chrono::steady_clock;
using microvm::MicrovmVm;
using microvm::VmConfig;
using os::SelfCheckProfile;

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

// The SHA-256 of what `fd` holds, read from its start (pread: the
// descriptor's offset is left alone).
Expected<std::string> Sha256Fd(int fd, const std::string& path) {
  EVP_MD_CTX* context = EVP_MD_CTX_new();
  EVP_DigestInit_ex(context, EVP_sha256(), nullptr);
  std::vector<char> buffer(1 << 20);
  ssize_t got = 0;
  off_t offset = 0;
  while ((got = pread(fd, buffer.data(), buffer.size(), offset)) > 0) {
    EVP_DigestUpdate(context, buffer.data(), static_cast<size_t>(got));
    offset += got;
  }
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

int64_t CeilDiv(int64_t value, int64_t unit) {
  return (value + unit - 1) / unit;
}

// One of the three artifacts, held open from the moment it was found: the
// file a generation verified is the one its VMs boot (held_bind.h).
struct HeldArtifact {
  std::string name;  // "vmlinuz", ...
  base::UniqueFd fd;
  struct stat info {};
  std::shared_ptr<const os::HeldBind> bind;  // set for a new generation
};

// One configuration generation (generations.h): what every run needs,
// prepared from the host for a smoke test and kept while VMs use it.
struct Prepared {
  VmConfig config;
  std::vector<HeldArtifact> artifacts;
  std::string artifacts_dir;
  std::string identity;          // the disk's guest image identity
  std::string kernel;            // the artifacts' `kernel` file
  std::string qemu_version;      // first line of `qemu-system-x86_64 --version`
  std::string artifacts_sha256;  // set by VerifyAndBind
  std::string recorded_sums;     // the build's sha256sums, as read

  // Whether an artifact has been removed from the host (a rebuild swaps
  // the whole directory). The kernel cannot bind a removed file again, so
  // no new VM of this configuration can boot; running ones are unaffected.
  bool ArtifactsRemoved() const {
    for (const HeldArtifact& artifact : artifacts) {
      struct stat info {};
      if (fstat(artifact.fd.get(), &info) != 0 || info.st_nlink == 0) return true;
    }
    return false;
  }
  std::string accel_reason;  // why this accelerator
  std::string jail;          // how QEMU is jailed, for Describe and the evidence

  // The artifacts by identity and inode (not by content: hashing them is
  // for a new generation), how QEMU runs them, and the steps' filter.
  std::string Key() const {
    std::string key = identity + "\n" + kernel + "\n" + qemu_version + "\n" + config.accelerator +
                      "\n" + seccomp_source + "\n" + seccomp_filter;
    for (const HeldArtifact& artifact : artifacts) {
      key += "\n" + artifact.name + " " + std::to_string(artifact.info.st_dev) + ":" +
             std::to_string(artifact.info.st_ino) + ":" + std::to_string(artifact.info.st_size) +
             ":" + std::to_string(artifact.info.st_mtim.tv_sec) + "." +
             std::to_string(artifact.info.st_mtim.tv_nsec);
    }
    return key;
  }
  // Our seccomp policy compiled on the host (raw sock_filter bytes): sent in
  // every job, the agent installs it in each step (guest::Job).
  std::string seccomp_filter;
  std::string seccomp_source;
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
      while (!probe.why.empty() && probe.why.back() == '.')
        probe.why.pop_back();  // the refusal adds its own
      for (char& c : probe.why) c = c == '\n' ? ' ' : c;
    }
  }
  kvm_probes[key] = probe;
  return probe;
}

// A session's VM (SPEC §9): booted for the session (never from the pool:
// pooled agents take one job), its agent started with --session, so /work
// and the interpreters live as long as the VM does.
class MicrovmSession final : public ProviderSession {
 public:
  MicrovmSession(std::shared_ptr<const Prepared> prepared, std::unique_ptr<MicrovmVm> vm,
                 const Limits& limits)
      : prepared_(std::move(prepared)),
        vm_(std::move(vm)),
        // vm only when QMP confirmed that KVM accelerates this very VM.
        tier_(prepared_->config.accelerator == "kvm" && vm_->qmp().kvm_enabled ? Tier::kVm
                                                                               : Tier::kKernel),
        // No cgroup inside the VM: the steps' process limit is RLIMIT_NPROC,
        // and the agent installs the host-compiled filter, as in RunJob.
        channel_(limits, tier_, prepared_->identity, {limits.pids, prepared_->seccomp_filter}) {}

  ~MicrovmSession() override {
    Status destroyed = vm_->Destroy(Clock::now() + std::chrono::seconds(15));
    (void)destroyed;  // Reconcile removes what a failed destroy left
  }

  Tier tier() const override { return tier_; }
  std::string environment() const override { return prepared_->identity; }

  Expected<Result> Run(const Request& request, Deadline deadline) override {
    return Call(request, deadline, nullptr);
  }

  // Every VM's init mounts /run; the agent's relay binds its socket there
  // for this call only.
  Expected<Result> RunGranted(const Request& request, Deadline deadline,
                              GrantedCalls& calls) override {
    return Call(request, deadline, &calls);
  }

  // QEMU alive with the channel quiet between calls (an agent that wrote
  // unasked or hung up has left its protocol), and QEMU still jailed as it
  // was started: its uid, no capabilities, no_new_privs, its seccomp
  // filter, its namespaces, its root and its cgroup (jail_evidence.h, read
  // from /proc/<QEMU> now, not remembered).
  Status CheckBoundary() override {
    if (broken_) return BrokenRefusal();
    std::string differs;
    if (!vm_->Healthy()) {
      differs = "QEMU has exited, or the agent wrote or hung up between calls";
    } else {
      for (const EvidenceCheck& check : microvm::InspectJail(*vm_)) {
        if (!check.passed) {
          differs += (differs.empty() ? "" : "; ") + check.name + ": " + check.detail;
        }
      }
    }
    if (differs.empty()) return Status::Ok();
    broken_ = true;
    return Failure(ErrorCode::kInternal,
                   "The session's VM is not as it was left: " + differs + ".");
  }

  // The VM's /work is a tmpfs in guest memory, which the host cannot
  // measure from outside; its size (Limits::work_bytes) still bounds it.
  int64_t DiskUsedBytes() override { return 0; }

  std::vector<std::string> InterpretersAlive() override { return channel_.InterpretersAlive(); }

 private:
  static Error BrokenRefusal() {
    return Refusal(NotDispatched::kEnvironment,
                   "The session's VM has ended (its agent or QEMU failed); open a new session.");
  }

  Expected<Result> Call(const Request& request, Deadline deadline, GrantedCalls* calls) {
    if (broken_) return BrokenRefusal();
    Status failure = Status::Ok();
    auto result = channel_.Call(vm_->channel(), request, deadline + kReportGrace, &failure, calls);
    if (failure.ok()) return result;
    broken_ = true;
    channel_.Forget();
    std::string diagnostics = vm_->Diagnostics();
    std::string message =
        "The session's guest agent gave no valid report (" + failure.error().message() + ")" +
        (diagnostics.empty() ? "" : "; QEMU and the console said: " + diagnostics.substr(0, 1500));
    return guest::AnswerFailedExchange(request, failure.error(), message, std::move(*result));
  }

  const std::shared_ptr<const Prepared> prepared_;
  std::unique_ptr<MicrovmVm> vm_;
  const Tier tier_;
  guest::SessionChannel channel_;
  std::atomic<bool> broken_{false};
};

class MicrovmProvider final : public Provider {
 public:
  MicrovmProvider(const Limits& limits, const MicrovmSettings& settings)
      : limits_(limits),
        settings_(settings),
        pool_(
            settings.pool_size, [this](uint64_t generation) { return StartPooled(generation); },
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
    description.capabilities.sessions = true;
    description.capabilities.grants = true;
    description.limits = limits_;
    auto serving = generations_.Serving();
    std::shared_ptr<const Prepared> prepared = serving.config;
    std::string accelerator;
    if (prepared) {
      accelerator = prepared->config.accelerator + " (" + prepared->accel_reason + ")";
      description.tier = prepared->config.accelerator == "kvm" ? Tier::kVm : Tier::kKernel;
      description.environment = prepared->identity;
    } else {
      accelerator = std::string(AccelName()) +
                    " (not resolved yet: the first smoke test or run "
                    "does)";
      description.tier = settings_.accel == MicrovmAccel::kKvm ? Tier::kVm : Tier::kKernel;
    }
    description.details = {{"accelerator", accelerator}};
    if (prepared) {
      description.details.emplace_back("qemu", prepared->qemu_version);
      description.details.emplace_back("kernel", prepared->kernel);
      description.details.emplace_back(
          "vm", std::to_string(prepared->config.memory_mib) + " MiB (memory limit + " +
                    std::to_string(kMicrovmOverheadBytes / kMiB) + " MiB for the guest kernel), " +
                    std::to_string(prepared->config.cpus) + " vCPU");
      description.details.emplace_back(
          "artifacts", prepared->artifacts_dir + " (held: " + prepared->config.disk + ", ...)");
      description.details.emplace_back("generation", std::to_string(serving.number));
      description.details.emplace_back("jail", prepared->jail);
    } else if (auto dir = ArtifactsDirectory(); dir.ok()) {
      description.details.emplace_back("kernel", Trim(ReadFileText(*dir + "/kernel")));
      description.details.emplace_back("artifacts", *dir);
    }
    description.details.emplace_back("host_kernel", HostKernel());
    description.details.emplace_back(
        "qmp",
        "a private socket per VM (<vm dir>/qmp.sock, 0700, the VM's uid): after each boot "
        "query-kvm (the tier needs enabled:true for vm) and query-status; last: " +
            LastQmp());
    description.details.emplace_back("pool", pool_.Describe());
    description.pool = pool_.State();
    return description;
  }

  Status Reconcile() override {
    // Our VMs' directories whose owner is gone, and the QEMUs provably
    // started for them (microvm_reconcile.h: the configured binary, a jail
    // uid owning the directory, our cgroup; a process whose argv merely
    // names the directory is spared).
    microvm::VmReconcileScope scope;
    scope.state_dir = settings_.state_dir;
    scope.qemu = FindInPath(kQemuName);
    scope.uids.base = settings_.jail_uid_base;
    std::string problems = microvm::ReconcileVmDirectories(scope).problems;
    // The VMs' cgroups whose owner is gone (their QEMUs, if any, die too).
    // No cgroups on this host: nothing of ours can be there.
    if (auto layout = microvm::MicrovmCgroupLayout(); layout.ok()) {
      auto removed = os::ReconcileCgroups(*layout);
      if (!removed.ok()) problems += "cgroups: " + removed.error().message() + "; ";
    }
    if (Status binds = os::RemoveLeftoverBinds(HeldArtifactsDirectory()); !binds.ok()) {
      problems += binds.error().message();
    }
    if (!problems.empty()) return Failure(ErrorCode::kInternal, "Reconcile: " + problems);
    return Status::Ok();
  }

  // Read-only: what a smoke test would prepare, prepared and dropped.
  Status Preflight() override {
    auto prepared = PrepareFromHost();
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
      return Refusal(NotDispatched::kUnsupported, "A cell runs only inside a session.");
    }
    auto serving = generations_.Serving();
    PLIMSOLL_RETURN_IF_ERROR(CheckServingEnvironment(static_cast<bool>(serving), "microvm",
                                                     serving ? serving.config->identity : "",
                                                     request.environment));
    return RunJob(*serving.config, serving.number, request, deadline, /*use_pool=*/true);
  }

  // As Run; the guest reaches `calls` through the agent's relay.
  Expected<Result> RunGranted(const Request& request, Deadline deadline,
                              GrantedCalls& calls) override {
    if (request.cell) {
      return Refusal(NotDispatched::kUnsupported, "A cell runs only inside a session.");
    }
    auto serving = generations_.Serving();
    PLIMSOLL_RETURN_IF_ERROR(CheckServingEnvironment(static_cast<bool>(serving), "microvm",
                                                     serving ? serving.config->identity : "",
                                                     request.environment));
    return RunJob(*serving.config, serving.number, request, deadline, /*use_pool=*/true,
                  /*booted=*/nullptr, &calls);
  }

  // A VM of its own, booted now with its agent in session mode.
  Expected<std::unique_ptr<ProviderSession>> OpenSession(const SessionSpec& spec,
                                                         Deadline deadline) override {
    auto serving = generations_.Serving();
    PLIMSOLL_RETURN_IF_ERROR(CheckServingEnvironment(static_cast<bool>(serving), "microvm",
                                                     serving ? serving.config->identity : "",
                                                     spec.environment));
    if (serving.config->ArtifactsRemoved()) return ReplacedArtifactsRefusal();
    VmConfig config = serving.config->config;
    config.session = true;
    auto started = MicrovmVm::Start(config, std::min(deadline, Clock::now() + kSetupBudget));
    if (!started.ok()) return started.error();
    return std::unique_ptr<ProviderSession>(
        std::make_unique<MicrovmSession>(serving.config, std::move(*started), limits_));
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

  static Error ReplacedArtifactsRefusal() {
    return EnvironmentRefusal(
        "The microvm artifacts this configuration was tested with have been replaced on the "
        "host; the next smoke test prepares the new ones.");
  }

  static std::string QmpText(const microvm::QmpFacts& qmp) {
    return std::string("QEMU ") + qmp.version +
           " query-kvm {enabled: " + (qmp.kvm_enabled ? "true" : "false") +
           ", present: " + (qmp.kvm_present ? "true" : "false") + "}, query-status " + qmp.status;
  }

  void RememberQmp(const microvm::QmpFacts& qmp) {
    std::lock_guard lock(state_mutex_);
    last_qmp_ = QmpText(qmp);
  }

  std::string LastQmp() const {
    std::lock_guard lock(state_mutex_);
    return last_qmp_.empty() ? "none yet (the smoke test asks)" : last_qmp_;
  }

  std::string HeldArtifactsDirectory() const { return settings_.state_dir + "/artifacts"; }

  static Expected<std::string> ArtifactsDirectory() {
    if (const char* dir = std::getenv("PLIMSOLL_MICROVM_DIR"); dir != nullptr && *dir != '\0') {
      return std::string(dir);
    }
    auto image = image::LocateDefaultImage();
    if (!image.ok()) {
      return EnvironmentRefusal(
          "No microvm guest artifacts: PLIMSOLL_MICROVM_DIR is not set "
          "and no guest image was found (" +
          image.error().message() + ").");
    }
    return (image->directory.parent_path() / "microvm").string();
  }

  // A configuration from the host as it is now: the artifacts opened once
  // (through one descriptor of their directory, so identity, checksums and
  // files come from the same build), QEMU, the jailer, the accelerator.
  // Installs nothing and hashes nothing (Verify does, for a new generation).
  Expected<std::shared_ptr<Prepared>> PrepareFromHost() const {
    auto fresh = std::make_shared<Prepared>();
    auto dir = ArtifactsDirectory();
    if (!dir.ok()) return dir.error();
    fresh->artifacts_dir = *dir;
    base::UniqueFd directory(open(dir->c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    auto read_text = [&directory](const char* name) -> std::optional<std::string> {
      base::UniqueFd file(openat(directory.get(), name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
      if (!file.valid()) return std::nullopt;
      std::string text;
      char buffer[4096];
      for (ssize_t got; (got = read(file.get(), buffer, sizeof buffer)) > 0;) {
        text.append(buffer, static_cast<size_t>(got));
        if (text.size() > (1 << 16)) return std::nullopt;  // no such small file of ours
      }
      return text;
    };
    if (!directory.valid() || !read_text("inputs")) {
      return EnvironmentRefusal("No complete microvm guest build in " + *dir +
                                " (build the microvm_guest target; it needs the guest image).");
    }
    fresh->identity = Trim(read_text("identity").value_or(""));
    fresh->kernel = Trim(read_text("kernel").value_or(""));
    fresh->recorded_sums = read_text("sha256sums").value_or("");
    for (const char* name : {"vmlinuz", "initramfs.cpio.gz", "rootfs.erofs"}) {
      HeldArtifact artifact;
      artifact.name = name;
      artifact.fd.Reset(openat(directory.get(), name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
      if (!artifact.fd.valid() || fstat(artifact.fd.get(), &artifact.info) != 0 ||
          !S_ISREG(artifact.info.st_mode)) {
        return EnvironmentRefusal("Cannot read " + *dir + "/" + name + ": " + std::strerror(errno) +
                                  "; rebuild microvm_guest.");
      }
      fresh->artifacts.push_back(std::move(artifact));
    }
    VmConfig& config = fresh->config;
    config.kernel = *dir + "/vmlinuz";
    config.initramfs = *dir + "/initramfs.cpio.gz";
    config.disk = *dir + "/rootfs.erofs";
    config.qemu = FindInPath(kQemuName);
    if (config.qemu.empty()) {
      return EnvironmentRefusal(std::string(kQemuName) +
                                " is not installed (scripts/bootstrap installs qemu-system-x86).");
    }
    os::SpawnOptions version;
    version.argv = {config.qemu, "--version"};
    auto said = os::RunCommand(version, Clock::now() + kCommandBudget);
    if (!said.ok())
      return EnvironmentRefusal(config.qemu + " --version: " + said.error().message());
    fresh->qemu_version = said->output.substr(0, said->output.find('\n'));
    // The policy every OS-level tier applies, compiled here (the agent is
    // static and links no libseccomp) and installed by the agent in the VM.
    auto policy_text = os::ActiveSeccompPolicyText(&fresh->seccomp_source);
    if (!policy_text.ok()) return EnvironmentRefusal(policy_text.error().message());
    auto policy = os::ParseSeccompPolicy(*policy_text);
    if (!policy.ok()) return EnvironmentRefusal(policy.error().message());
    auto program = os::CompileSeccompPolicy(*policy);
    if (!program.ok()) return EnvironmentRefusal(program.error().message());
    fresh->seccomp_filter.assign(reinterpret_cast<const char*>(program->instructions.data()),
                                 program->instructions.size() * sizeof(sock_filter));
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
          return EnvironmentRefusal(
              "SANDBOX_MICROVM_ACCEL=kvm, but KVM does not work here: " + probe.why + ".");
        }
        config.accelerator = "kvm";
        fresh->accel_reason = "SANDBOX_MICROVM_ACCEL=kvm; " + probe.why;
        break;
      }
      case MicrovmAccel::kAuto: {
        KvmProbe probe = ProbeKvm(config);
        config.accelerator = probe.works ? "kvm" : "tcg";
        fresh->accel_reason = "SANDBOX_MICROVM_ACCEL=auto: " + probe.why +
                              (probe.works ? "" : "; fell back to TCG (software emulation)");
        break;
      }
    }
    fresh->jail =
        config.jailer +
        ": QEMU in its own mount, network, IPC and UTS namespaces, root a "
        "read-only tmpfs (pivot_root) holding only /usr, the loader's links, /dev/{null,zero,"
        "urandom" +
        std::string(config.accelerator == "kvm" ? ",kvm" : "") +
        "}, the artifacts and its VM directory; uid/gid one of " +
        std::to_string(config.uids.base) + "-" +
        std::to_string(config.uids.base + config.uids.count - 1) +
        " per live VM; no capabilities, no_new_privs, RLIMIT_CORE 0; cgroup " +
        config.cgroups->Describe() + " " + microvm::kMicrovmCgroupParent + "/<vm> (memory = VM + " +
        std::to_string(microvm::kVmmOverheadMiB) + " MiB, pids " +
        std::to_string(microvm::kVmmPids) + ", CPU " + std::to_string(config.cpus) + ")";
    return fresh;
  }

  // For a new generation: the held artifacts must be the ones their build
  // recorded (hashed through the descriptors), and VMs boot them through
  // binds of those descriptors, never through the build's paths.
  Status VerifyAndBind(Prepared& prepared) const {
    std::istringstream sums(prepared.recorded_sums);
    std::map<std::string, std::string> recorded;
    for (std::string hex, file; sums >> hex >> file;) recorded[file] = hex;
    for (HeldArtifact& artifact : prepared.artifacts) {
      std::string path = prepared.artifacts_dir + "/" + artifact.name;
      auto digest = Sha256Fd(artifact.fd.get(), path);
      if (!digest.ok()) return digest.error();
      if (recorded[artifact.name] != *digest) {
        return EnvironmentRefusal(path + " does not match its sha256sums entry (" + *digest +
                                  " vs \"" + recorded[artifact.name] +
                                  "\"); rebuild microvm_guest.");
      }
      prepared.artifacts_sha256 +=
          (prepared.artifacts_sha256.empty() ? "" : ", ") + artifact.name + " " + *digest;
      auto bind = os::HeldBind::Make(HeldArtifactsDirectory(),
                                     "/proc/self/fd/" + std::to_string(artifact.fd.get()),
                                     os::HeldBind::Kind::kFile, artifact.name);
      if (!bind.ok()) return bind.error();
      artifact.bind = std::move(*bind);
    }
    prepared.config.kernel = prepared.artifacts[0].bind->path();
    prepared.config.initramfs = prepared.artifacts[1].bind->path();
    prepared.config.disk = prepared.artifacts[2].bind->path();
    return Status::Ok();
  }

  // The pool's factory: a VM of the serving generation, if that is still
  // `generation` (the pool drops it otherwise anyway).
  Expected<std::unique_ptr<MicrovmVm>> StartPooled(uint64_t generation) {
    auto serving = generations_.Serving();
    if (!serving || serving.number != generation) {
      return EnvironmentRefusal("The configuration the pool was filling for no longer serves.");
    }
    if (serving.config->ArtifactsRemoved()) {
      return EnvironmentRefusal("The artifacts of the serving configuration have been replaced.");
    }
    return MicrovmVm::Start(serving.config->config, Clock::now() + kSetupBudget);
  }

  // The smoke test: a fresh configuration from the host (verified and bound
  // only when it is new), its checks, and its promotion when all passed.
  Expected<Evidence> CollectEvidence(Deadline deadline) {
    auto fresh = PrepareFromHost();
    if (!fresh.ok()) return fresh.error();
    auto serving = generations_.Serving();
    if (!serving || serving.config->Key() != (*fresh)->Key()) {
      PLIMSOLL_RETURN_IF_ERROR(VerifyAndBind(**fresh));
    }
    auto candidate = generations_.Candidate(std::move(*fresh));
    if (!candidate.config->artifacts[0].bind) {
      return Failure(ErrorCode::kInternal, "The configuration to test has no artifact binds.");
    }
    const Prepared& ready = *candidate.config;
    bool kvm = ready.config.accelerator == "kvm";
    Evidence evidence;
    evidence.generation = candidate.number;
    evidence.environment = ready.identity;
    evidence.collected_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
    evidence.facts = {
        {"accelerator",
         (kvm ? "kvm (" : "qemu-tcg, software emulation (") + ready.accel_reason + ")"},
        {"qemu", ready.qemu_version + " (" + ready.config.qemu + ")"},
        {"kernel", ready.kernel},
        {"host_kernel", HostKernel()},
        {"image", ready.identity},
        {"artifacts_sha256", ready.artifacts_sha256},
        {"vm", std::to_string(ready.config.memory_mib) + " MiB (memory limit + " +
                   std::to_string(kMicrovmOverheadBytes / kMiB) + " MiB for the guest kernel), " +
                   std::to_string(ready.config.cpus) + " vCPU, no network device, read-only disk"},
        {"vmm",
         "QEMU -M microvm -nodefaults, -sandbox on (seccomp; no privilege changes, no "
         "spawn), started by plimsoll-vmm-jail"},
        {"jail", ready.jail},
        {"seccomp", ready.seccomp_source + ", deny by default (EPERM), compiled on the host and "
                                           "installed by the agent in every step inside the VM"},
        {"attestation", "none: these are checks made from inside, not a hardware proof"}};
    if (!kvm) {
      evidence.facts.emplace_back(
          "tier_note",
          "TCG is not a security boundary in QEMU's security policy, so the tier "
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
    check.project = os::SelfCheckProject(limits_, SelfCheckProfile::kMicrovm);
    check.timeout_ms = 60'000;
    auto run = RunJob(ready, candidate.number, check,
                      std::min(deadline, Clock::now() + std::chrono::seconds(90)),
                      /*use_pool=*/false, std::move(*booted));
    if (!run.ok()) return run.error().WithContext("The self-check run failed");
    if (run->exit_code != 0) {
      return Failure(ErrorCode::kInternal, "The self-check exited with " +
                                               std::to_string(run->exit_code) + ": " +
                                               run->stderr_bytes.substr(0, 2000));
    }
    auto checks = os::ParseSelfCheckOutput(run->stdout_bytes, SelfCheckProfile::kMicrovm);
    if (!checks.ok()) return checks.error();
    evidence.checks.insert(evidence.checks.end(), checks->begin(), checks->end());

    // (No check of the guest's hypervisor CPU flag: QEMU's TCG shows it too
    // (-cpu max), so it proves nothing; `vm` rests on QMP's query-kvm above.)

    // 3. The VM's size bounds memory: a hoarder is OOM-killed inside.
    auto hoarded = RunJob(ready, candidate.number, MemoryProbe(),
                          std::min(deadline, Clock::now() + std::chrono::seconds(90)),
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
          ready.kernel +
          ") saw our seccomp policy, a read-only root, bounded tmpfs mounts, "
          "loopback only, an unprivileged user and the process and memory limits; QMP's "
          "query-kvm reported KVM enabled; QEMU ran jailed (checked from the host).";
    } else {
      evidence.tier = Tier::kKernel;
      evidence.summary =
          "Tier kernel: the guest runs its own kernel (" + ready.kernel +
          ") in a QEMU microvm under TCG, software emulation, which QEMU's security policy does "
          "not treat as a security boundary, so not vm; inside, the self-check found our seccomp "
          "policy, a read-only "
          "root, bounded tmpfs mounts, loopback only, an unprivileged user and the process and "
          "memory limits; QEMU ran jailed (checked from the host). Accelerator: " +
          ready.accel_reason + ".";
    }
    // Only a configuration whose every check passed serves runs (and fills
    // the pool: SmokeTest's FollowEvidence).
    if (evidence.AllChecksPassed()) generations_.Promote(candidate);
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
        "while len(chunks) * 8 < " +
        std::to_string(CeilDiv(limits_.memory_bytes, kMiB) + 64) +
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
  // With `calls` (a granted run) the agent's relay serves them over the
  // VM's channel (every VM's init mounts the /run the relay needs).
  Expected<Result> RunJob(const Prepared& prepared, uint64_t generation, const Request& request,
                          Deadline deadline, bool use_pool,
                          std::unique_ptr<MicrovmVm> booted = nullptr,
                          GrantedCalls* calls = nullptr) {
    Clock::time_point start = Clock::now();
    std::string key(guest::kReportKeyBytes, '\0');
    if (getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) {
      return EnvironmentRefusal("No randomness for the report key.");
    }
    auto job = guest::JobFromRequest(request, limits_, key);
    if (!job.ok()) return job.error();
    // No cgroup inside the VM: the guest's process limit is RLIMIT_NPROC.
    job->nproc = limits_.pids;
    job->seccomp_filter = prepared.seccomp_filter;
    job->host_calls = calls != nullptr;

    std::unique_ptr<MicrovmVm> vm = booted     ? std::move(booted)
                                    : use_pool ? pool_.Take(generation)
                                               : nullptr;
    if (!vm) {
      if (prepared.ArtifactsRemoved()) return ReplacedArtifactsRefusal();
      auto started = MicrovmVm::Start(prepared.config, Clock::now() + kSetupBudget);
      if (!started.ok()) return started.error();
      vm = std::move(*started);
    }
    // A cold boot does not eat the run's own time.
    Deadline run_deadline =
        std::max(deadline, Clock::now() + std::chrono::milliseconds(request.timeout_ms));

    Result result;
    // vm only when QMP confirmed that KVM accelerates this very VM.
    result.isolation =
        prepared.config.accelerator == "kvm" && vm->qmp().kvm_enabled ? Tier::kVm : Tier::kKernel;
    result.environment = prepared.identity;
    result.kind = *request.kind();
    Status exchanged = guest::ExchangeJob(vm->channel(), *job, request, run_deadline + kReportGrace,
                                          &result, nullptr, calls);
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
  Generations<Prepared> generations_;
  mutable std::mutex state_mutex_;
  std::string last_qmp_;  // the evidence VM's QMP answers
  // Destroyed in reverse order: the pool first (its idle VMs go to the
  // destroyer), then the destroyer.
  pool::Destroyer<MicrovmVm> destroyer_{kMaxPendingDestroys};
  pool::WarmPool<MicrovmVm> pool_;
};

}  // namespace

Expected<MicrovmSettings> MicrovmSettingsFromEnvironment() {
  MicrovmSettings settings;
  if (const char* accel = std::getenv("SANDBOX_MICROVM_ACCEL");
      accel != nullptr && *accel != '\0') {
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
  if (const char* size = std::getenv("SANDBOX_MICROVM_POOL_SIZE");
      size != nullptr && *size != '\0') {
    std::string_view text(size);
    size_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value > 16) {
      return Refusal(NotDispatched::kEnvironment,
                     "SANDBOX_MICROVM_POOL_SIZE must be a whole number from 0 to 16.");
    }
    settings.pool_size = value;
  }
  if (const char* state = std::getenv("SANDBOX_MICROVM_STATE_DIR");
      state != nullptr && *state != '\0') {
    settings.state_dir = state;
  }
  if (const char* base = std::getenv("SANDBOX_MICROVM_JAIL_UID_BASE");
      base != nullptr && *base != '\0') {
    std::string_view text(base);
    uint64_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    constexpr uint64_t kHighest = uint64_t{0xFFFFFFFE} - microvm::kJailUidCount;
    if (error != std::errc() || end != text.data() + text.size() || value < 1 || value > kHighest) {
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
