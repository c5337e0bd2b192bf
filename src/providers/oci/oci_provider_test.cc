// Integration tests of the `oci` provider with real containers, for each of
// runc, crun and runsc (a runtime this machine lacks is skipped with the
// reason). The binary uses its own state directory (SANDBOX_OCI_STATE_DIR,
// removed at the end), so it never touches a daemon's containers, and checks
// after each test that nothing of its own is left on the host.
#include "providers/oci/oci_provider.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "base/scoped_env_for_tests.h"
#include "image/image.h"
#include "image/swap_for_tests.h"
#include "os/held_bind.h"
#include "os/owner.h"
#include "os/spawn.h"
#include "plimsoll/provider.h"
#include "plimsoll/request.h"
#include "providers/oci/oci_test_support.h"

namespace plimsoll {
namespace {

using namespace std::chrono_literals;
using oci::RuntimeKind;
using namespace oci::testing;

// The binary's private state directory.
struct BinaryState {
  std::string state_dir;
};

BinaryState& State() {
  static BinaryState state;
  return state;
}

class StateDirEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    State().state_dir = "/run/plimsoll-test-oci-" + std::to_string(getpid());
    // Set before any provider (and any thread) exists.
    setenv("SANDBOX_OCI_STATE_DIR", State().state_dir.c_str(), 1);
    setenv("SANDBOX_OCI_POOL_SIZE", "0", 1);
  }
  void TearDown() override {
    std::error_code error;
    std::filesystem::remove_all(State().state_dir, error);
  }
};

const auto* const kStateDirEnvironment =
    ::testing::AddGlobalTestEnvironment(new StateDirEnvironment);

class OciProviderTest : public ::testing::TestWithParam<RuntimeKind> {
 protected:
  void SetUp() override {
    kind_ = GetParam();
    PLIMSOLL_REQUIRE_HOST(HostParameter(kind_));
    auto runtime = Probe(kind_, State().state_dir);
    ASSERT_TRUE(runtime.ok()) << runtime.error().ToString();
    runtime_.emplace(std::move(*runtime));
    watch_ = std::make_unique<BundleWatch>(runtime_->bundles_dir());
    ASSERT_TRUE(watch_->ok());
    std::string left = Left(10s);
    ASSERT_EQ(left, "") << "an earlier test left this behind";
  }

  // A provider in our state dir with a pool of `pool` (two tests build
  // theirs through MakeProvider and the environment instead).
  std::unique_ptr<Provider> Make(size_t pool) {
    OciSettings settings;
    settings.runtime = kind_;
    settings.runtime_options.state_dir = State().state_dir;
    settings.pool_size = pool;
    return MakeOciProvider(limits_, settings);
  }

  void MustSmokeTest(Provider& provider) {
    auto evidence = provider.SmokeTest(TestClock::now() + 180s);
    ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
    for (const EvidenceCheck& check : evidence->checks) {
      EXPECT_TRUE(check.passed) << check.name << ": " << check.detail;
    }
    ASSERT_TRUE(evidence->AllChecksPassed()) << evidence->summary;
  }

  Expected<Result> RunRequest(Provider& provider, const Request& request) {
    return oci::testing::RunRequest(provider, limits_, request);
  }

  Result MustRun(Provider& provider, const Request& request) {
    auto result = RunRequest(provider, request);
    if (!result.ok()) {
      ADD_FAILURE() << result.error().ToString();
      return Result{};
    }
    return *result;
  }

  static Request Javascript(const std::string& code, int64_t timeout_ms = 20'000) {
    Request request;
    request.javascript = JavascriptPayload{code};
    request.timeout_ms = timeout_ms;
    return request;
  }

  // What is left of our containers after `bound`, "" when nothing.
  std::string Left(std::chrono::milliseconds bound) {
    return WaitUntilNothingLeft(*runtime_, State().state_dir, *watch_, bound);
  }

  RuntimeKind kind_ = RuntimeKind::kRunc;
  Limits limits_;
  std::optional<oci::Runtime> runtime_;
  std::unique_ptr<BundleWatch> watch_;  // the ids of the containers the test makes

  void RunAfterThePooledSandboxDied(bool stop_runtime);
};

std::string ParamName(const ::testing::TestParamInfo<RuntimeKind>& info) {
  return RuntimeName(info.param);
}

