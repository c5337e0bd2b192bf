#include "providers/linux/linux_provider.h"

#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include "guest/exchange.h"
#include "guest/protocol.h"
#include "guest/session_channel.h"
#include "image/held_image.h"
#include "image/image.h"
#include "os/cgroup.h"
#include "os/held_bind.h"
#include "os/seccomp.h"
#include "os/self_check.h"
#include "plimsoll/request.h"
#include "providers/generations.h"
#include "providers/linux/contain.h"
#include "providers/linux/netns_pool.h"
#include "providers/linux/teardown.h"
#include "providers/linux/warm_sandbox.h"
#include "providers/pool/warm_pool.h"

namespace plimsoll {
namespace {

using Clock = std::chrono::steady_clock;
using namespace linux_sandbox;

// How long after the run's deadline the host still waits for the agent's
// report: the agent's own budget for a snippet is the timeout plus
// guest::kJavascriptGraceMs, it sends its report at most
// guest::kAgentWrapUpMs after that, and its budget started a setup later.
constexpr auto kReportGrace =
    std::chrono::milliseconds(guest::kJavascriptGraceMs + guest::kAgentWrapUpMs + 500);
// The longest the wall may take to build before the run is refused.
constexpr auto kSetupBudget = std::chrono::seconds(10);
// Network namespaces made ahead (netns_pool.h): runs on a 2-core host come
// one or two at a time, and each spare is a few pages of kernel memory.
constexpr size_t kSpareNetworkNamespaces = 2;
// Finished sandboxes waiting to be reaped before runs pay for their own.
constexpr size_t kMaxPendingTeardowns = 32;
// Sandboxes built ahead (SANDBOX_LINUX_POOL_SIZE; docs/linux-provider.md):
// two, like the oci pool: a run on each core finds one ready.
constexpr size_t kDefaultPoolSize = 2;
constexpr size_t kMaxPoolSize = 64;

// SANDBOX_LINUX_POOL_SIZE, or the default; `error` set when it is invalid
// (the provider then refuses its preflight and smoke test: nothing serves).
struct PoolSetting {
  size_t size = kDefaultPoolSize;
  std::string error;
};

PoolSetting PoolSettingFromEnvironment() {
  PoolSetting setting;
  const char* text = std::getenv("SANDBOX_LINUX_POOL_SIZE");
  if (text == nullptr || *text == '\0') return setting;
  std::string_view value(text);
  size_t size = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), size);
  if (error != std::errc() || end != value.data() + value.size() || size > kMaxPoolSize) {
    setting.error = "SANDBOX_LINUX_POOL_SIZE must be a whole number from 0 to " +
                    std::to_string(kMaxPoolSize) + " (it is \"" + std::string(value) + "\").";
    return setting;
  }
  setting.size = size;
  return setting;
}

int64_t MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

std::string KernelRelease() {
  utsname name{};
  if (uname(&name) != 0) return "unknown";
  return std::string(name.sysname) + " " + name.release;
}

Error EnvironmentRefusal(const std::string& message) {
  return Refusal(NotDispatched::kEnvironment, message);
}

// A tested configuration whose image tree was removed from the host (not
// by `plimsoll image build`, which keeps held trees) cannot build sandboxes.
Error RemovedImageRefusal() {
  return EnvironmentRefusal(
      "The guest image tree this configuration was tested with has been removed from the host; "
      "the next smoke test prepares the image now there.");
}

// The compiled filter as text, for a configuration's key.
std::string ProgramText(const os::SeccompProgram& program) {
  std::string text;
  for (const sock_filter& op : program.instructions) {
    text += std::to_string(op.code) + "," + std::to_string(op.jt) + "," + std::to_string(op.jf) +
            "," + std::to_string(op.k) + ";";
  }
  return text;
}

