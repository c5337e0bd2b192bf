#include "plimsoll/sandbox.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "base/javascript_globals.h"
#include "core/module_project.h"
#include "plimsoll/record.h"

namespace plimsoll {
namespace {

// A provider whose claims and evidence a test controls, and which counts runs.
class FakeProvider final : public Provider {
 public:
  Tier claimed = Tier::kContainer;
  Tier proven = Tier::kContainer;
  bool smoke_test_fails = false;
  bool check_fails = false;
  Tier reported = Tier::kContainer;  // what Run puts on the result
  std::string environment = "sha256:" + std::string(64, 'e');
  std::atomic<int> runs{0};
  std::atomic<int> smoke_tests{0};
  int64_t last_timeout_ms = 0;
  std::string last_environment;  // the dispatched request's `environment`
  Request last_request;          // the request as dispatched
  // What the next evidence says its environment is ("": the description's).
  std::string evidence_environment;
  // Called inside SmokeTest with the call's number (from 1), e.g. to hold
  // it until a test lets it go; `check_fails` is read after it returns.
  std::function<void(int)> during_smoke_test;
  std::atomic<int> smoke_tests_now{0};
  std::atomic<int> most_smoke_tests_at_once{0};

  bool serves_grants = false;
  std::atomic<int> granted_runs{0};

