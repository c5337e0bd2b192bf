#include "providers/oci/oci_provider.h"

#include <openssl/sha.h>
#include <signal.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>
#include <utility>

#include "guest/exchange.h"
#include "guest/protocol.h"
#include "guest/session_channel.h"
#include "image/held_image.h"
#include "image/image.h"
#include "os/cgroup.h"
#include "os/held_bind.h"
#include "os/owner.h"
#include "os/seccomp.h"
#include "os/self_check.h"
#include "providers/generations.h"
#include "providers/oci/oci_sandbox.h"
#include "providers/pool/warm_pool.h"

namespace plimsoll {
namespace {

using Clock = std::chrono::steady_clock;
using oci::OciSandbox;
using oci::RuntimeKind;
using os::SelfCheckProfile;

// As in the linux provider: the agent's own budget is the timeout plus its
// grace and wrap-up; the host waits a little longer for the report.
constexpr auto kReportGrace =
    std::chrono::milliseconds(guest::kJavascriptGraceMs + guest::kAgentWrapUpMs + 500);
// The longest a container may take to come up before the run is refused
// (runsc under ptrace on a busy 2-core host takes a second or more).
constexpr auto kSetupBudget = std::chrono::seconds(20);
constexpr auto kProbeBudget = std::chrono::seconds(10);
constexpr size_t kMaxPendingDestroys = 32;

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

std::string KernelRelease() {
  utsname name{};
  if (uname(&name) != 0) return "unknown";
  return std::string(name.sysname) + " " + name.release;
}

std::string Sha256Hex(std::string_view bytes) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(bytes.data()), bytes.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : digest) {
    hex += kHex[byte >> 4];
    hex += kHex[byte & 15];
  }
  return hex;
}

int64_t MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
}