// One configuration generation (generations.h): what every run needs,
// prepared from the host for a smoke test and kept while runs use it.
struct Prepared {
  std::shared_ptr<const image::HeldImage> image;  // the tree runs mount ...
  std::shared_ptr<const os::HeldBind> bind;       // ... bound here (a new generation's)
  os::CgroupLayout cgroups;
  os::SeccompProgram seccomp;
  std::string seccomp_source;
  size_t seccomp_rules = 0;
  // The job a JavaScript snippet with the default timeout becomes (report
  // key zeroed), whose step a pooled sandbox's agent starts ahead
  // (--prestart-job, src/guest/agent/prestart.h); "" for none.
  std::string prestart_job;

  std::string Key() const {
    return image->Key() + "\n" + seccomp_source + "\n" + ProgramText(seccomp) + "\n" +
           cgroups.Describe() + "\n" + prestart_job;
  }
};

// "" when it cannot be read. (A read loop: /proc files report no size, and
// istreambuf_iterator makes g++ 12 -O2 warn -Wnull-dereference.)
std::string ReadProcFile(pid_t pid, const char* name) {
  std::ifstream file("/proc/" + std::to_string(pid) + "/" + name);
  std::string content;
  char buffer[4096];
  while (file.read(buffer, sizeof buffer) || file.gcount() > 0) {
    content.append(buffer, static_cast<size_t>(file.gcount()));
  }
  return content;
}

// "Seccomp:\t2" of /proc/<pid>/status: 2 is filter mode.
std::string SeccompMode(pid_t pid) {
  std::istringstream status(ReadProcFile(pid, "status"));
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("Seccomp:", 0) == 0) {
      size_t start = line.find_first_not_of(" \t", 8);
      return start == std::string::npos ? "" : line.substr(start);
    }
  }
  return "";
}

// A kept sandbox (SPEC §9): one container whose agent runs with --session,
// talked to job by job over its channel; /work and the interpreters live
// as long as it does.
class LinuxSession final : public ProviderSession {
 public:
  LinuxSession(std::shared_ptr<const Prepared> prepared, Container container, const Limits& limits)
      : prepared_(std::move(prepared)),
        container_(std::move(container)),
        channel_(limits, Tier::kContainer, prepared_->image->identity()),
        uid_map_(ReadProcFile(container_.pid(), "uid_map")) {}

  ~LinuxSession() override {
    container_.CloseChannel();  // the agent sees EOF and ends its interpreters
    if (!container_.Wait(Clock::now() + std::chrono::milliseconds(200))) container_.Signal();
    Status killed = container_.Kill();
    (void)killed;  // nothing to report to: the sandbox is gone or its cgroup is killed
  }

  Tier tier() const override { return Tier::kContainer; }
  std::string environment() const override { return prepared_->image->identity(); }

  Expected<Result> Run(const Request& request, Deadline deadline) override {
    return Call(request, deadline, nullptr);
  }

  // The session's sandbox has its /run tmpfs from the start (it is opened
  // before any call names a grant); the agent's relay binds its socket
  // there for this call only.
  Expected<Result> RunGranted(const Request& request, Deadline deadline,
                              GrantedCalls& calls) override {
    return Call(request, deadline, &calls);
  }

  Status CheckBoundary() override {
    if (broken_) return BrokenRefusal();
    pid_t init = container_.pid();
    if (container_.Wait(Clock::now())) {
      MarkBroken();
      return Failure(ErrorCode::kInternal, "The session's sandbox init has exited.");
    }
    std::string mode = SeccompMode(init);
    if (mode != "2") {
      return Failure(ErrorCode::kInternal,
                     "The session's sandbox init is not in seccomp filter "
                     "mode (Seccomp: \"" +
                         mode + "\").");
    }
    if (ReadProcFile(init, "uid_map") != uid_map_) {
      return Failure(ErrorCode::kInternal, "The session's uid map changed since it was opened.");
    }
    std::vector<pid_t> members = container_.cgroup().Processes();
    if (std::find(members.begin(), members.end(), init) == members.end()) {
      return Failure(ErrorCode::kInternal, "The session's sandbox init left its cgroup.");
    }
    return Status::Ok();
  }

