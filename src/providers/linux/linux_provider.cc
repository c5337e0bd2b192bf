#include "providers/linux/linux_provider.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>
#include <mutex>
#include <optional>

#include "guest/exchange.h"
#include "guest/protocol.h"
#include "image/image.h"
#include "providers/linux/cgroup.h"
#include "providers/linux/contain.h"
#include "providers/linux/seccomp.h"
#include "providers/linux/self_check.h"
#include "providers/linux/netns_pool.h"
#include "providers/linux/teardown.h"

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

bool SameProgram(const SeccompProgram& a, const SeccompProgram& b) {
  return a.instructions.size() == b.instructions.size() &&
         std::equal(a.instructions.begin(), a.instructions.end(), b.instructions.begin(),
                    [](const sock_filter& x, const sock_filter& y) {
                      return x.code == y.code && x.jt == y.jt && x.jf == y.jf && x.k == y.k;
                    });
}

// What every run needs, prepared once.
struct Prepared {
  image::Image image;
  CgroupLayout cgroups;
  SeccompProgram seccomp;
  std::string seccomp_source;
  size_t seccomp_rules = 0;
};

class LinuxProvider final : public Provider {
 public:
  explicit LinuxProvider(const Limits& limits) : limits_(limits) {}

  std::string_view name() const override { return "linux"; }

  Description Describe() const override {
    Description description;
    description.provider = "linux";
    description.tier = Tier::kContainer;
    description.capabilities.payloads = {PayloadKind::kJavascript, PayloadKind::kPython,
                                         PayloadKind::kProject};
    description.limits = limits_;
    description.details = {{"kernel", KernelRelease()}, {"wall", kWall}};
    std::string pool_error = networks_.LastError();
    description.details.emplace_back(
        "network_namespaces",
        pool_error.empty()
            ? "made ahead (" + std::to_string(networks_.Ready()) + " of " +
                  std::to_string(kSpareNetworkNamespaces) + " ready)"
            : "made by each run's clone (making them ahead failed: " + pool_error + ")");
    std::lock_guard lock(mutex_);
    if (prepared_) {
      description.environment = prepared_->image.identity;
      description.details.emplace_back("cgroup", prepared_->cgroups.Describe());
      description.details.emplace_back("seccomp", prepared_->seccomp_source);
      description.details.emplace_back("rootfs", prepared_->image.rootfs.string());
    } else if (auto located = image::LocateDefaultImage(); located.ok()) {
      description.environment = located->identity;
    }
    return description;
  }

  Status Reconcile() override {
    auto layout = DetectCgroups();
    if (!layout.ok()) return layout.error();
    auto removed = ReconcileCgroups(*layout);
    if (!removed.ok()) return removed.error();
    return Status::Ok();
  }

  Status Preflight() override {
    auto prepared = Prepare(/*fresh=*/true);
    if (!prepared.ok()) return prepared.error();
    return Status::Ok();
  }

  Expected<Evidence> SmokeTest(Deadline deadline) override {
    auto prepared = Prepare(/*fresh=*/false);
    if (!prepared.ok()) return prepared.error();
    Evidence evidence;
    evidence.collected_unix_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count();
    evidence.facts = {
        {"runtime", "plimsoll linux sandbox (user, pid, mount, net, ipc, uts, cgroup namespaces)"},
        {"kernel", KernelRelease()},
        {"cgroup", (*prepared)->cgroups.Describe()},
        {"seccomp", (*prepared)->seccomp_source + ", " +
                        std::to_string((*prepared)->seccomp_rules) +
                        " rules, deny by default (EPERM)"},
        {"image", (*prepared)->image.identity},
        {"attestation", "none: these are checks made from inside, not a hardware proof"}};

    // 1. The wall seen from inside, by the real agent in the real configuration.
    Request check;
    check.project = SelfCheckProject(limits_);
    check.timeout_ms = 20'000;
    std::vector<std::pair<std::string, std::string>> cgroup_values;
    auto run = RunJob(**prepared, check,
                      std::min(deadline, Clock::now() + std::chrono::seconds(20)), &cgroup_values);
    if (!run.ok()) return run.error().WithContext("The self-check run failed");
    if (run->exit_code != 0) {
      return Failure(ErrorCode::kInternal, "The self-check exited with " +
                                               std::to_string(run->exit_code) + ": " +
                                               run->stderr_bytes.substr(0, 2000));
    }
    auto checks = ParseSelfCheckOutput(run->stdout_bytes);
    if (!checks.ok()) return checks.error();
    evidence.checks = *checks;

    // 2. The limits the kernel holds for that run's cgroup (read from the host).
    evidence.checks.push_back(CgroupLimitsCheck(limits_, limits_.pids, cgroup_values));

    // 3. The memory limit acts: a hoarder is killed with 137.
    auto hoarded = RunJob(**prepared, MemoryProbeRequest(limits_),
                          std::min(deadline, Clock::now() + std::chrono::seconds(22)), nullptr);
    if (!hoarded.ok()) return hoarded.error().WithContext("The memory probe failed");
    evidence.checks.push_back(MemoryProbeCheck(*hoarded));

    bool all = evidence.AllChecksPassed();
    evidence.tier = all ? Tier::kContainer : Tier::kUnknown;
    evidence.summary =
        all ? "Tier container: the self-check inside a throwaway sandbox confirmed the "
              "namespaces, read-only root, bounded tmpfs mounts, seccomp filter, "
              "cgroup limits and an unprivileged user; the host kernel is shared."
            : "No tier: at least one check of the wall failed inside the sandbox.";
    return evidence;
  }