TEST_P(OciProviderTest, SmokeTestClaimsTheRuntimesTierWithEveryCheckPassed) {
  auto provider = Make(0);
  ASSERT_TRUE(provider->Preflight().ok());
  auto evidence = provider->SmokeTest(TestClock::now() + 180s);
  ASSERT_TRUE(evidence.ok()) << evidence.error().ToString();
  for (const auto& [key, value] : evidence->facts)
    std::cout << "fact " << key << ": " << value << "\n";
  for (const EvidenceCheck& check : evidence->checks) {
    std::cout << (check.passed ? "PASS " : "FAIL ") << check.name << ": " << check.detail << "\n";
    EXPECT_TRUE(check.passed) << check.name << ": " << check.detail;
  }
  EXPECT_TRUE(evidence->AllChecksPassed());
  EXPECT_EQ(evidence->tier, ExpectedTier(kind_)) << evidence->summary;
  EXPECT_NE(Fact(*evidence, "runtime").find(runtime_->version()), std::string::npos)
      << Fact(*evidence, "runtime");
  for (const char* name : {"cgroup_limits_configured", "memory_limit_enforced"}) {
    const EvidenceCheck* check = FindCheck(*evidence, name);
    ASSERT_NE(check, nullptr) << name << " is missing";
    EXPECT_TRUE(check->passed) << name << ": " << check->detail;
  }
  // Our seccomp policy on every runtime, runsc included (gVisor applies it).
  const EvidenceCheck* seccomp = FindCheck(*evidence, "seccomp_filter");
  ASSERT_NE(seccomp, nullptr) << "seccomp_filter is missing";
  EXPECT_TRUE(seccomp->passed) << seccomp->detail;
  EXPECT_NE(Fact(*evidence, "seccomp"), "");
  if (kind_ == RuntimeKind::kRunsc) {
    for (const char* name : {"guest_kernel_is_gvisor", "host_kernel_interfaces_absent"}) {
      const EvidenceCheck* check = FindCheck(*evidence, name);
      ASSERT_NE(check, nullptr) << name << " is missing";
      EXPECT_TRUE(check->passed) << name << ": " << check->detail;
    }
    EXPECT_FALSE(runtime_->platform().empty());
    EXPECT_EQ(Fact(*evidence, "platform"), runtime_->platform());
  } else {
    EXPECT_NE(Fact(*evidence, "seccomp"), "");
  }
  Description description = provider->Describe();
  EXPECT_EQ(description.tier, ExpectedTier(kind_));
  EXPECT_FALSE(description.environment.empty());
  provider.reset();
  EXPECT_EQ(Left(15s), "");
}

TEST_P(OciProviderTest, RunsJavascriptPythonAndAProjectWithAFailingStep) {
  // Through the factory, as the daemon and the CLI build it.
  auto made = MakeProvider("oci:" + RuntimeName(kind_), limits_);
  ASSERT_TRUE(made.ok()) << made.error().ToString();
  std::unique_ptr<Provider> provider = std::move(*made);
  std::string environment = provider->Describe().environment;
  EXPECT_FALSE(environment.empty());
  MustSmokeTest(*provider);  // nothing runs before it (issue 13)

  Result js = MustRun(*provider, Javascript("console.log(6*7)"));
  EXPECT_EQ(js.stdout_bytes, "42\n") << js.stderr_bytes;
  EXPECT_EQ(js.exit_code, 0);
  EXPECT_FALSE(js.timed_out);
  EXPECT_EQ(js.isolation, ExpectedTier(kind_));
  EXPECT_EQ(js.environment, environment);

  Request python;
  python.python = PythonPayload{"import sys\nprint(6*7)\nprint('to stderr', file=sys.stderr)"};
  Result py = MustRun(*provider, python);
  EXPECT_EQ(py.stdout_bytes, "42\n") << py.stderr_bytes;
  EXPECT_EQ(py.stderr_bytes, "to stderr\n");
  EXPECT_EQ(py.exit_code, 0);
  EXPECT_EQ(py.isolation, ExpectedTier(kind_));

  // A failing step stops the rest (SPEC §2).
  Request project;
  project.project = ProjectPayload{{{"main.py", "print('step1')\nraise SystemExit(3)"}},
                                   {{"python3", "main.py"}, {"cat", "main.py"}},
                                   {}};
  Result failed = MustRun(*provider, project);
  ASSERT_EQ(failed.steps.size(), 1u) << "the step after the failing one ran";
  EXPECT_EQ(failed.steps[0].exit_code, 3);
  EXPECT_EQ(failed.steps[0].stdout_bytes, "step1\n");
  EXPECT_EQ(failed.exit_code, 3);
  EXPECT_FALSE(failed.timed_out);
  ASSERT_TRUE(failed.outcome.has_value());
  EXPECT_EQ(*failed.outcome, ProjectOutcome::kCompleted);
  EXPECT_EQ(failed.isolation, ExpectedTier(kind_));

  // The finished containers go in the background; the destructor drains.
  provider.reset();
  EXPECT_EQ(Left(15s), "");
}