  int64_t DiskUsedBytes() override { return guest::WorkBytesUsed(container_.pid()); }
  std::vector<std::string> InterpretersAlive() override { return channel_.InterpretersAlive(); }

 private:
  static Error BrokenRefusal() {
    return Refusal(NotDispatched::kEnvironment,
                   "The session's sandbox has ended (its agent failed); open a new session.");
  }

  Expected<Result> Call(const Request& request, Deadline deadline, GrantedCalls* calls) {
    if (broken_) return BrokenRefusal();
    Status failure = Status::Ok();
    auto result =
        channel_.Call(container_.channel(), request, deadline + kReportGrace, &failure, calls);
    if (failure.ok()) return result;
    // The agent gave no valid report: nothing in this sandbox can be
    // trusted to keep state any more. It ends now; the session with it.
    std::string diagnostics = container_.Diagnostics();
    MarkBroken();
    std::string message =
        "The session's guest agent gave no valid report (" + failure.error().message() + ")" +
        (diagnostics.empty() ? "" : "; agent stderr: " + diagnostics.substr(0, 1000));
    return guest::AnswerFailedExchange(request, failure.error(), message, std::move(*result));
  }

  void MarkBroken() {
    broken_ = true;
    container_.Signal();
    channel_.Forget();
  }

  const std::shared_ptr<const Prepared> prepared_;  // keeps the image tree held
  Container container_;
  guest::SessionChannel channel_;
  const std::string uid_map_;
  std::atomic<bool> broken_{false};
};

class LinuxProvider final : public Provider {
 public:
  LinuxProvider(const Limits& limits, std::string image_directory, PoolSetting pool)
      : limits_(limits),
        image_directory_(std::move(image_directory)),
        pool_error_(std::move(pool.error)),
        pool_(
            pool.size, [this](uint64_t generation) { return StartPooled(generation); },
            [this](std::unique_ptr<WarmSandbox> sandbox) {
              teardown_.Finish(sandbox->Release());
            }) {}

  // The pool goes first (its idle sandboxes to the teardown), then the
  // teardown finishes every sandbox (members in reverse order).
  ~LinuxProvider() override { pool_.Disable(); }

  std::string_view name() const override { return "linux"; }

  Description Describe() const override {
    Description description;
    description.provider = "linux";
    description.tier = Tier::kContainer;
    description.capabilities.payloads = {PayloadKind::kJavascript, PayloadKind::kPython,
                                         PayloadKind::kProject};
    description.capabilities.sessions = true;
    description.capabilities.grants = true;
    description.limits = limits_;
    description.details = {{"kernel", KernelRelease()}, {"wall", kWall}};
    std::string pool_error = networks_.LastError();
    description.details.emplace_back(
        "network_namespaces",
        pool_error.empty()
            ? "made ahead (" + std::to_string(networks_.Ready()) + " of " +
                  std::to_string(kSpareNetworkNamespaces) + " ready)"
            : "made by each run's clone (making them ahead failed: " + pool_error + ")");
    description.details.emplace_back("pool", pool_.Describe());
    description.pool = pool_.State();
    if (auto serving = generations_.Serving()) {
      const Prepared& prepared = *serving.config;
      description.environment = prepared.image->identity();
      description.details.emplace_back("generation", std::to_string(serving.number));
      description.details.emplace_back("cgroup", prepared.cgroups.Describe());
      description.details.emplace_back("seccomp", prepared.seccomp_source);
      if (!prepared.prestart_job.empty()) {
        description.details.emplace_back("pool_prestart",
                                         "qjs of JavaScript snippets with the default timeout");
      }
      description.details.emplace_back("rootfs", prepared.image->image().rootfs.string() +
                                                     " (bound at " + prepared.bind->path() + ")");
    } else if (auto located = image::LocateImage(image_directory_); located.ok()) {
      description.environment = located->identity;
    }
    return description;
  }

