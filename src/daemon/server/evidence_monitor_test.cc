#include "daemon/server/evidence_monitor.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <sstream>
#include <vector>

namespace plimsoll::daemon {
namespace {

using std::chrono::milliseconds;

// A provider whose smoke test a test scripts: the tier it reports, or a
// failure. It claims `vm` so no tier is capped by the claim.
class ScriptedProvider final : public Provider {
 public:
  std::string_view name() const override { return "scripted"; }
  Description Describe() const override {
    Description description;
    description.provider = "scripted";
    description.tier = Tier::kVm;
    return description;
  }
  Status Reconcile() override { return Status::Ok(); }
  Status Preflight() override { return Status::Ok(); }
  Expected<Evidence> SmokeTest(Deadline /*deadline*/) override {
    std::lock_guard lock(mutex_);
    ++smoke_tests_;
    if (failure_) return Failure(ErrorCode::kInternal, *failure_);
    Evidence evidence;
    evidence.tier = tier_;
    evidence.summary = "scripted";
    evidence.checks = {{"scripted", true, "ok"}};
    return evidence;
  }
  Expected<Result> Run(const Request& /*request*/, Deadline /*deadline*/) override {
    return Failure(ErrorCode::kInternal, "not used");
  }

  void Report(Tier tier) {
    std::lock_guard lock(mutex_);
    tier_ = tier;
    failure_.reset();
  }
  void Fail(std::string detail) {
    std::lock_guard lock(mutex_);
    failure_ = std::move(detail);
  }
  int smoke_tests() {
    std::lock_guard lock(mutex_);
    return smoke_tests_;
  }

 private:
  std::mutex mutex_;
  Tier tier_ = Tier::kContainer;
  std::optional<std::string> failure_;
  int smoke_tests_ = 0;
};

class EvidenceMonitorTest : public ::testing::Test {
 protected:
  EvidenceMonitorTest() {
    auto provider = std::make_unique<ScriptedProvider>();
    provider_ = provider.get();
    sandbox_ = std::make_unique<Sandbox>(std::move(provider));
  }