std::string Trim(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

// The limits the kernel holds for a container's cgroup, read from the host
// (cgroup v1 controllers, or the v2 unified hierarchy).
std::vector<std::pair<std::string, std::string>> ReadCgroupValues(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> values;
  const std::pair<const char*, const char*> files[] = {
      {"/sys/fs/cgroup/memory", "memory.limit_in_bytes"},
      {"/sys/fs/cgroup/memory", "memory.memsw.limit_in_bytes"},
      {"/sys/fs/cgroup/pids", "pids.max"},
      {"/sys/fs/cgroup/cpu,cpuacct", "cpu.cfs_quota_us"},
      {"/sys/fs/cgroup", "memory.max"},
      {"/sys/fs/cgroup", "memory.swap.max"},
      {"/sys/fs/cgroup", "pids.max"},
      {"/sys/fs/cgroup", "cpu.max"}};
  for (const auto& [root, file] : files) {
    std::ifstream in(std::string(root) + path + "/" + file);
    std::stringstream text;
    if (in && (text << in.rdbuf())) values.emplace_back(file, Trim(text.str()));
  }
  return values;
}

SelfCheckProfile ProfileFor(RuntimeKind kind) {
  return kind == RuntimeKind::kRunsc ? SelfCheckProfile::kGvisor : SelfCheckProfile::kOciRunc;
}

Tier ClaimedTier(RuntimeKind kind) {
  return kind == RuntimeKind::kRunsc ? Tier::kKernel : Tier::kContainer;
}

// One configuration generation (generations.h): what every run needs,
// prepared from the host for a smoke test and kept while runs and pooled
// containers use it.
struct Prepared {
  std::shared_ptr<const image::HeldImage> image;  // the tree containers start from
  std::shared_ptr<const os::HeldBind> bind;       // ... bound where bundles name it
  oci::Runtime runtime;
  oci::BundleConfig config;     // the template every container starts from
  std::string template_digest;  // of config.json with the image's own path
  std::string config_digest;    // of config.json as the containers get it
  std::string seccomp_source;   // where the policy text came from
  // runsc: the policy compiled (raw sock_filter bytes), which the agent
  // installs in each step inside gVisor, so every denial answers its own
  // errno (runsc's --oci-seccomp answers all of them EPERM); "" otherwise.
  std::string seccomp_filter;
  // runsc: the job a JavaScript snippet with the default timeout becomes
  // (EncodeJob, report key zeroed), whose step a pooled container's agent
  // starts ahead (--prestart-job, src/guest/agent/prestart.h); "" for none.
  std::string prestart_job;

  std::string Key() const {
    return image->Key() + "\n" + runtime.Describe() + "\n" + template_digest + "\n" + prestart_job;
  }
};

// The runtime of `prepared`, as a pointer that owns the whole generation: a
// container keeps what it was made from (runtime, image bind) alive, so a
// pooled container the pool drops at a promotion, destroyed in the
// background, still has its runtime (OciSandbox::Start).
std::shared_ptr<const oci::Runtime> RuntimeOf(const std::shared_ptr<const Prepared>& prepared) {
  return std::shared_ptr<const oci::Runtime>(prepared, &prepared->runtime);
}

// A kept container (SPEC §9): its agent runs with --session and answers
// job after job; /work and the interpreters live as long as it does.
class OciSession final : public ProviderSession {
 public:
  // `nproc`: under runsc the steps' process limit, which gVisor's kernel
  // enforces (as RunJob sets it).
  OciSession(std::shared_ptr<const Prepared> prepared, std::unique_ptr<OciSandbox> sandbox,
             const Limits& limits, Tier tier, bool gvisor)
      : prepared_(std::move(prepared)),
        sandbox_(std::move(sandbox)),
        channel_(limits, tier, prepared_->image->identity(),
                 {gvisor ? std::optional<int64_t>(limits.pids) : std::nullopt,
                  prepared_->seccomp_filter}),
        tier_(tier),
        gvisor_(gvisor) {}

  ~OciSession() override {
    Status destroyed = sandbox_->Destroy(Clock::now() + std::chrono::seconds(15));
    (void)destroyed;  // Reconcile removes what a failed destroy left
  }

  Tier tier() const override { return tier_; }
  std::string environment() const override { return prepared_->image->identity(); }

  Expected<Result> Run(const Request& request, Deadline deadline) override {
    return Call(request, deadline, nullptr);
  }

  // The session's bundle has the /run tmpfs from the start (it is made
  // before any call names a grant); the agent's relay binds its socket
  // there for this call only.
  Expected<Result> RunGranted(const Request& request, Deadline deadline,
                              GrantedCalls& calls) override {
    return Call(request, deadline, &calls);
  }

  // The runtime and the container's init alive, and nothing pending on the
  // channel between calls (an agent that wrote unasked, or hung up).
  Status CheckBoundary() override {
    if (broken_) return BrokenRefusal();
    if (!sandbox_->Healthy()) {
      broken_ = true;
      return Failure(ErrorCode::kInternal,
                     "The session's container is not as it was left: its runtime or init has "
                     "exited, or its agent wrote or hung up between calls.");
    }
    return Status::Ok();
  }

  // runc and crun: /work seen through the init's root. Under gVisor the
  // guest's /work lives in gVisor's own memory, which the host cannot
  // measure; its size bound (the tmpfs size) still holds.
  int64_t DiskUsedBytes() override {
    return gvisor_ ? 0 : guest::WorkBytesUsed(sandbox_->InitPid());
  }

  std::vector<std::string> InterpretersAlive() override { return channel_.InterpretersAlive(); }

 private:
  static Error BrokenRefusal() {
    return Refusal(NotDispatched::kEnvironment,
                   "The session's container has ended (its agent failed); open a new session.");
  }

  Expected<Result> Call(const Request& request, Deadline deadline, GrantedCalls* calls) {
    if (broken_) return BrokenRefusal();
    Status failure = Status::Ok();
    auto result =
        channel_.Call(sandbox_->channel(), request, deadline + kReportGrace, &failure, calls);
    if (failure.ok()) return result;
    broken_ = true;
    channel_.Forget();
    std::string diagnostics = sandbox_->Diagnostics();
    std::string message =
        "The session's guest agent gave no valid report (" + failure.error().message() + ")" +
        (diagnostics.empty() ? "" : "; runtime and agent said: " + diagnostics.substr(0, 1000));
    return guest::AnswerFailedExchange(request, failure.error(), message, std::move(*result));
  }

  const std::shared_ptr<const Prepared> prepared_;
  std::unique_ptr<OciSandbox> sandbox_;
  guest::SessionChannel channel_;
  const Tier tier_;
  const bool gvisor_;
  std::atomic<bool> broken_{false};
};

class OciProvider final : public Provider {
 public:
  OciProvider(const Limits& limits, const OciSettings& settings)
      : limits_(limits),
        settings_(settings),
        pool_(
            settings.pool_size, [this](uint64_t generation) { return StartPooled(generation); },
            [this](std::unique_ptr<OciSandbox> sandbox) { destroyer_.Add(std::move(sandbox)); }) {}

  ~OciProvider() override {
    pool_.Disable();
    destroyer_.Drain();
  }

  std::string_view name() const override { return "oci"; }

  Description Describe() const override {
    Description description;
    description.provider = "oci";
    description.tier = ClaimedTier(settings_.runtime);
    description.capabilities.payloads = {PayloadKind::kJavascript, PayloadKind::kPython,
                                         PayloadKind::kProject};
    description.capabilities.sessions = true;
    description.capabilities.grants = true;
    description.limits = limits_;
    description.details = {{"runtime", std::string(oci::RuntimeKindName(settings_.runtime))},
                           {"kernel", KernelRelease()},
                           {"pool", pool_.Describe()}};
    description.pool = pool_.State();
    if (auto serving = generations_.Serving()) {
      const Prepared& prepared = *serving.config;
      description.environment = prepared.image->identity();
      description.details.emplace_back("generation", std::to_string(serving.number));
      description.details.emplace_back("runtime_binary", prepared.runtime.Describe());
      if (settings_.runtime == RuntimeKind::kRunsc) {
        description.details.emplace_back("platform", prepared.runtime.platform());
      }
      description.details.emplace_back("config_sha256", prepared.config_digest);
      if (!prepared.prestart_job.empty()) {
        description.details.emplace_back("pool_prestart",
                                         "qjs of JavaScript snippets with the default timeout");
      }
      description.details.emplace_back("rootfs", prepared.image->image().rootfs.string() +
                                                     " (bound at " + prepared.bind->path() + ")");
    } else if (auto located = image::LocateImage(settings_.image_directory); located.ok()) {
      description.environment = located->identity;
    }
    return description;
  }

  Status Reconcile() override {
    auto runtime = oci::ProbeRuntime(settings_.runtime, settings_.runtime_options,
                                     Clock::now() + kProbeBudget);
    if (!runtime.ok()) return runtime.error();
    Status left = RemoveLeftovers(*runtime);
    Status binds = os::RemoveLeftoverBinds(os::kImageBindsDirectory);
    if (!left.ok()) return left;
    return binds;
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
    return RunServing(request, deadline, nullptr);
  }

  // A container of its own with a /run tmpfs (never the pool's): the guest
  // reaches `calls` through the agent's relay (guest/host_calls.h).
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
        static_cast<bool>(serving), "oci", serving ? serving.config->image->identity() : "",
        request.environment));
    if (serving.config->image->Removed()) return RemovedImageRefusal();
    // A granted run's bundle differs (its /run): never a pooled container.
    return RunJob(serving.config, serving.number, request, deadline, nullptr,
                  /*use_pool=*/calls == nullptr, calls);
  }

  // A container of its own (never the pool's: those agents take one job).
  Expected<std::unique_ptr<ProviderSession>> OpenSession(const SessionSpec& spec,
                                                         Deadline deadline) override {
    auto serving = generations_.Serving();
    PLIMSOLL_RETURN_IF_ERROR(CheckServingEnvironment(
        static_cast<bool>(serving), "oci", serving ? serving.config->image->identity() : "",
        spec.environment));
    if (serving.config->image->Removed()) return RemovedImageRefusal();
    oci::BundleConfig config = serving.config->config;
    config.host_calls = true;  // any call may name a grant (/run, bundle.h)
    auto started =
        OciSandbox::Start(RuntimeOf(serving.config), std::move(config),
                          /*pooled=*/false, std::min(deadline, Clock::now() + kSetupBudget),
                          /*session=*/true);
    if (!started.ok()) return started.error();
    return std::unique_ptr<ProviderSession>(std::make_unique<OciSession>(
        serving.config, std::move(*started), limits_, ClaimedTier(settings_.runtime),
        settings_.runtime == RuntimeKind::kRunsc));
  }

 private:
  // The smoke test: a fresh configuration from the host (bound only when it
  // is new), its checks, and its promotion when every check passed.
  Expected<Evidence> CollectEvidence(Deadline deadline) {
    auto fresh = PrepareFromHost();
    if (!fresh.ok()) return fresh.error();
    auto serving = generations_.Serving();
    if (!serving || serving.config->Key() != (*fresh)->Key()) {
      PLIMSOLL_RETURN_IF_ERROR(Bind(**fresh));
    }
    auto candidate = generations_.Candidate(std::move(*fresh));
    if (!candidate.config->bind) {
      // The same key as the serving generation at Candidate's time, which was
      // promoted after its check: it is bound. Defensive all the same.
      return Failure(ErrorCode::kInternal, "The configuration to test has no image bind.");
    }
    const Prepared& ready = *candidate.config;
    RuntimeKind kind = settings_.runtime;
    Evidence evidence;
    evidence.generation = candidate.number;
    evidence.environment = ready.image->identity();
    evidence.collected_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
    evidence.facts = {{"runtime", ready.runtime.Describe()},
                      {"kernel", KernelRelease()},
                      {"config_sha256", ready.config_digest},
                      {"image", ready.image->identity()},
                      {"generation", std::to_string(candidate.number)}};
    if (kind == RuntimeKind::kRunsc) {
      evidence.facts.emplace_back("platform", ready.runtime.platform());
      evidence.facts.emplace_back("network", "none (runsc --network=none: only loopback)");
      evidence.facts.emplace_back("seccomp", ready.seccomp_source +
                                                 ", deny by default (EPERM), applied by gVisor "
                                                 "to the guest's calls (runsc --oci-seccomp) and, "
                                                 "compiled on the host, installed by the agent "
                                                 "in each step (each denial's own errno)");
    } else {
      evidence.facts.emplace_back("seccomp", ready.seccomp_source + ", deny by default (EPERM)");
      evidence.facts.emplace_back("user_namespace",
                                  "inside 0 and 1000 map to host 1500000000 "
                                  "and 1500001000");
    }
    evidence.facts.emplace_back("attestation",
                                "none: these are checks made from inside, not a hardware proof");

    // 1. The wall seen from inside, by the real agent in the real configuration.
    Request check;
    check.project = os::SelfCheckProject(limits_, ProfileFor(kind));
    check.timeout_ms = 60'000;
    std::vector<std::pair<std::string, std::string>> cgroup_values;
    auto run = RunJob(candidate.config, candidate.number, check,
                      std::min(deadline, Clock::now() + std::chrono::seconds(60)), &cgroup_values,
                      /*use_pool=*/false);
    if (!run.ok()) return run.error().WithContext("The self-check run failed");
    if (run->exit_code != 0) {
      return Failure(ErrorCode::kInternal, "The self-check exited with " +
                                               std::to_string(run->exit_code) + ": " +
                                               run->stderr_bytes.substr(0, 2000));
    }
    auto checks = os::ParseSelfCheckOutput(run->stdout_bytes, ProfileFor(kind));
    if (!checks.ok()) return checks.error();
    evidence.checks = *checks;

    // 2. The limits the kernel holds for that container's cgroup.
    evidence.checks.push_back(
        os::CgroupLimitsCheck(limits_, ready.config.pids_limit, cgroup_values));

    // 3. The memory limit acts: a hoarder is killed with 137 (under runsc the
    // whole sandbox is: see RunJob).
    auto hoarded = RunJob(candidate.config, candidate.number, os::MemoryProbeRequest(limits_),
                          std::min(deadline, Clock::now() + std::chrono::seconds(25)), nullptr,
                          /*use_pool=*/false);
    if (!hoarded.ok()) return hoarded.error().WithContext("The memory probe failed");
    evidence.checks.push_back(os::MemoryProbeCheck(*hoarded));

    bool all = evidence.AllChecksPassed();
    if (!all) {
      evidence.tier = Tier::kUnknown;
      evidence.summary = "No tier: at least one check of the wall failed inside the container.";
    } else if (kind == RuntimeKind::kRunsc) {
      evidence.tier = Tier::kKernel;
      evidence.summary =
          "Tier kernel: the self-check inside a throwaway runsc container found gVisor's kernel "
          "serving the guest (its own release and boot log, no host-only kernel interfaces), our "
          "seccomp policy applied inside it, a read-only root, bounded tmpfs mounts, loopback "
          "only, an unprivileged user and the "
          "cgroup and process limits; platform " +
          ready.runtime.platform() + ".";
    } else {
      evidence.tier = Tier::kContainer;
      evidence.summary =
          "Tier container: the self-check inside a throwaway " +
          std::string(oci::RuntimeKindName(kind)) +
          " container confirmed the namespaces, read-only root, bounded tmpfs mounts, seccomp "
          "filter, cgroup limits and an unprivileged user; the host kernel is shared.";
    }
    // Only a configuration whose every check passed serves runs (and fills
    // the pool: SmokeTest's FollowEvidence).
    if (all) generations_.Promote(candidate);
    return evidence;
  }

  // Binds the held tree where the configuration's bundles will name it.
  Status Bind(Prepared& prepared) const {
    auto bind = os::HeldBind::Make(os::kImageBindsDirectory, prepared.image->TreePath(),
                                   os::HeldBind::Kind::kDirectory);
    if (!bind.ok()) return bind.error();
    prepared.config.rootfs = (*bind)->path();
    prepared.bind = std::move(*bind);
    auto json = oci::BuildConfigJson(prepared.config);
    if (!json.ok()) return EnvironmentRefusal(json.error().message());
    prepared.config_digest = Sha256Hex(*json);
    return Status::Ok();
  }

  // A configuration from the host as it is now: the image held open, the
  // runtime probed, the bundle template built (not yet bound: Bind). Installs
  // nothing. Every failure is an environment refusal.
  Expected<std::shared_ptr<Prepared>> PrepareFromHost() const {
    auto image =
        image::LocateImageWith(settings_.image_directory, {guest::kAgentPath, guest::kQjsPath});
    if (!image.ok()) return EnvironmentRefusal(image.error().message());
    auto held = image::HoldImage(*image);
    if (!held.ok()) return held.error();
    auto runtime = oci::ProbeRuntime(settings_.runtime, settings_.runtime_options,
                                     Clock::now() + kProbeBudget);
    if (!runtime.ok()) return runtime.error();
    auto fresh_prepared = std::make_shared<Prepared>();
    oci::BundleConfig& config = fresh_prepared->config;
    config.rootfs = image->rootfs.string();
    config.limits = limits_;
    config.runtime = settings_.runtime;
    config.pids_limit = oci::DefaultPidsLimit(settings_.runtime, limits_);
    // Our filter on every runtime: runc and crun install it on the host
    // kernel, runsc inside gVisor (--oci-seccomp), on top of its kernel;
    // under runsc the agent also installs it, compiled, in each step.
    std::string source;
    auto text = os::ActiveSeccompPolicyText(&source);
    if (!text.ok()) return EnvironmentRefusal(text.error().message());
    auto policy = os::ParseSeccompPolicy(*text);
    if (!policy.ok()) {
      return EnvironmentRefusal("The seccomp policy (" + source +
                                ") is invalid: " + policy.error().message());
    }
    if (settings_.runtime == RuntimeKind::kRunsc) {
      auto program = os::CompileSeccompPolicy(*policy);
      if (!program.ok()) return EnvironmentRefusal(program.error().message());
      fresh_prepared->seccomp_filter.assign(
          reinterpret_cast<const char*>(program->instructions.data()),
          program->instructions.size() * sizeof(sock_filter));
    }
    config.seccomp = std::move(*policy);
    fresh_prepared->seccomp_source = source;
    fresh_prepared->prestart_job = PrestartJob(fresh_prepared->seccomp_filter);
    if (settings_.runtime != RuntimeKind::kRunsc) {
      // runc and crun: the host kernel serves the guest, so a user namespace
      // (capabilities only inside it) is part of the wall.
      config.user_namespace = oci::UserNamespace{};
    }
    auto json = oci::BuildConfigJson(config);
    if (!json.ok()) return EnvironmentRefusal(json.error().message());
    fresh_prepared->template_digest = Sha256Hex(*json);
    fresh_prepared->config_digest = fresh_prepared->template_digest;
    fresh_prepared->image = std::move(*held);
    fresh_prepared->runtime = std::move(*runtime);
    return fresh_prepared;
  }

  // The job `request` becomes in our containers; `seccomp_filter` is
  // Prepared::seccomp_filter.
  Expected<guest::Job> JobFor(const Request& request, std::string key, bool host_calls,
                              const std::string& seccomp_filter) const {
    auto job = guest::JobFromRequest(request, limits_, std::move(key));
    if (!job.ok()) return job.error();
    if (settings_.runtime == RuntimeKind::kRunsc) {
      // The cgroup's pids limit has room for gVisor's own threads, so the
      // guest's process limit is enforced inside, by gVisor's kernel.
      job->nproc = limits_.pids;
      job->seccomp_filter = seccomp_filter;
    }
    job->host_calls = host_calls;
    return job;
  }

  // runsc: what a JavaScript snippet with the default timeout becomes (as
  // Sandbox::Run validates it and RunJob builds it), for the pooled agents
  // to start its qjs ahead: under gVisor's ptrace platform the vfork and
  // execve of a step are most of a pooled run (docs/oci-provider.md, "Time
  // budget of a pooled runsc run"). The agent runs a job in it only when the
  // job asks for exactly that process (same argv, limits, environment);
  // any other job discards it first. "" for runc and crun (an exec costs
  // ~1 ms there) and when the template cannot be built.
  std::string PrestartJob(const std::string& seccomp_filter) const {
    if (settings_.runtime != RuntimeKind::kRunsc) return "";
    Request request;
    request.javascript = JavascriptPayload{""};
    auto validated = ValidateRequest(request, limits_);
    if (!validated.ok()) return "";
    auto job = JobFor(*validated, std::string(guest::kReportKeyBytes, '\0'), false, seccomp_filter);
    return job.ok() ? guest::EncodeJob(*job) : "";
  }

  // The pool's factory: a container of the serving generation, if that is
  // still `generation` (the pool drops it otherwise anyway).
  Expected<std::unique_ptr<OciSandbox>> StartPooled(uint64_t generation) {
    auto serving = generations_.Serving();
    if (!serving || serving.number != generation) {
      return Refusal(NotDispatched::kEnvironment,
                     "The configuration the pool was filling for no longer serves.");
    }
    return OciSandbox::Start(RuntimeOf(serving.config), serving.config->config, /*pooled=*/true,
                             Clock::now() + kSetupBudget, /*session=*/false,
                             serving.config->prestart_job);
  }

  // One job in one container: a pooled one when the pool has one (and
  // `use_pool`), else one started now. `cgroup_values`, when given,
  // receives the limits the kernel holds for the container's cgroup.
  Expected<Result> RunJob(const std::shared_ptr<const Prepared>& prepared, uint64_t generation,
                          const Request& request, Deadline deadline,
                          std::vector<std::pair<std::string, std::string>>* cgroup_values,
                          bool use_pool = true, GrantedCalls* calls = nullptr) {
    Clock::time_point start = Clock::now();
    std::string key(guest::kReportKeyBytes, '\0');
    if (getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) {
      return Refusal(NotDispatched::kEnvironment, "No randomness for the report key.");
    }
    auto job = JobFor(request, key, calls != nullptr, prepared->seccomp_filter);
    if (!job.ok()) return job.error();

    // A pooled run holds the refill its take calls for until it has
    // answered (warm_pool.h): starting the next runsc sandbox costs hundreds
    // of milliseconds of CPU and would otherwise compete with this run for
    // the host's cores (under gVisor's ptrace platform each guest system
    // call is two host context switches; docs/oci-provider.md).
    std::unique_ptr<OciSandbox> sandbox =
        use_pool ? pool_.Take(generation, /*hold_refill=*/true) : nullptr;
    pool::RefillHold<OciSandbox> hold(sandbox ? &pool_ : nullptr);
    if (!sandbox) {
      oci::BundleConfig config = prepared->config;
      config.host_calls = calls != nullptr;
      auto started =
          OciSandbox::Start(RuntimeOf(prepared), std::move(config), /*pooled=*/false,
                            std::min(deadline + kReportGrace, Clock::now() + kSetupBudget));
      if (!started.ok()) return started.error();
      sandbox = std::move(*started);
    }
    if (cgroup_values) *cgroup_values = ReadCgroupValues(sandbox->cgroup_path());

    Result result;
    result.isolation = ClaimedTier(settings_.runtime);
    result.environment = prepared->image->identity();
    result.kind = *request.kind();
    Status exchanged = guest::ExchangeJob(sandbox->channel(), *job, request,
                                          deadline + kReportGrace, &result, nullptr, calls);
    if (exchanged.ok()) {
      // The agent exits after its report; the container is removed off the
      // answer's path.
      destroyer_.Add(std::move(sandbox));
      result.duration_ms = MillisecondsSince(start);
      return result;
    }
    // A container killed as a whole (SIGKILL: under runsc the memory cgroup
    // holds gVisor and the guest together, so its OOM kill ends the sandbox)
    // closes the channel without a report; the runtime then exits with 137.
    bool killed_whole = false;
    if (exchanged.error().code() != ErrorCode::kDeadlineExceeded) {
      auto status = sandbox->WaitForExit(Clock::now() + std::chrono::seconds(2));
      killed_whole = status && ((WIFEXITED(*status) && WEXITSTATUS(*status) == kExitOutOfMemory) ||
                                (WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL));
    }
    std::string diagnostics = sandbox->Diagnostics();
    Status destroyed = sandbox->Destroy(Clock::now() + std::chrono::seconds(15));
    result.duration_ms = MillisecondsSince(start);
    if (killed_whole) {
      result.exit_code = kExitOutOfMemory;
      result.stderr_bytes =
          "The whole sandbox was killed (SIGKILL), most likely at its memory limit; no output "
          "was recovered.";
      // A project answer always names its outcome (SPEC §2). The run ended
      // by the guest's own doing, as when the agent reports a step killed
      // at the memory limit (137 is a result): completed, with no steps.
      if (request.project) result.outcome = ProjectOutcome::kCompleted;
      return result;
    }
    std::string message =
        "The guest agent gave no valid report (" + exchanged.error().message() + ")" +
        (diagnostics.empty() ? "" : "; runtime and agent said: " + diagnostics.substr(0, 1000));
    if (!destroyed.ok()) message += "; cleanup failed: " + destroyed.error().message();
    return guest::AnswerFailedExchange(request, exchanged.error(), message, std::move(result));
  }

  // Whether `id` is one of our containers and its owner is gone (a live
  // process's, e.g. a second daemon sharing the state directory, are not
  // touched).
  static bool LeftByDeadOwner(std::string_view id) {
    if (id.rfind(oci::kContainerIdPrefix, 0) != 0) return false;
    return os::LeftByDeadOwner(id.substr(oci::kContainerIdPrefix.size()));
  }

  // Containers, bundles and cgroups under our names that a crashed
  // provider left.
  Status RemoveLeftovers(const oci::Runtime& runtime) {
    std::string problems;
    auto listed = os::RunCommand(runtime.SpawnFor(runtime.ListArgv()), Clock::now() + kProbeBudget);
    if (listed.ok()) {
      std::istringstream ids(listed->output);
      std::vector<std::string> undeleted;
      for (std::string id; std::getline(ids, id);) {
        if (!LeftByDeadOwner(id)) continue;
        auto deleted =
            os::RunCommand(runtime.SpawnFor(runtime.DeleteArgv(id)), Clock::now() + kProbeBudget);
        if (!deleted.ok() || !WIFEXITED(deleted->status) || WEXITSTATUS(deleted->status) != 0) {
          undeleted.push_back(id);
        }
      }
      // A delete fails too when the container's own runtime removed it
      // meanwhile (its agent exits once the dead provider's channel closes):
      // only one still listed is a problem.
      if (!undeleted.empty()) {
        auto again =
            os::RunCommand(runtime.SpawnFor(runtime.ListArgv()), Clock::now() + kProbeBudget);
        for (const std::string& id : undeleted) {
          if (!again.ok() || ("\n" + again->output).find("\n" + id + "\n") != std::string::npos) {
            problems += "could not delete container " + id + "; ";
          }
        }
      }
    } else {
      problems += "listing containers failed: " + listed.error().message() + "; ";
    }
    // A bundle directory outlives its container (Destroy removes it last),
    // so the bundles left under our state directory name the containers
    // whose cgroups may be left too. Only those are touched: another
    // provider with another state directory keeps its own.
    std::vector<std::string> left;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator(runtime.bundles_dir(), error)) {
      std::string id = entry.path().filename().string();
      if (LeftByDeadOwner(id)) left.push_back(id);
    }
    for (const std::string& id : left) {
      // In every hierarchy, its members killed (never a recycled pid).
      for (const std::string& cgroup :
           os::RemoveCgroupEverywhere(std::string(oci::kCgroupParent) + "/" + id,
                                      Clock::now() + std::chrono::seconds(1))) {
        problems += "could not remove cgroup " + cgroup + "; ";
      }
      std::error_code removing;
      std::filesystem::remove_all(runtime.bundles_dir() + "/" + id, removing);
      if (removing) problems += "could not remove bundle " + id + ": " + removing.message() + "; ";
    }
    if (!problems.empty()) return Failure(ErrorCode::kInternal, "Reconcile: " + problems);
    return Status::Ok();
  }

  const Limits limits_;
  const OciSettings settings_;
  Generations<Prepared> generations_;
  // Destroyed in reverse order: the pool first (its idle sandboxes go to the
  // destroyer), then the destroyer (which finishes every container).
  pool::Destroyer<OciSandbox> destroyer_{kMaxPendingDestroys};
  pool::WarmPool<OciSandbox> pool_;
};

}  // namespace