  Expected<Result> Run(const Request& request, Deadline deadline) override {
    if (request.cell) {
      return Refusal(NotDispatched::kUnsupported,
                     "The linux provider has no sessions yet, so no cells.");
    }
    auto prepared = Prepare(/*fresh=*/false);
    if (!prepared.ok()) return prepared.error();
    return RunJob(**prepared, request, deadline, nullptr);
  }

 private:
  static constexpr const char* kWall =
      "namespaces (user, pid, mount, net, ipc, uts, cgroup), read-only root, tmpfs /tmp and /work, "
      "seccomp deny-by-default, cgroup memory/pids/cpu limits, no capabilities for guest code";

  // Locates the image, detects cgroups, compiles the seccomp policy (once,
  // or again when `fresh`). Every failure is an environment refusal.
  Expected<Prepared*> Prepare(bool fresh) {
    std::lock_guard lock(mutex_);
    if (prepared_ && !fresh) return prepared_.get();
    auto image = image::LocateDefaultImageWith({guest::kAgentPath, guest::kQjsPath});
    if (!image.ok()) return EnvironmentRefusal(image.error().message());
    std::ifstream namespaces("/proc/sys/user/max_user_namespaces");
    long max_namespaces = -1;
    if (namespaces >> max_namespaces && max_namespaces == 0) {
      return EnvironmentRefusal("User namespaces are disabled (user.max_user_namespaces = 0).");
    }
    auto layout = DetectCgroups();
    if (!layout.ok()) return EnvironmentRefusal(layout.error().message());
    if (Status parents = EnsureCgroupParents(*layout); !parents.ok()) {
      return EnvironmentRefusal("The plimsoll cgroup parents cannot be created: " +
                                parents.error().message());
    }
    std::string source;
    auto text = ActiveSeccompPolicyText(&source);
    if (!text.ok()) return EnvironmentRefusal(text.error().message());
    auto policy = ParseSeccompPolicy(*text);
    if (!policy.ok())
      return EnvironmentRefusal("The seccomp policy (" + source +
                                ") is invalid: " + policy.error().message());
    auto program = CompileSeccompPolicy(*policy);
    if (!program.ok())
      return EnvironmentRefusal("The seccomp policy (" + source +
                                ") does not compile: " + program.error().message());
    auto fresh_prepared = std::make_unique<Prepared>();
    fresh_prepared->image = std::move(*image);
    fresh_prepared->cgroups = std::move(*layout);
    fresh_prepared->seccomp = std::move(*program);
    fresh_prepared->seccomp_source = source;
    fresh_prepared->seccomp_rules = policy->rules.size();
    // Unchanged (the usual answer to /readyz's preflight): keep the current
    // one. Changed: runs in flight keep the old one alive, so retire it.
    if (prepared_ && prepared_->image.identity == fresh_prepared->image.identity &&
        prepared_->image.rootfs == fresh_prepared->image.rootfs &&
        prepared_->seccomp_source == fresh_prepared->seccomp_source &&
        SameProgram(prepared_->seccomp, fresh_prepared->seccomp) &&
        prepared_->cgroups.Describe() == fresh_prepared->cgroups.Describe()) {
      return prepared_.get();
    }
    if (prepared_) retired_.push_back(std::move(prepared_));
    prepared_ = std::move(fresh_prepared);
    return prepared_.get();
  }

  // One job in one fresh sandbox. `cgroup_values`, when given, receives the
  // limits the kernel holds for the run's cgroup.
  Expected<Result> RunJob(const Prepared& prepared, const Request& request, Deadline deadline,
                          std::vector<std::pair<std::string, std::string>>* cgroup_values) {
    Clock::time_point start = Clock::now();
    std::string key(guest::kReportKeyBytes, '\0');
    if (getrandom(key.data(), key.size(), 0) != static_cast<ssize_t>(key.size())) {
      return Refusal(NotDispatched::kEnvironment, "No randomness for the report key.");
    }
    auto job = guest::JobFromRequest(request, limits_, key);
    if (!job.ok()) return job.error();

    ContainConfig config;
    config.rootfs = prepared.image.rootfs.string();
    // pid 1 is the agent binary as init; it forks the agent as pid 2.
    config.argv = {guest::kAgentPath, "--init", "--channel", std::to_string(kChannelFd)};
    config.environment = {"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/work"};
    config.limits = limits_;
    config.seccomp = &prepared.seccomp;
    config.cgroups = &prepared.cgroups;
    config.network = networks_.Take();  // none ready: the clone makes its own
    auto container =
        Contain(config, std::min(deadline + kReportGrace, Clock::now() + kSetupBudget));
    if (!container.ok()) return container.error();
    if (cgroup_values) *cgroup_values = container->cgroup().ReadLimits();

    Result result;
    result.isolation = Tier::kContainer;
    result.environment = prepared.image.identity;
    result.kind = *request.kind();
    Status exchanged =
        guest::ExchangeJob(container->channel(), *job, request, deadline + kReportGrace, &result);
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
  mutable std::mutex mutex_;
  std::unique_ptr<Prepared> prepared_;
  std::vector<std::unique_ptr<Prepared>> retired_;
  NetnsPool networks_{kSpareNetworkNamespaces};
  // Last, so it is destroyed first: every sandbox is gone before the rest.
  Teardown teardown_{kMaxPendingTeardowns};
};

}  // namespace

std::unique_ptr<Provider> MakeLinuxProvider(const Limits& limits) {
  return std::make_unique<LinuxProvider>(limits);
}

}  // namespace plimsoll