  std::string_view name() const override { return "fake"; }
  Description Describe() const override {
    Description description;
    description.provider = "fake";
    description.tier = claimed;
    description.environment = environment;
    description.capabilities.payloads = {PayloadKind::kJavascript};
    description.capabilities.grants = serves_grants;
    return description;
  }
  // A granted run makes one call through `calls`, as a guest would.
  Expected<Result> RunGranted(const Request& request, Deadline deadline,
                              GrantedCalls& calls) override {
    ++granted_runs;
    calls.Call("GET", "/items/1", "", "", deadline);
    return Run(request, deadline);
  }
  Status Reconcile() override { return Status::Ok(); }
  Status Preflight() override { return Status::Ok(); }
  Expected<Evidence> SmokeTest(Deadline) override {
    int call = ++smoke_tests;
    int now = ++smoke_tests_now;
    for (int most = most_smoke_tests_at_once; now > most;) {
      most_smoke_tests_at_once.compare_exchange_weak(most, now);
    }
    if (during_smoke_test) during_smoke_test(call);
    --smoke_tests_now;
    if (smoke_test_fails) return Failure(ErrorCode::kInternal, "wall did not build");
    Evidence evidence;
    evidence.tier = proven;
    evidence.environment = evidence_environment;
    evidence.checks.push_back({"root_read_only", !check_fails, "observed"});
    return evidence;
  }
  Expected<Result> Run(const Request& request, Deadline) override {
    ++runs;
    last_timeout_ms = request.timeout_ms;
    last_environment = request.environment;
    last_request = request;
    Result result;
    result.isolation = reported;
    result.exit_code = 3;
    result.stdout_bytes = "out";
    return result;
  }
};

struct Fixture {
  FakeProvider* fake;
  Sandbox sandbox;
};

Fixture Make() {
  auto provider = std::make_unique<FakeProvider>();
  FakeProvider* fake = provider.get();
  return Fixture{fake, Sandbox(std::move(provider))};
}

Request Snippet(std::string floor = "") {
  Request request;
  request.minimum_isolation = std::move(floor);
  request.javascript = JavascriptPayload{"console.log(6*7)"};
  return request;
}

TEST(SandboxTest, RunsAndBindsTheResultToTheRequest) {
  auto [fake, sandbox] = Make();
  Request request = Snippet("container");
  auto result = sandbox.Run(request);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(fake->runs, 1);
  EXPECT_EQ(fake->last_timeout_ms, Limits{}.snippet_timeout_default_ms);
  EXPECT_EQ(result->provider, "fake");
  EXPECT_EQ(result->isolation, Tier::kContainer);
  EXPECT_EQ(result->environment, fake->environment);
  EXPECT_EQ(result->exit_code, 3);  // a non-zero exit is a result, not an error

  const Record& record = result->record;
  // The request digest covers the request as the client sent it (timeout 0).
  EXPECT_EQ(record.request_sha256, RequestDigest(request));
  EXPECT_EQ(record.result_sha256, ResultDigest(*result));
  EXPECT_EQ(record.record_sha256, RecordDigest(record));
  EXPECT_EQ(record.provider, "fake");
  EXPECT_EQ(record.isolation, Tier::kContainer);
  EXPECT_LE(record.started_unix_ms, record.ended_unix_ms);
  EXPECT_TRUE(CheckExchange(request, *result).ok());
}

TEST(SandboxTest, AModuleRunIsDispatchedAsItsProjectAndRecordedAsTheModuleSent) {
  auto [fake, sandbox] = Make();
  Request request;
  request.module = ModulePayload{"cartpole", {{0, 0, 0.05, 0}, {}}, 5, 0.01};
  auto result = sandbox.Run(request);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_FALSE(fake->last_request.module);
  ASSERT_TRUE(fake->last_request.project);
  EXPECT_EQ(*fake->last_request.project, ModuleProject(*request.module));
  // A project's timeouts; the result keeps the kind sent and the record its digest.
  EXPECT_EQ(fake->last_timeout_ms, Limits{}.project_timeout_default_ms);
  EXPECT_EQ(result->kind, PayloadKind::kModule);
  EXPECT_EQ(result->record.request_sha256, RequestDigest(request));
}

TEST(SandboxTest, DescribeListsTheJavascriptGlobalsOfAProviderThatRunsJavascriptOnly) {
  auto [fake, sandbox] = Make();  // runs JavaScript
  auto listed = [](const Description& description) -> std::optional<std::string> {
    for (const auto& [key, value] : description.details) {
      if (key == "javascript_globals") return value;
    }
    return std::nullopt;
  };
  EXPECT_EQ(listed(sandbox.Describe()), base::JavascriptGlobalsList());
  EXPECT_EQ(base::JavascriptGlobalsList().rfind("console, setTimeout, ", 0), 0u);
  auto disabled = Sandbox::Open("disabled");  // runs nothing
  ASSERT_TRUE(disabled.ok());
  EXPECT_EQ(listed(disabled->Describe()), std::nullopt);
}

// A grant that counts its calls and reports them as the broker's RunGrant does.
class CountingGrant final : public GrantedCalls {
 public:
  HostCallAnswer Call(std::string_view method, std::string_view path, std::string_view,
                      std::string_view, std::chrono::steady_clock::time_point) override {
    ++calls;
    EXPECT_EQ(method, "GET");
    EXPECT_EQ(path, "/items/1");
    return HostCallAnswer{.status = 200};
  }
  BrokerSummary Summary() const override {
    return BrokerSummary{.profile = "crm-read",
                         .calls = calls,
                         .denied = 0,
                         .routes = {{"GET", "/items/*", 200, true, "", calls}}};
  }
  std::vector<::plimsoll::Advice> Advice() const override {
    return {{"repeated_read", "GET /items/*", "twice", 1, 0.5, 10}};
  }
  int64_t calls = 0;
};

// Without a grant the library refuses a named profile as the daemon does,
// before evidence, and nothing runs without the grant it asked for.
TEST(SandboxTest, AGrantProfileNoneServesIsRefusedPermissionAndNothingRuns) {
  auto [fake, sandbox] = Make();
  Request request = Snippet();
  request.grant_profile = "crm-read";
  auto result = sandbox.Run(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kPermissionDenied);
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kPermission);
  EXPECT_EQ(fake->runs, 0);
  EXPECT_EQ(fake->smoke_tests, 0);
}

TEST(SandboxTest, AProviderWithoutGrantsRefusesAGrantedRunUnsupported) {
  auto [fake, sandbox] = Make();
  CountingGrant grant;
  Request request = Snippet();
  request.grant_profile = "crm-read";
  auto result = sandbox.Run(request, &grant);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kUnsupported);
  EXPECT_EQ(fake->runs, 0);
  EXPECT_EQ(grant.calls, 0);
}