TEST_P(OciProviderTest, TimeoutEndsTheRunAndLeavesNothingBehind) {
  auto provider = Make(0);
  MustSmokeTest(*provider);
  auto started = TestClock::now();
  Result result = MustRun(*provider, Javascript("while(true){}", 500));
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.exit_code, kExitTimedOut);
  EXPECT_EQ(result.isolation, ExpectedTier(kind_));
  EXPECT_LT(TestClock::now() - started, 20s);
  // While the provider still lives.
  EXPECT_EQ(Left(10s), "");
  provider.reset();
  EXPECT_EQ(Left(15s), "");
}

// Under runsc the memory cgroup holds gVisor and the guest together, so a
// hoarder gets the whole sandbox killed and no report comes back; the
// project's answer must still say how it ended (SPEC §2 outcomes). Under
// runc and crun only the step is killed, so its own result says 137.
TEST_P(OciProviderTest, AProjectKilledAsAWholeStillNamesItsOutcome) {
  auto provider = Make(0);
  MustSmokeTest(*provider);
  Request project;
  project.project = ProjectPayload{
      {{"hoard.py", "hoard = []\nwhile True:\n    hoard.append(b'\\x01' * (16 << 20))\n"}},
      {{"python3", "hoard.py"}},
      {}};
  project.timeout_ms = 20'000;
  Result result = MustRun(*provider, project);
  EXPECT_EQ(result.exit_code, kExitOutOfMemory) << result.stderr_bytes;
  EXPECT_FALSE(result.timed_out);
  ASSERT_TRUE(result.outcome.has_value()) << "a project answer without an outcome";
  EXPECT_EQ(*result.outcome, ProjectOutcome::kCompleted);
  if (kind_ != RuntimeKind::kRunsc) {
    ASSERT_EQ(result.steps.size(), 1u);
    EXPECT_EQ(result.steps[0].exit_code, kExitOutOfMemory);
  }
  provider.reset();
  EXPECT_EQ(Left(15s), "");
}

TEST_P(OciProviderTest, PoolIsDisabledAndStartsNothingBeforeTheSmokeTest) {
  auto provider = Make(2);
  std::string detail = PoolDetail(*provider);
  PoolCounts counts = ParsePool(detail);
  ASSERT_TRUE(counts.parsed) << detail;
  EXPECT_FALSE(counts.enabled) << detail;
  EXPECT_NE(detail.find("disabled"), std::string::npos) << detail;
  EXPECT_EQ(counts.ready, 0);
  ASSERT_TRUE(provider->Preflight().ok());
  // A run before the evidence is refused: no configuration serves before its
  // smoke test passed (issue 13), and the pool serves none.
  auto early = RunRequest(*provider, Javascript("console.log(6*7)"));
  ASSERT_FALSE(early.ok());
  EXPECT_EQ(NotDispatchedReason(early.error()), NotDispatched::kEnvironment);
  counts = ParsePool(PoolDetail(*provider));
  EXPECT_FALSE(counts.enabled);
  EXPECT_EQ(counts.handed_out, 0);
  EXPECT_EQ(counts.ready, 0);
  // Nothing runs: the pool started none.
  EXPECT_EQ(Left(10s), "");
  EXPECT_EQ(ParsePool(PoolDetail(*provider)).ready, 0);
  EXPECT_TRUE(ListedContainers(*runtime_).empty());
}