  ScriptedProvider* provider_;
  std::unique_ptr<Sandbox> sandbox_;
  std::ostringstream log_text_;
  Log log_{log_text_};
};

TEST_F(EvidenceMonitorTest, StartTakesTheStartupEvidenceAsProven) {
  ASSERT_TRUE(sandbox_->CollectEvidence().ok());
  std::vector<std::optional<EvidenceCheckResult>> seen;
  EvidenceMonitor monitor(*sandbox_, log_, {.interval = milliseconds(0)},
                          [&](const EvidenceStatus& status, auto result) {
                            EXPECT_TRUE(status.confirmed);
                            seen.push_back(result);
                          });
  ASSERT_TRUE(monitor.Start().ok());
  EvidenceStatus status = monitor.status();
  EXPECT_EQ(status.startup_tier, Tier::kContainer);
  EXPECT_EQ(status.current_tier, Tier::kContainer);
  EXPECT_TRUE(status.confirmed);
  EXPECT_TRUE(status.last_confirmed.has_value());
  EXPECT_FALSE(status.last_result.has_value());
  EXPECT_EQ(status.checks, 0u);
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_FALSE(seen[0].has_value());
  EXPECT_EQ(provider_->smoke_tests(), 1);  // interval 0: no thread, no further checks
}

TEST_F(EvidenceMonitorTest, WithoutStartupEvidenceNothingIsConfirmed) {
  EvidenceMonitor monitor(*sandbox_, log_, {.interval = milliseconds(0)});
  ASSERT_TRUE(monitor.Start().ok());
  EXPECT_FALSE(monitor.status().confirmed);
  EXPECT_EQ(monitor.status().startup_tier, Tier::kUnknown);
  EXPECT_FALSE(monitor.status().lost_reason.empty());
}

TEST_F(EvidenceMonitorTest, ChecksAreClassifiedAndTransitionsLogged) {
  ASSERT_TRUE(sandbox_->CollectEvidence().ok());
  std::vector<EvidenceCheckResult> results;
  EvidenceMonitor monitor(*sandbox_, log_, {.interval = milliseconds(0)},
                          [&](const EvidenceStatus&, auto result) {
                            if (result) results.push_back(*result);
                          });
  ASSERT_TRUE(monitor.Start().ok());

  provider_->Report(Tier::kVm);  // above the startup tier: still confirmed
  EXPECT_EQ(monitor.CheckNow(), EvidenceCheckResult::kConfirmed);
  EXPECT_TRUE(monitor.status().confirmed);
  EXPECT_EQ(log_text_.str(), "");

  provider_->Report(Tier::kProcess);
  EXPECT_EQ(monitor.CheckNow(), EvidenceCheckResult::kLowered);
  EvidenceStatus lowered = monitor.status();
  EXPECT_FALSE(lowered.confirmed);
  EXPECT_EQ(lowered.current_tier, Tier::kProcess);
  EXPECT_NE(lowered.lost_reason.find("process"), std::string::npos);
  // The Sandbox keeps the lower evidence: floors are checked against it.
  EXPECT_EQ(sandbox_->evidence()->tier, Tier::kProcess);
  EXPECT_NE(log_text_.str().find("warning: The sandbox evidence is lost"), std::string::npos);

  provider_->Fail("the runtime binary vanished");
  EXPECT_EQ(monitor.CheckNow(), EvidenceCheckResult::kFailed);
  EvidenceStatus failed = monitor.status();
  EXPECT_FALSE(failed.confirmed);
  EXPECT_EQ(failed.current_tier, Tier::kUnknown);
  EXPECT_NE(failed.lost_reason.find("the runtime binary vanished"), std::string::npos);
  EXPECT_FALSE(sandbox_->evidence()->AllChecksPassed());  // withdrawn
  EXPECT_NE(log_text_.str().find("still lost"), std::string::npos);

  provider_->Report(Tier::kContainer);
  EXPECT_EQ(monitor.CheckNow(), EvidenceCheckResult::kConfirmed);
  EvidenceStatus recovered = monitor.status();
  EXPECT_TRUE(recovered.confirmed);
  EXPECT_EQ(recovered.lost_reason, "");
  EXPECT_EQ(recovered.checks, 4u);
  EXPECT_EQ(recovered.last_result, EvidenceCheckResult::kConfirmed);
  EXPECT_NE(log_text_.str().find("info: The sandbox evidence recovered"), std::string::npos);

  EXPECT_EQ(results, (std::vector<EvidenceCheckResult>{
                         EvidenceCheckResult::kConfirmed, EvidenceCheckResult::kLowered,
                         EvidenceCheckResult::kFailed, EvidenceCheckResult::kConfirmed}));
}

TEST_F(EvidenceMonitorTest, TheThreadChecksEveryIntervalAndStopsPromptly) {
  ASSERT_TRUE(sandbox_->CollectEvidence().ok());
  std::mutex mutex;
  std::condition_variable checked;
  int checks = 0;
  EvidenceMonitor monitor(*sandbox_, log_, {.interval = milliseconds(5)},
                          [&](const EvidenceStatus&, auto result) {
                            if (!result) return;
                            std::lock_guard lock(mutex);
                            ++checks;
                            checked.notify_all();
                          });
  ASSERT_TRUE(monitor.Start().ok());
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(checked.wait_for(lock, std::chrono::seconds(30), [&] { return checks >= 3; }));
  }
  monitor.Stop();
  // Every background check went through the Sandbox (one smoke test each, plus
  // the startup one), and a check in progress at Stop() finished before it
  // returned.
  EvidenceStatus status = monitor.status();
  EXPECT_GE(status.checks, 3u);
  EXPECT_EQ(static_cast<int>(status.checks) + 1, provider_->smoke_tests());
}

TEST_F(EvidenceMonitorTest, StopWakesALongWaitAtOnce) {
  ASSERT_TRUE(sandbox_->CollectEvidence().ok());
  EvidenceMonitor monitor(*sandbox_, log_, {.interval = std::chrono::hours(1)});
  ASSERT_TRUE(monitor.Start().ok());
  auto before = std::chrono::steady_clock::now();
  monitor.Stop();
  // A condition variable, not a sleep: an hour-long interval does not delay it.
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::seconds(10));
  EXPECT_EQ(monitor.status().checks, 0u);
}

TEST(EvidenceCheckResultName, NamesEveryResult) {
  EXPECT_EQ(EvidenceCheckResultName(EvidenceCheckResult::kConfirmed), "confirmed");
  EXPECT_EQ(EvidenceCheckResultName(EvidenceCheckResult::kLowered), "lowered");
  EXPECT_EQ(EvidenceCheckResultName(EvidenceCheckResult::kFailed), "failed");
}

}  // namespace
}  // namespace plimsoll::daemon