TEST(SandboxTest, AGrantedRunCarriesTheTraceAndAdviceUnderItsRecord) {
  auto [fake, sandbox] = Make();
  fake->serves_grants = true;
  CountingGrant grant;
  Request request = Snippet();
  request.grant_profile = "crm-read";
  auto result = sandbox.Run(request, &grant);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(fake->granted_runs, 1);
  ASSERT_TRUE(result->broker.has_value());
  EXPECT_EQ(result->broker->calls, 1);
  ASSERT_EQ(result->broker->routes.size(), 1u);
  ASSERT_EQ(result->advice.size(), 1u);
  EXPECT_EQ(result->record.result_sha256, ResultDigest(*result));
  EXPECT_TRUE(CheckExchange(request, *result).ok());

  // A grant handed in for a request that names no profile is not used.
  Request plain = Snippet();
  auto ungranted = sandbox.Run(plain, &grant);
  ASSERT_TRUE(ungranted.ok());
  EXPECT_FALSE(ungranted->broker.has_value());
  EXPECT_EQ(fake->granted_runs, 1);
  EXPECT_EQ(grant.calls, 1);
}

TEST(SandboxTest, OnlyTheImageTheSandboxServesRunsAnyOtherIsRefusedRequest) {
  auto [fake, sandbox] = Make();
  Request request = Snippet();
  request.image = "data";
  auto unnamed = sandbox.Run(request);
  ASSERT_FALSE(unnamed.ok());
  EXPECT_EQ(NotDispatchedReason(unnamed.error()), NotDispatched::kRequest);
  EXPECT_NE(unnamed.error().message().find("one unnamed image"), std::string::npos);

  sandbox.NameImage("base");
  EXPECT_EQ(sandbox.Describe().image, "base");
  auto other = sandbox.Run(request);
  ASSERT_FALSE(other.ok());
  EXPECT_EQ(NotDispatchedReason(other.error()), NotDispatched::kRequest);
  EXPECT_NE(other.error().message().find("serves \"base\""), std::string::npos);
  request.image = "Bad_Name";
  EXPECT_EQ(NotDispatchedReason(sandbox.Run(request).error()), NotDispatched::kRequest);
  EXPECT_EQ(fake->runs, 0);

  request.image = "base";
  auto named = sandbox.Run(request);
  ASSERT_TRUE(named.ok()) << named.error().ToString();
  // The record binds the name: the same request without it has another digest.
  Request unnamed_request = request;
  unnamed_request.image.clear();
  EXPECT_EQ(named->record.request_sha256, RequestDigest(request));
  EXPECT_NE(RequestDigest(request), RequestDigest(unnamed_request));
  EXPECT_TRUE(sandbox.Run(unnamed_request).ok()) << "no name: the sandbox's own image";
  EXPECT_EQ(fake->runs, 2);
}