TEST_P(OciProviderTest, PoolFillsAfterTheSmokeTestAndServesRuns) {
  std::unique_ptr<Provider> provider;
  {
    testing::ScopedEnv pool_size("SANDBOX_OCI_POOL_SIZE", "2");  // no thread runs yet
    auto made = MakeProvider("oci:" + RuntimeName(kind_), limits_);
    ASSERT_TRUE(made.ok()) << made.error().ToString();
    provider = std::move(*made);
  }
  MustSmokeTest(*provider);
  std::string detail;
  ASSERT_TRUE(WaitForPool(
      *provider, 60s, [](const PoolCounts& c) { return c.ready == 2 && c.size == 2; }, &detail))
      << detail;
  EXPECT_NE(detail.find("2 of 2 ready (enabled)"), std::string::npos) << detail;
  EXPECT_GE(ListedContainers(*runtime_).size(), 2u);

  Result js = MustRun(*provider, Javascript("console.log(6*7)"));
  EXPECT_EQ(js.stdout_bytes, "42\n") << js.stderr_bytes;
  EXPECT_EQ(js.isolation, ExpectedTier(kind_));
  PoolCounts counts = ParsePool(PoolDetail(*provider));
  EXPECT_EQ(counts.handed_out, 1) << PoolDetail(*provider);
  EXPECT_EQ(counts.empty, 0) << PoolDetail(*provider);
  // It refills.
  ASSERT_TRUE(WaitForPool(
      *provider, 60s, [](const PoolCounts& c) { return c.ready == 2; }, &detail))
      << detail;
  // Destroying the provider destroys the idle pooled containers too.
  provider.reset();
  EXPECT_EQ(Left(15s), "");
}