  Status Reconcile() override {
    auto layout = os::DetectCgroups();
    if (!layout.ok()) return layout.error();
    auto removed = os::ReconcileCgroups(*layout);
    if (!removed.ok()) return removed.error();
    return os::RemoveLeftoverBinds(os::kImageBindsDirectory);
  }

  // Read-only: what a smoke test would prepare, prepared and dropped.
  Status Preflight() override {
    if (!pool_error_.empty()) return EnvironmentRefusal(pool_error_);
    auto prepared = PrepareFromHost();
    if (!prepared.ok()) return prepared.error();
    return Status::Ok();
  }

  // The pool follows the evidence: it serves (and refills with) the
  // generation that serves after a smoke test whose every check passed, and
  // is disabled, every idle sandbox destroyed, by any other answer.
  Expected<Evidence> SmokeTest(Deadline deadline) override {
    auto evidence = CollectEvidence(deadline);
    pool_.FollowEvidence(evidence);
    return evidence;
  }

  Expected<Result> Run(const Request& request, Deadline deadline) override {
    return RunServing(request, deadline, nullptr);
  }

  // The guest reaches `calls` through the agent's relay socket, the agent
  // through its channel (guest/host_calls.h).
  Expected<Result> RunGranted(const Request& request, Deadline deadline,
                              GrantedCalls& calls) override {
    return RunServing(request, deadline, &calls);
  }

  // A run in the serving configuration; `calls` (a granted run) or null.
  Expected<Result> RunServing(const Request& request, Deadline deadline, GrantedCalls* calls) {
    if (request.cell) {
      return Refusal(NotDispatched::kUnsupported, "A cell runs only inside a session.");
    }
    auto serving = generations_.Serving();
    PLIMSOLL_RETURN_IF_ERROR(CheckServingEnvironment(
        static_cast<bool>(serving), "linux", serving ? serving.config->image->identity() : "",
        request.environment));
    if (serving.config->image->Removed()) return RemovedImageRefusal();
    // A granted run's sandbox differs (its /run tmpfs): never a pooled one.
    return RunJob(*serving.config, request, deadline, nullptr, calls,
                  /*pool_generation=*/calls == nullptr ? serving.number : 0);
  }

  Expected<std::unique_ptr<ProviderSession>> OpenSession(const SessionSpec& spec,
                                                         Deadline deadline) override {
    auto serving = generations_.Serving();
    PLIMSOLL_RETURN_IF_ERROR(CheckServingEnvironment(
        static_cast<bool>(serving), "linux", serving ? serving.config->image->identity() : "",
        spec.environment));
    if (serving.config->image->Removed()) return RemovedImageRefusal();
    ContainConfig config = SandboxConfig(*serving.config);
    config.argv.push_back("--session");
    config.agent_capabilities = os::SessionAgentCapabilities();
    config.host_calls = true;  // any call may name a grant (/run, mount.h)
    auto container = Contain(config, std::min(deadline, Clock::now() + kSetupBudget));
    if (!container.ok()) return container.error();
    return std::unique_ptr<ProviderSession>(
        std::make_unique<LinuxSession>(serving.config, std::move(*container), limits_));
  }