TEST(SandboxTest, FloorAboveTheClaimIsRefusedBeforeAnyEvidence) {
  auto [fake, sandbox] = Make();
  auto result = sandbox.Run(Snippet("vm"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kIsolation);
  EXPECT_EQ(fake->runs, 0);
  EXPECT_EQ(fake->smoke_tests, 0);
}

TEST(SandboxTest, FloorAboveTheEvidenceIsRefused) {
  auto [fake, sandbox] = Make();
  fake->claimed = Tier::kVm;
  fake->proven = Tier::kKernel;  // e.g. a VMM that fell back to emulation
  auto result = sandbox.Run(Snippet("vm"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kIsolation);
  EXPECT_NE(result.error().message().find("evidence is kernel"), std::string::npos);
  EXPECT_EQ(fake->runs, 0);
}

TEST(SandboxTest, EvidenceIsNeverAboveTheClaim) {
  auto [fake, sandbox] = Make();
  fake->claimed = Tier::kContainer;
  fake->proven = Tier::kVm;
  auto evidence = sandbox.CollectEvidence();
  ASSERT_TRUE(evidence.ok());
  EXPECT_EQ(evidence->tier, Tier::kContainer);
}

TEST(SandboxTest, AResultIsNeverReportedAboveTheEvidence) {
  auto [fake, sandbox] = Make();
  fake->claimed = Tier::kVm;
  fake->proven = Tier::kKernel;
  fake->reported = Tier::kVm;
  auto result = sandbox.Run(Snippet());
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->isolation, Tier::kKernel);
  EXPECT_EQ(result->record.isolation, Tier::kKernel);
}

TEST(SandboxTest, ARunTheProviderCouldNotPlaceStaysUnknown) {
  // Tier unknown (or unset, or none) on a result is never raised to the
  // evidence's tier: it stays unknown, in the result and in its record.
  for (Tier reported : {Tier::kUnknown, Tier::kNone}) {
    auto [fake, sandbox] = Make();
    fake->reported = reported;
    auto result = sandbox.Run(Snippet());
    ASSERT_TRUE(result.ok()) << result.error().ToString();
    EXPECT_EQ(result->isolation, Tier::kUnknown) << TierName(reported);
    EXPECT_EQ(result->record.isolation, Tier::kUnknown) << TierName(reported);
  }
}

TEST(SandboxTest, TheTierReportedIsTheLesserOfTheRunsAndTheEvidences) {
  auto [fake, sandbox] = Make();
  fake->claimed = Tier::kKernel;
  fake->proven = Tier::kKernel;
  fake->reported = Tier::kContainer;
  auto result = sandbox.Run(Snippet());
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(result->isolation, Tier::kContainer);
}

TEST(SandboxTest, ARunBelowTheFloorAfterItRanIsAnUnmarkedError) {
  // The evidence met the floor, so the run was dispatched; the provider then
  // could not say what wall the run got. Code ran: the answer carries no
  // "nothing ran" mark, and no result below the floor is handed back.
  for (Tier reported : {Tier::kUnknown, Tier::kProcess}) {
    auto [fake, sandbox] = Make();
    fake->reported = reported;
    auto result = sandbox.Run(Snippet("container"));
    ASSERT_FALSE(result.ok()) << TierName(reported);
    EXPECT_EQ(fake->runs, 1);
    EXPECT_EQ(NotDispatchedReason(result.error()), std::nullopt);
    EXPECT_NE(result.error().message().find("below the request's floor container"),
              std::string::npos)
        << result.error().message();
  }
}

TEST(SandboxTest, AnUnconfirmedSandboxIsAnEnvironmentRefusal) {
  auto [fake, sandbox] = Make();
  fake->smoke_test_fails = true;
  auto result = sandbox.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kEnvironment);
  EXPECT_EQ(fake->runs, 0);

  auto [fake2, sandbox2] = Make();
  fake2->check_fails = true;
  result = sandbox2.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kEnvironment);
  EXPECT_NE(result.error().message().find("root_read_only (observed)"), std::string::npos)
      << result.error().message();
  // What was observed stays visible, proving no tier; the next run checks again.
  ASSERT_TRUE(sandbox2.evidence().has_value());
  EXPECT_EQ(sandbox2.evidence()->tier, Tier::kUnknown);
  result = sandbox2.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(fake2->smoke_tests, 2);
  EXPECT_EQ(fake2->runs, 0);
  fake2->check_fails = false;
  EXPECT_TRUE(sandbox2.Run(Snippet()).ok());
}

TEST(SandboxTest, AFailedRecheckWithdrawsEarlierEvidence) {
  auto [fake, sandbox] = Make();
  ASSERT_TRUE(sandbox.Run(Snippet()).ok());
  fake->smoke_test_fails = true;
  EXPECT_FALSE(sandbox.CollectEvidence().ok());  // e.g. a background re-check
  ASSERT_TRUE(sandbox.evidence().has_value());
  EXPECT_EQ(sandbox.evidence()->tier, Tier::kUnknown);
  auto result = sandbox.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kEnvironment);
  EXPECT_EQ(fake->runs, 1);
}

