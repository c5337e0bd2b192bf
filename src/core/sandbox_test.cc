#include "plimsoll/sandbox.h"

#include <gtest/gtest.h>

#include <atomic>

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

  std::string_view name() const override { return "fake"; }
  Description Describe() const override {
    Description description;
    description.provider = "fake";
    description.tier = claimed;
    description.environment = environment;
    description.capabilities.payloads = {PayloadKind::kJavascript};
    return description;
  }
  Status Reconcile() override { return Status::Ok(); }
  Status Preflight() override { return Status::Ok(); }
  Expected<Evidence> SmokeTest(Deadline) override {
    ++smoke_tests;
    if (smoke_test_fails) return Failure(ErrorCode::kInternal, "wall did not build");
    Evidence evidence;
    evidence.tier = proven;
    evidence.checks.push_back({"root_read_only", !check_fails, "observed"});
    return evidence;
  }
  Expected<Result> Run(const Request& request, Deadline) override {
    ++runs;
    last_timeout_ms = request.timeout_ms;
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

}  // namespace
}  // namespace plimsoll