 private:
  // The smoke test proper: a fresh configuration from the host, checked
  // inside throwaway sandboxes built cold (never the pool's), promoted when
  // every check passed.
  Expected<Evidence> CollectEvidence(Deadline deadline) {
    if (!pool_error_.empty()) return EnvironmentRefusal(pool_error_);
    auto fresh = PrepareFromHost();
    if (!fresh.ok()) return fresh.error();
    if (Status parents = os::EnsureCgroupParents((*fresh)->cgroups); !parents.ok()) {
      return EnvironmentRefusal("The plimsoll cgroup parents cannot be created: " +
                                parents.error().message());
    }
    // Bound only when new: the serving generation already is. (A sandbox's
    // mount namespace is a copy of the host's: a descriptor's mount from the
    // host namespace cannot be bound there, but this path can.)
    auto serving = generations_.Serving();
    if (!serving || serving.config->Key() != (*fresh)->Key()) {
      auto bind = os::HeldBind::Make(os::kImageBindsDirectory, (*fresh)->image->TreePath(),
                                     os::HeldBind::Kind::kDirectory);
      if (!bind.ok()) return bind.error();
      (*fresh)->bind = std::move(*bind);
    }
    auto candidate = generations_.Candidate(std::move(*fresh));
    const Prepared* prepared = candidate.config.get();
    if (!prepared->bind) {
      return Failure(ErrorCode::kInternal, "The configuration to test has no image bind.");
    }
    Evidence evidence;
    evidence.generation = candidate.number;
    evidence.environment = prepared->image->identity();
    evidence.collected_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
    evidence.facts = {
        {"runtime", "plimsoll linux sandbox (user, pid, mount, net, ipc, uts, cgroup namespaces)"},
        {"kernel", KernelRelease()},
        {"cgroup", prepared->cgroups.Describe()},
        {"seccomp", prepared->seccomp_source + ", " + std::to_string(prepared->seccomp_rules) +
                        " rules, deny by default (EPERM)"},
        {"image", prepared->image->identity()},
        {"generation", std::to_string(candidate.number)},
        {"attestation", "none: these are checks made from inside, not a hardware proof"}};

    // 1. The wall seen from inside, by the real agent in the real configuration.
    Request check;
    check.project = os::SelfCheckProject(limits_);
    check.timeout_ms = 20'000;
    std::vector<std::pair<std::string, std::string>> cgroup_values;
    auto run = RunJob(*prepared, check, std::min(deadline, Clock::now() + std::chrono::seconds(20)),
                      &cgroup_values);
    if (!run.ok()) return run.error().WithContext("The self-check run failed");
    if (run->exit_code != 0) {
      return Failure(ErrorCode::kInternal, "The self-check exited with " +
                                               std::to_string(run->exit_code) + ": " +
                                               run->stderr_bytes.substr(0, 2000));
    }
    auto checks = os::ParseSelfCheckOutput(run->stdout_bytes);
    if (!checks.ok()) return checks.error();
    evidence.checks = *checks;

    // 2. The limits the kernel holds for that run's cgroup (read from the host).
    evidence.checks.push_back(os::CgroupLimitsCheck(limits_, limits_.pids, cgroup_values));

    // 3. The memory limit acts: a hoarder is killed with 137.
    auto hoarded = RunJob(*prepared, os::MemoryProbeRequest(limits_),
                          std::min(deadline, Clock::now() + std::chrono::seconds(22)), nullptr);
    if (!hoarded.ok()) return hoarded.error().WithContext("The memory probe failed");
    evidence.checks.push_back(os::MemoryProbeCheck(*hoarded));

    bool all = evidence.AllChecksPassed();
    evidence.tier = all ? Tier::kContainer : Tier::kUnknown;
    evidence.summary =
        all ? "Tier container: the self-check inside a throwaway sandbox confirmed the "
              "namespaces, read-only root, bounded tmpfs mounts, seccomp filter, "
              "cgroup limits and an unprivileged user; the host kernel is shared."
            : "No tier: at least one check of the wall failed inside the sandbox.";
    // Only a configuration whose every check passed serves runs.
    if (all) generations_.Promote(candidate);
    return evidence;
  }

  static constexpr const char* kWall =
      "namespaces (user, pid, mount, net, ipc, uts, cgroup), read-only root, tmpfs /tmp and /work, "
      "seccomp deny-by-default, cgroup memory/pids/cpu limits, no capabilities for guest code";