TEST(SandboxTest, AnotherEnvironmentIsRefused) {
  auto [fake, sandbox] = Make();
  Request request = Snippet();
  request.environment = "sha256:" + std::string(64, 'f');
  auto result = sandbox.Run(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kEnvironment);
  request.environment = fake->environment;
  EXPECT_TRUE(sandbox.Run(request).ok());
}

TEST(SandboxTest, InvalidRequestsNeverReachTheProvider) {
  auto [fake, sandbox] = Make();
  Request request = Snippet();
  request.python = PythonPayload{"print(1)"};
  auto result = sandbox.Run(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kRequest);
  EXPECT_EQ(fake->runs, 0);
  EXPECT_EQ(fake->smoke_tests, 0);
}

TEST(SandboxTest, EvidenceIsCollectedOnce) {
  auto [fake, sandbox] = Make();
  ASSERT_TRUE(sandbox.Run(Snippet()).ok());
  ASSERT_TRUE(sandbox.Run(Snippet()).ok());
  EXPECT_EQ(fake->smoke_tests, 1);
  EXPECT_EQ(fake->runs, 2);
}

TEST(SandboxTest, DisabledRefusesAsUnsupportedAndIsolation) {
  auto sandbox = Sandbox::Open("disabled");
  ASSERT_TRUE(sandbox.ok());
  EXPECT_EQ(sandbox->Describe().tier, Tier::kNone);
  auto result = sandbox->Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kUnsupported);
  EXPECT_NE(result.error().message().find("--provider embedded"), std::string::npos);

  result = sandbox->Run(Snippet("vm"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kIsolation);
}

TEST(SandboxTest, UnknownProviderNamesListTheValidOnes) {
  auto sandbox = Sandbox::Open("docker");
  ASSERT_FALSE(sandbox.ok());
  EXPECT_NE(sandbox.error().message().find("Unknown provider \"docker\""), std::string::npos);
  EXPECT_NE(sandbox.error().message().find("disabled"), std::string::npos);
}

// A gate a test opens once: smoke tests wait at it.
class Gate {
 public:
  void Open() {
    {
      std::lock_guard lock(mutex_);
      open_ = true;
    }
    changed_.notify_all();
  }
  void Wait() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [this] { return open_; });
  }
  // Counts arrivals, so a test can wait until a smoke test is inside.
  void Arrive() {
    {
      std::lock_guard lock(mutex_);
      ++arrived_;
    }
    changed_.notify_all();
  }
  void WaitForArrivals(int count) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return arrived_ >= count; });
  }
  // The same, bounded: whether `count` arrived within `bound`.
  bool WaitForArrivalsFor(int count, std::chrono::milliseconds bound) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, bound, [&] { return arrived_ >= count; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool open_ = false;
  int arrived_ = 0;
};

// Issue 13: evidence collections are ordered, so a slow older check cannot
// overwrite a newer failure (before, the last writer won).
TEST(SandboxTest, CollectionsRunOneAtATimeAndTheNewestAnswerIsKept) {
  // Named members, not a structured binding: the threads below capture them.
  Fixture made = Make();
  FakeProvider* fake = made.fake;
  Sandbox& sandbox = made.sandbox;
  Gate first_may_finish;
  fake->during_smoke_test = [&, fake = fake](int call) {
    first_may_finish.Arrive();
    if (call == 1) {
      first_may_finish.Wait();  // the older check is slow and passes
    } else {
      fake->check_fails = true;  // the newer one sees the wall fail
    }
  };
  std::thread older([&] { EXPECT_TRUE(sandbox.CollectEvidence().ok()); });
  first_may_finish.WaitForArrivals(1);
  std::thread newer([&] { EXPECT_FALSE(sandbox.CollectEvidence().ok()); });
  // The newer collection waits for the older one instead of racing it: it
  // must not reach the provider while the older one is inside (an unordered
  // Sandbox lets it in at once; give it that chance).
  EXPECT_FALSE(first_may_finish.WaitForArrivalsFor(2, std::chrono::milliseconds(300)));
  first_may_finish.Open();
  older.join();
  newer.join();
  EXPECT_EQ(fake->smoke_tests, 2);
  EXPECT_EQ(fake->most_smoke_tests_at_once, 1);
  ASSERT_TRUE(sandbox.evidence().has_value());
  EXPECT_FALSE(sandbox.evidence()->AllChecksPassed());
  EXPECT_EQ(sandbox.evidence()->tier, Tier::kUnknown);
  auto result = sandbox.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kEnvironment);
  EXPECT_EQ(fake->runs, 0);
}