Expected<OciSettings> OciSettingsFromEnvironment(std::string_view variant) {
  OciSettings settings;
  std::string runtime(variant);
  if (runtime.empty()) {
    const char* chosen = std::getenv("SANDBOX_OCI_RUNTIME");
    runtime = chosen != nullptr && *chosen != '\0' ? chosen : "runc";
  }
  auto kind = oci::ParseRuntimeKind(runtime);
  if (!kind) {
    return Refusal(NotDispatched::kEnvironment, "Unknown OCI runtime \"" + runtime +
                                                    "\" (SANDBOX_OCI_RUNTIME); valid: runc, "
                                                    "crun, runsc.");
  }
  settings.runtime = *kind;
  if (const char* size = std::getenv("SANDBOX_OCI_POOL_SIZE"); size != nullptr && *size != '\0') {
    std::string_view text(size);
    size_t value = 0;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (error != std::errc() || end != text.data() + text.size() || value > 64) {
      return Refusal(NotDispatched::kEnvironment,
                     "SANDBOX_OCI_POOL_SIZE must be a whole number from 0 to 64.");
    }
    settings.pool_size = value;
  }
  if (const char* binary = std::getenv("SANDBOX_OCI_RUNTIME_BINARY");
      binary != nullptr && *binary != '\0') {
    if (binary[0] != '/') {
      return Refusal(NotDispatched::kEnvironment,
                     "SANDBOX_OCI_RUNTIME_BINARY must be an absolute path.");
    }
    settings.runtime_options.binary = binary;
  }
  if (const char* platform = std::getenv("SANDBOX_OCI_RUNSC_PLATFORM"); platform != nullptr) {
    settings.runtime_options.platform = platform;
  }
  if (const char* state = std::getenv("SANDBOX_OCI_STATE_DIR");
      state != nullptr && *state != '\0') {
    settings.runtime_options.state_dir = state;
  }
  return settings;
}

std::unique_ptr<Provider> MakeOciProvider(const Limits& limits, const OciSettings& settings) {
  return std::make_unique<OciProvider>(limits, settings);
}

}  // namespace plimsoll