  // A configuration from the host as it is now: the image held open, the
  // cgroup layout, the compiled seccomp policy. Installs nothing (a smoke
  // test decides whether it serves). Every failure is an environment refusal.
  Expected<std::shared_ptr<Prepared>> PrepareFromHost() const {
    auto image = image::LocateImageWith(image_directory_, {guest::kAgentPath, guest::kQjsPath});
    if (!image.ok()) return EnvironmentRefusal(image.error().message());
    auto held = image::HoldImage(*image);
    if (!held.ok()) return held.error();
    std::ifstream namespaces("/proc/sys/user/max_user_namespaces");
    long max_namespaces = -1;
    if (namespaces >> max_namespaces && max_namespaces == 0) {
      return EnvironmentRefusal("User namespaces are disabled (user.max_user_namespaces = 0).");
    }
    auto layout = os::DetectCgroups();
    if (!layout.ok()) return EnvironmentRefusal(layout.error().message());
    std::string source;
    auto text = os::ActiveSeccompPolicyText(&source);
    if (!text.ok()) return EnvironmentRefusal(text.error().message());
    auto policy = os::ParseSeccompPolicy(*text);
    if (!policy.ok())
      return EnvironmentRefusal("The seccomp policy (" + source +
                                ") is invalid: " + policy.error().message());
    auto program = os::CompileSeccompPolicy(*policy);
    if (!program.ok())
      return EnvironmentRefusal("The seccomp policy (" + source +
                                ") does not compile: " + program.error().message());
    auto prepared = std::make_shared<Prepared>();
    prepared->image = std::move(*held);
    prepared->cgroups = std::move(*layout);
    prepared->seccomp = std::move(*program);
    prepared->seccomp_source = source;
    prepared->seccomp_rules = policy->rules.size();
    prepared->prestart_job = PrestartJob();
    return prepared;
  }

  // A fresh sandbox's configuration: pid 1 is the agent binary as init; it
  // forks the agent as pid 2.
  ContainConfig SandboxConfig(const Prepared& prepared) {
    ContainConfig config;
    config.rootfs = prepared.bind->path();
    config.argv = {guest::kAgentPath, "--init", "--channel", std::to_string(kChannelFd)};
    config.environment = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/work"};
    config.limits = limits_;
    config.seccomp = &prepared.seccomp;
    config.cgroups = &prepared.cgroups;
    config.network = networks_.Take();  // none ready: the clone makes its own
    return config;
  }

  // What a JavaScript snippet with the default timeout becomes (as
  // Sandbox::Run validates it and RunJob builds it), for a pooled sandbox's
  // agent to start its qjs ahead: the step's vfork and execve and the start
  // of the static qjs binary then happen before the run. The agent runs a
  // job in it only when the job asks for exactly that process (argv,
  // limits, filter, environment, identity); any other job discards it
  // first and runs as in a cold sandbox. "" when it cannot be built.
  std::string PrestartJob() const {
    Request request;
    request.javascript = JavascriptPayload{""};
    auto validated = ValidateRequest(request, limits_);
    if (!validated.ok()) return "";
    auto job = guest::JobFromRequest(*validated, limits_,
                                     std::string(guest::kReportKeyBytes, '\0'));
    return job.ok() ? guest::EncodeJob(*job) : "";
  }

  // The pool's factory: a sandbox of the serving generation, if that is
  // still `generation` (the pool drops it otherwise anyway).
  Expected<std::unique_ptr<WarmSandbox>> StartPooled(uint64_t generation) {
    auto serving = generations_.Serving();
    if (!serving || serving.number != generation) {
      return EnvironmentRefusal("The configuration the pool was filling for no longer serves.");
    }
    if (serving.config->image->Removed()) return RemovedImageRefusal();
    ContainConfig config = SandboxConfig(*serving.config);
    if (!serving.config->prestart_job.empty()) {
      config.argv.insert(config.argv.end(), {"--prestart-job", serving.config->prestart_job});
    }
    return WarmSandbox::Build(std::move(config), serving.config, Clock::now() + kSetupBudget);
  }