TEST(SandboxTest, ARunThatFindsACollectionUnderWayTakesItsAnswer) {
  // Named members, not a structured binding: the threads below capture them.
  Fixture made = Make();
  FakeProvider* fake = made.fake;
  Sandbox& sandbox = made.sandbox;
  fake->check_fails = true;
  EXPECT_FALSE(sandbox.CollectEvidence().ok());  // nothing confirmed
  Gate recheck_may_finish;
  fake->during_smoke_test = [&, fake = fake](int call) {
    if (call != 2) return;
    fake->check_fails = false;  // the wall recovered
    recheck_may_finish.Arrive();
    recheck_may_finish.Wait();
  };
  std::thread recheck([&] { EXPECT_TRUE(sandbox.CollectEvidence().ok()); });
  recheck_may_finish.WaitForArrivals(1);
  std::thread run([&] {
    auto result = sandbox.Run(Snippet());
    EXPECT_TRUE(result.ok()) << result.error().ToString();
  });
  recheck_may_finish.Open();
  recheck.join();
  run.join();
  EXPECT_EQ(fake->smoke_tests, 2);  // the run did not start a third
  EXPECT_EQ(fake->runs, 1);
}

// Issue 13: the pin is re-checked whenever the configuration changes.
TEST(SandboxTest, ThePinIsRecheckedAtEveryCollection) {
  auto [fake, sandbox] = Make();
  const std::string first = fake->environment;
  sandbox.PinEnvironment(first);
  ASSERT_TRUE(sandbox.CollectEvidence().ok());
  ASSERT_TRUE(sandbox.Run(Snippet()).ok());
  EXPECT_EQ(fake->last_environment, first);  // dispatched requiring the pin

  // The provider's next configuration is another image.
  fake->evidence_environment = "sha256:" + std::string(64, 'b');
  auto evidence = sandbox.CollectEvidence();
  ASSERT_FALSE(evidence.ok());
  EXPECT_EQ(NotDispatchedReason(evidence.error()), NotDispatched::kEnvironment);
  EXPECT_NE(evidence.error().message().find("environment_pin"), std::string::npos)
      << evidence.error().message();
  auto result = sandbox.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kEnvironment);
  EXPECT_EQ(fake->runs, 1);

  // Back to the pinned image: confirmed again.
  fake->evidence_environment = first;
  EXPECT_TRUE(sandbox.Run(Snippet()).ok());
  EXPECT_EQ(fake->runs, 2);
}

TEST(SandboxTest, APinnedSandboxRefusesARequestForAnotherEnvironment) {
  auto [fake, sandbox] = Make();
  sandbox.PinEnvironment(fake->environment);
  Request request = Snippet();
  request.environment = "sha256:" + std::string(64, 'c');
  auto result = sandbox.Run(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kEnvironment);
  EXPECT_EQ(fake->runs, 0);
}

// Runs are checked against the environment of the configuration the
// evidence was collected with, not against an older description.
TEST(SandboxTest, TheEvidencesEnvironmentIsTheOneRunsAreCheckedAgainst) {
  auto [fake, sandbox] = Make();
  const std::string tested = "sha256:" + std::string(64, 'd');
  fake->evidence_environment = tested;
  ASSERT_TRUE(sandbox.CollectEvidence().ok());
  Request request = Snippet();
  request.environment = fake->environment;  // the description's, not the tested one
  auto refused = sandbox.Run(request);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(NotDispatchedReason(refused.error()), NotDispatched::kEnvironment);
  request.environment = tested;
  auto result = sandbox.Run(request);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(result->environment, tested);
}

}  // namespace
}  // namespace plimsoll