// A pooled run answers exactly as a cold one: under runsc the pooled agent
// runs a default-timeout snippet in the qjs it started ahead (prestart.h),
// and discards it for any other job; the result (and the tier) is the same.
TEST_P(OciProviderTest, APooledRunAnswersExactlyAsAColdOne) {
  auto pooled = Make(1);
  auto cold = Make(0);
  MustSmokeTest(*pooled);
  MustSmokeTest(*cold);
  std::string detail;
  bool prestarts = false;
  for (const auto& [key, value] : pooled->Describe().details) {
    if (key == "pool_prestart") prestarts = true;
  }
  EXPECT_EQ(prestarts, kind_ == RuntimeKind::kRunsc);
  for (const Request& request : {Javascript("console.log(6*7)", 0),
                                 Javascript("console.error('e'); throw new Error('boom')", 0),
                                 Javascript("console.log('own timeout')", 3'000)}) {
    ASSERT_TRUE(WaitForPool(
        *pooled, 60s, [](const PoolCounts& c) { return c.ready == 1; }, &detail))
        << detail;
    Result from_pool = MustRun(*pooled, request);
    Result started = MustRun(*cold, request);
    EXPECT_EQ(from_pool.exit_code, started.exit_code) << request.javascript->code;
    EXPECT_EQ(from_pool.stdout_bytes, started.stdout_bytes) << request.javascript->code;
    EXPECT_EQ(from_pool.stderr_bytes, started.stderr_bytes) << request.javascript->code;
    EXPECT_EQ(from_pool.timed_out, started.timed_out);
    EXPECT_EQ(from_pool.isolation, started.isolation);
    EXPECT_EQ(from_pool.environment, started.environment);
  }
  EXPECT_EQ(ParsePool(PoolDetail(*pooled)).handed_out, 3) << PoolDetail(*pooled);
  pooled.reset();
  cold.reset();
  EXPECT_EQ(Left(15s), "");
}

// The chosen behaviour when the pool is empty: a run starts its own
// container (a cold start, within the request's deadline) and is never shed
// by the pool; shedding for capacity is the daemon's admission limit.
TEST_P(OciProviderTest, AnEmptyPoolMakesRunsStartTheirOwnContainers) {
  auto provider = Make(1);
  MustSmokeTest(*provider);
  std::string detail;
  ASSERT_TRUE(WaitForPool(
      *provider, 60s, [](const PoolCounts& c) { return c.ready == 1; }, &detail))
      << detail;
  constexpr int kRuns = 4;
  std::vector<std::optional<Expected<Result>>> results(kRuns);
  std::vector<std::thread> threads;
  for (int i = 0; i < kRuns; ++i) {
    threads.emplace_back([&, i] {
      results[i].emplace(
          RunRequest(*provider, Javascript("console.log(" + std::to_string(i) + "*7)")));
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int i = 0; i < kRuns; ++i) {
    ASSERT_TRUE(results[i].has_value());
    ASSERT_TRUE(results[i]->ok()) << "run " << i << ": " << (*results[i]).error().ToString();
    const Result& result = **results[i];
    EXPECT_EQ(result.stdout_bytes, std::to_string(i * 7) + "\n") << result.stderr_bytes;
    EXPECT_EQ(result.exit_code, 0);
    EXPECT_EQ(result.isolation, ExpectedTier(kind_));
  }
  PoolCounts counts = ParsePool(PoolDetail(*provider));
  EXPECT_GE(counts.handed_out, 1) << PoolDetail(*provider);
  EXPECT_EQ(counts.handed_out + counts.empty, kRuns) << PoolDetail(*provider);
  provider.reset();
  EXPECT_EQ(Left(15s), "");
}

// SIGKILLs every process in `cgroup` until it is empty (or removed by the
// runtime once its container died); whether that happened within `bound`.
// `killed` receives the pids signalled.
bool KillCgroupMembers(const std::string& cgroup, std::chrono::milliseconds bound,
                       std::set<pid_t>* killed) {
  auto give_up = TestClock::now() + bound;
  while (TestClock::now() < give_up) {
    std::ifstream procs(cgroup + "/cgroup.procs");
    if (!procs) return !std::filesystem::exists(cgroup);
    bool any = false;
    for (long pid; procs >> pid;) {
      any = true;
      kill(static_cast<pid_t>(pid), SIGKILL);
      killed->insert(static_cast<pid_t>(pid));
    }
    if (!any) return true;
    std::this_thread::sleep_for(10ms);
  }
  return false;
}

// Whether `pid` has exited: gone, or a zombie whose threads are all gone.
bool HasExited(pid_t pid) {
  std::string base = "/proc/" + std::to_string(pid);
  std::ifstream stat(base + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return true;
  size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return true;
  if (text[close + 2] != 'Z' && text[close + 2] != 'X') return false;
  return DirectoryEntries(base + "/task").size() <= 1;
}

// The PPid of `pid`, or -1.
pid_t ParentOf(pid_t pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("PPid:", 0) == 0) return static_cast<pid_t>(std::atol(line.c_str() + 5));
  }
  return -1;
}

// Sends SIGCONT to a stopped process when it goes out of scope.
struct ContinueLater {
  pid_t pid = -1;
  ~ContinueLater() {
    if (pid > 0) kill(pid, SIGCONT);
  }
};

// A pool of one is filled, then every process of the pooled container (the
// agent; for runsc the sandbox and gofer processes) is SIGKILLed. With
// `stop_runtime`, the container's runtime (`<runtime> run`, which holds the
// channel's other end) is stopped first, so it cannot notice: only the
// container's own death tells. The next run must be served by a healthy
// container (cold or refilled), never by the dead one.
void OciProviderTest::RunAfterThePooledSandboxDied(bool stop_runtime) {
  auto provider = Make(1);
  MustSmokeTest(*provider);
  std::string detail;
  ASSERT_TRUE(WaitForPool(
      *provider, 60s, [](const PoolCounts& c) { return c.ready == 1; }, &detail))
      << detail;
  // The smoke test's containers are destroyed in the background: wait until
  // the pooled one is the only container.
  std::vector<std::string> bundles;
  auto give_up = TestClock::now() + 20s;
  while ((bundles = DirectoryEntries(runtime_->bundles_dir())).size() != 1 &&
         TestClock::now() < give_up) {
    std::this_thread::sleep_for(20ms);
  }
  ASSERT_EQ(bundles.size(), 1u) << Join(bundles);
  const std::string id = bundles[0];
  std::string cgroup = "/sys/fs/cgroup/pids" + std::string(oci::kCgroupParent) + "/" + id;
  ASSERT_TRUE(std::filesystem::exists(cgroup)) << cgroup;

  ContinueLater continue_runtime;
  if (stop_runtime) {
    // The runtime may write its pid file after the agent announced itself
    // (seen under load with runc): wait for it.
    long init = 0;
    auto pid_written_by = TestClock::now() + 10s;
    while (!(std::ifstream(runtime_->bundles_dir() + "/" + id + "/pid") >> init) &&
           TestClock::now() < pid_written_by) {
      std::this_thread::sleep_for(10ms);
    }
    ASSERT_GT(init, 0) << "the runtime wrote no pid file for " << id;
    pid_t runtime_pid = ParentOf(static_cast<pid_t>(init));
    ASSERT_GT(runtime_pid, 1);
    std::string text = ReadProcFile("/proc/" + std::to_string(runtime_pid) + "/cmdline");
    ASSERT_NE(text.find(id), std::string::npos) << "not the runtime of " << id << ": " << text;
    ASSERT_EQ(kill(runtime_pid, SIGSTOP), 0);
    continue_runtime.pid = runtime_pid;
  }
  std::set<pid_t> killed;
  ASSERT_TRUE(KillCgroupMembers(cgroup, 10s, &killed)) << cgroup;
  ASSERT_FALSE(killed.empty());
  auto exited_by = TestClock::now() + 10s;
  for (pid_t pid : killed) {
    while (!HasExited(pid) && TestClock::now() < exited_by) std::this_thread::sleep_for(5ms);
    ASSERT_TRUE(HasExited(pid)) << pid;
  }

  Result js = MustRun(*provider, Javascript("console.log(6*7)"));
  EXPECT_EQ(js.stdout_bytes, "42\n") << js.stderr_bytes;
  EXPECT_EQ(js.exit_code, 0);
  if (stop_runtime) {
    kill(continue_runtime.pid, SIGCONT);  // its cleanup may go on
    continue_runtime.pid = -1;
  }
  // Found dead at Take() or by the once-a-second check.
  ASSERT_TRUE(WaitForPool(
      *provider, 15s, [](const PoolCounts& c) { return c.unhealthy >= 1; }, &detail))
      << detail;
  EXPECT_NE(detail.find("discarded as unhealthy"), std::string::npos);
  provider.reset();
  EXPECT_EQ(Left(15s), "");
}

TEST_P(OciProviderTest, APooledSandboxThatDiedIsNeverHandedOut) {
  RunAfterThePooledSandboxDied(/*stop_runtime=*/false);
}

TEST_P(OciProviderTest, APooledSandboxThatDiedIsNeverHandedOutBeforeItsRuntimeNotices) {
  RunAfterThePooledSandboxDied(/*stop_runtime=*/true);
}

TEST_P(OciProviderTest, ReconcileRemovesPlantedLeftovers) {
  const std::string id = "plimsoll-deadbeefdeadbeef";
  const std::string bundle = runtime_->bundles_dir() + "/" + id;
  ASSERT_TRUE(std::filesystem::create_directories(bundle));
  std::ofstream(bundle + "/config.json") << "{}";
  const std::string parent = "/sys/fs/cgroup/pids" + std::string(oci::kCgroupParent);
  bool made_parent = mkdir(parent.c_str(), 0755) == 0;
  const std::string cgroup = parent + "/" + id;
  ASSERT_EQ(mkdir(cgroup.c_str(), 0755), 0) << std::strerror(errno);
  // A process still in it, as a container's would be after a crash.
  os::SpawnOptions sleeper;
  sleeper.argv = {"/bin/sleep", "60"};
  auto left_running = os::Spawn(sleeper);
  ASSERT_TRUE(left_running.ok()) << left_running.error().ToString();
  std::ofstream(cgroup + "/cgroup.procs") << left_running->pid() << std::flush;

  auto provider = Make(0);
  Status reconciled = provider->Reconcile();
  EXPECT_TRUE(reconciled.ok()) << reconciled.error().ToString();
  EXPECT_FALSE(std::filesystem::exists(bundle));
  EXPECT_FALSE(std::filesystem::exists(cgroup));
  auto status = left_running->Wait(TestClock::now() + 5s);
  ASSERT_TRUE(status.has_value()) << "the process in the leftover cgroup still runs";
  EXPECT_TRUE(WIFSIGNALED(*status) && WTERMSIG(*status) == SIGKILL);
  rmdir(cgroup.c_str());
  if (made_parent) rmdir(parent.c_str());
}

// Reconcile is scoped to this provider's runtime and state directory and to
// dead owners: a container cgroup of another daemon (no bundle or state of
// ours), the bundles of another runtime, and a live owner's container in our
// own state directory keep running.
TEST_P(OciProviderTest, ReconcileLeavesOtherProvidersContainersAlone) {
  const std::string parent = "/sys/fs/cgroup/pids" + std::string(oci::kCgroupParent);
  bool made_parent = mkdir(parent.c_str(), 0755) == 0;
  const std::string cgroup = parent + "/plimsoll-0therdaem0n0000";
  ASSERT_EQ(mkdir(cgroup.c_str(), 0755), 0) << std::strerror(errno);
  os::SpawnOptions sleeper;
  sleeper.argv = {"/bin/sleep", "60"};
  auto other = os::Spawn(sleeper);
  ASSERT_TRUE(other.ok()) << other.error().ToString();
  std::ofstream(cgroup + "/cgroup.procs") << other->pid() << std::flush;

  RuntimeKind other_kind = kind_ == RuntimeKind::kRunc ? RuntimeKind::kRunsc : RuntimeKind::kRunc;
  std::string other_bundle;
  if (auto other_runtime = Probe(other_kind, State().state_dir); other_runtime.ok()) {
    other_bundle = other_runtime->bundles_dir() + "/plimsoll-0therrunt1me0000";
    std::filesystem::create_directories(other_bundle);
  }

  // A live owner's container in our own state directory and runtime (a
  // second daemon sharing it; here the owner is this test process).
  const std::string live_id =
      std::string(oci::kContainerIdPrefix) + os::OwnerTag() + "-1122334455667788";
  const std::string live_bundle = runtime_->bundles_dir() + "/" + live_id;
  ASSERT_TRUE(std::filesystem::create_directories(live_bundle));
  const std::string live_cgroup = parent + "/" + live_id;
  ASSERT_EQ(mkdir(live_cgroup.c_str(), 0755), 0) << std::strerror(errno);
  auto live = os::Spawn(sleeper);
  ASSERT_TRUE(live.ok()) << live.error().ToString();
  std::ofstream(live_cgroup + "/cgroup.procs") << live->pid() << std::flush;

  auto provider = Make(0);
  Status reconciled = provider->Reconcile();
  EXPECT_TRUE(reconciled.ok()) << reconciled.error().ToString();
  EXPECT_FALSE(other->Exited()) << "Reconcile killed a process of another daemon's container";
  EXPECT_TRUE(std::filesystem::exists(cgroup));
  EXPECT_FALSE(live->Exited()) << "Reconcile killed a live owner's container";
  EXPECT_TRUE(std::filesystem::exists(live_bundle));
  live->KillAndReap();
  std::filesystem::remove_all(live_bundle);
  rmdir(live_cgroup.c_str());
  if (!other_bundle.empty()) {
    EXPECT_TRUE(std::filesystem::exists(other_bundle))
        << "Reconcile of " << RuntimeName(kind_) << " removed a bundle of "
        << RuntimeName(other_kind);
    std::filesystem::remove_all(other_bundle);
  }
  other->KillAndReap();
  rmdir(cgroup.c_str());
  if (made_parent) rmdir(parent.c_str());
}

// Issue 13: the image a result names is the image the code ran in. Bundles
// name a bind of the tree the configuration holds, so a tree swapped in
// under the image's path is not run before its own smoke test, and never
// under the old identity (before, the next container started from the new
// tree and the result named the old identity).
TEST_P(OciProviderTest, ASwappedImageTreeRunsOnlyUnderItsOwnIdentityAfterItsSmokeTest) {
  auto real = image::LocateDefaultImage();
  ASSERT_TRUE(real.ok()) << real.error().ToString();
  std::filesystem::path parent =
      real->directory.parent_path() /
      ("swap-test-oci-" + RuntimeName(kind_) + "-" + std::to_string(getpid()));
  auto image = image::testing::SwappableImage::Make(*real, parent);
  ASSERT_TRUE(image.has_value());
  std::string old_image;
  if (const char* set = std::getenv("PLIMSOLL_IMAGE")) old_image = set;
  setenv("PLIMSOLL_IMAGE", image->directory().c_str(), 1);
  Request marker;
  marker.python = PythonPayload{"print(open('/etc/plimsoll-tree').read().strip())"};
  marker.timeout_ms = 30'000;
  {
    auto provider = Make(0);
    MustSmokeTest(*provider);
    Result before = MustRun(*provider, marker);
    EXPECT_EQ(before.stdout_bytes, "A\n") << before.stderr_bytes;
    EXPECT_EQ(before.environment, image->identity("A"));

    ASSERT_TRUE(image->SwapIn("B"));
    EXPECT_TRUE(provider->Preflight().ok());  // checks, installs nothing
    Result held = MustRun(*provider, marker);
    EXPECT_EQ(held.stdout_bytes, "A\n") << held.stderr_bytes;
    EXPECT_EQ(held.environment, image->identity("A"));
    // A request for B before B's smoke test is refused: nothing runs.
    Request wants_b = marker;
    wants_b.environment = image->identity("B");
    auto refused = RunRequest(*provider, wants_b);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(NotDispatchedReason(refused.error()), NotDispatched::kEnvironment);

    MustSmokeTest(*provider);
    Result after = MustRun(*provider, wants_b);
    EXPECT_EQ(after.stdout_bytes, "B\n") << after.stderr_bytes;
    EXPECT_EQ(after.environment, image->identity("B"));
  }
  if (old_image.empty()) {
    unsetenv("PLIMSOLL_IMAGE");
  } else {
    setenv("PLIMSOLL_IMAGE", old_image.c_str(), 1);
  }
  std::error_code ignored;
  std::filesystem::remove_all(parent, ignored);
  EXPECT_EQ(Left(10s), "");
}

// This process's image binds (os/held_bind.h: named by the owner tag).
std::vector<std::string> OwnImageBinds() {
  std::vector<std::string> found;
  std::error_code error;
  const std::string tag = os::OwnerTag() + "-";
  for (const auto& entry : std::filesystem::directory_iterator(os::kImageBindsDirectory, error)) {
    std::string name = entry.path().filename().string();
    if (name.rfind(tag, 0) == 0) found.push_back(name);
  }
  return found;
}

// A full pool across a promotion: the idle containers made under A are
// destroyed when B is served (no run takes one), the pool refills under B,
// and A's bind goes with its generation once nothing of A is left.
TEST_P(OciProviderTest, APromotionFlushesThePoolAndReleasesTheOldGeneration) {
  auto real = image::LocateDefaultImage();
  ASSERT_TRUE(real.ok()) << real.error().ToString();
  std::filesystem::path parent =
      real->directory.parent_path() /
      ("pool-swap-test-oci-" + RuntimeName(kind_) + "-" + std::to_string(getpid()));
  auto image = image::testing::SwappableImage::Make(*real, parent);
  ASSERT_TRUE(image.has_value());
  Request marker;
  marker.python = PythonPayload{"print(open('/etc/plimsoll-tree').read().strip())"};
  marker.timeout_ms = 30'000;
  {
    testing::ScopedEnv variable("PLIMSOLL_IMAGE", image->directory().string());
    auto provider = Make(1);
    MustSmokeTest(*provider);
    std::string detail;
    ASSERT_TRUE(WaitForPool(
        *provider, 60s, [](const PoolCounts& c) { return c.ready == 1; }, &detail))
        << detail;
    EXPECT_EQ(OwnImageBinds().size(), 1u);

    ASSERT_TRUE(image->SwapIn("B"));
    MustSmokeTest(*provider);  // B is served from here on
    Result after = MustRun(*provider, marker);
    EXPECT_EQ(after.stdout_bytes, "B\n") << "a container of A's pool ran: " << after.stderr_bytes;
    EXPECT_EQ(after.environment, image->identity("B"));
    ASSERT_TRUE(WaitForPool(
        *provider, 60s, [](const PoolCounts& c) { return c.ready == 1; }, &detail))
        << detail;
    Result pooled = MustRun(*provider, marker);
    EXPECT_EQ(pooled.stdout_bytes, "B\n") << pooled.stderr_bytes;
    // A's generation is released: only B's bind is left.
    auto give_up = TestClock::now() + 15s;
    while (OwnImageBinds().size() > 1 && TestClock::now() < give_up) {
      std::this_thread::sleep_for(50ms);
    }
    EXPECT_EQ(OwnImageBinds().size(), 1u) << "the retired generation's bind is still held";
  }
  EXPECT_TRUE(OwnImageBinds().empty()) << "the provider's last bind outlived it";
  std::error_code ignored;
  std::filesystem::remove_all(parent, ignored);
  EXPECT_EQ(Left(15s), "");
}

INSTANTIATE_TEST_SUITE_P(Runtimes, OciProviderTest,
                         ::testing::Values(RuntimeKind::kRunc, RuntimeKind::kCrun,
                                           RuntimeKind::kRunsc),
                         ParamName);

}  // namespace
}  // namespace plimsoll