  // One job in one fresh sandbox: one the pool built ahead for
  // `pool_generation` (the number of `prepared`) when it has one ready, else
  // one built now; 0: always built now. `cgroup_values`, when given,
  // receives the limits the kernel holds for the run's cgroup.
  // With `calls` (a granted run) the agent's relay serves them.
  Expected<Result> RunJob(const Prepared& prepared, const Request& request, Deadline deadline,
                          std::vector<std::pair<std::string, std::string>>* cgroup_values,
                          GrantedCalls* calls = nullptr, uint64_t pool_generation = 0) {
    Clock::time_point start = Clock::now();
    std::string key(guest::kReportKeyBytes, '\0');
    if (getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) {
      return Refusal(NotDispatched::kEnvironment, "No randomness for the report key.");
    }
    auto job = guest::JobFromRequest(request, limits_, key);
    if (!job.ok()) return job.error();
    job->host_calls = calls != nullptr;

    std::optional<Container> container;
    // A pooled sandbox's run holds the pool's refill until it returns, so
    // that building the next sandbox does not compete with it for the CPU
    // (warm_pool.h; an empty pool refills regardless).
    std::unique_ptr<WarmSandbox> warm =
        pool_generation != 0 ? pool_.Take(pool_generation, /*hold_refill=*/true) : nullptr;
    pool::RefillHold<WarmSandbox> hold(warm ? &pool_ : nullptr);
    if (warm) container.emplace(warm->Release());
    if (!container) {
      ContainConfig config = SandboxConfig(prepared);
      config.host_calls = calls != nullptr;
      auto built =
          Contain(config, std::min(deadline + kReportGrace, Clock::now() + kSetupBudget));
      if (!built.ok()) return built.error();
      container.emplace(std::move(*built));
    }
    if (cgroup_values) *cgroup_values = container->cgroup().ReadLimits();

    Result result;
    result.isolation = Tier::kContainer;
    result.environment = prepared.image->identity();
    result.kind = *request.kind();
    Status exchanged = guest::ExchangeJob(container->channel(), *job, request,
                                          deadline + kReportGrace, &result, nullptr, calls);
    if (exchanged.ok()) {
      // The sealed report is all the sandbox had to give: it is killed now
      // and dismantled off the answer's path (teardown.h).
      teardown_.Finish(std::move(*container));
      result.duration_ms = MillisecondsSince(start);
      return result;
    }
    std::string diagnostics = container->Diagnostics();
    Status killed = container->Kill();
    result.duration_ms = MillisecondsSince(start);
    std::string message =
        "The guest agent gave no valid report (" + exchanged.error().message() + ")" +
        (diagnostics.empty() ? "" : "; agent stderr: " + diagnostics.substr(0, 1000));
    if (!killed.ok()) message += "; cleanup failed: " + killed.error().message();
    return guest::AnswerFailedExchange(request, exchanged.error(), message, std::move(result));
  }

  const Limits limits_;
  const std::string image_directory_;  // "" = image::LocateDefaultImage()
  Generations<Prepared> generations_;
  NetnsPool networks_{kSpareNetworkNamespaces};
  const std::string pool_error_;  // SANDBOX_LINUX_POOL_SIZE invalid: nothing serves
  // Destroyed in reverse order: the pool first (its worker stops, its idle
  // sandboxes go to the teardown), then the teardown, which finishes every
  // sandbox before the rest goes.
  Teardown teardown_{kMaxPendingTeardowns};
  pool::WarmPool<WarmSandbox> pool_;
};

}  // namespace

std::unique_ptr<Provider> MakeLinuxProvider(const Limits& limits, std::string image_directory) {
  return std::make_unique<LinuxProvider>(limits, std::move(image_directory),
                                         PoolSettingFromEnvironment());
}

}  // namespace plimsoll
