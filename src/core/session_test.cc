// Sessions through the public API: a provider session a test controls (for
// the lifecycle: one call at a time, limits, end reasons, chained records),
// and the embedded provider's real kept interpreter.
#include "plimsoll/session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "plimsoll/record.h"
#include "plimsoll/sandbox.h"

namespace plimsoll {
namespace {

using namespace std::chrono_literals;

// What the controllable provider session is told and what it saw.
struct Control {
  std::mutex mutex;
  std::condition_variable changed;
  bool hold_runs = false;  // Run waits until released
  int running = 0;
  int runs = 0;
  bool boundary_fails = false;
  int64_t disk_used = 0;
  Tier session_tier = Tier::kContainer;
  bool destroyed = false;
};

class ControlledSession final : public ProviderSession {
 public:
  explicit ControlledSession(std::shared_ptr<Control> control) : control_(std::move(control)) {}
  ~ControlledSession() override {
    std::lock_guard lock(control_->mutex);
    control_->destroyed = true;
  }
  Tier tier() const override { return control_->session_tier; }
  std::string environment() const override { return "sha256:" + std::string(64, 'c'); }
  Status CheckBoundary() override {
    std::lock_guard lock(control_->mutex);
    if (control_->boundary_fails) return Failure(ErrorCode::kInternal, "the init is gone");
    return Status::Ok();
  }
  int64_t DiskUsedBytes() override {
    std::lock_guard lock(control_->mutex);
    return control_->disk_used;
  }
  std::vector<std::string> InterpretersAlive() override { return {"python"}; }
  Expected<Result> Run(const Request& request, Deadline) override {
    std::unique_lock lock(control_->mutex);
    ++control_->running;
    ++control_->runs;
    control_->changed.notify_all();
    control_->changed.wait(lock, [this] { return !control_->hold_runs; });
    --control_->running;
    Result result;
    result.isolation = Tier::kContainer;
    result.stdout_bytes = "call " + std::to_string(control_->runs);
    if (request.cell) result.cell = CellResult{"1", false, control_->runs == 1, true};
    return result;
  }

 private:
  std::shared_ptr<Control> control_;
};

class SessionProvider final : public Provider {
 public:
  explicit SessionProvider(std::shared_ptr<Control> control) : control_(std::move(control)) {}
  std::string_view name() const override { return "fake"; }
  Description Describe() const override {
    Description description;
    description.provider = "fake";
    description.tier = Tier::kContainer;
    description.environment = "sha256:" + std::string(64, 'c');
    description.capabilities.payloads = {PayloadKind::kJavascript, PayloadKind::kPython};
    description.capabilities.sessions = true;
    return description;
  }
  Status Reconcile() override { return Status::Ok(); }
  Status Preflight() override { return Status::Ok(); }
  Expected<Evidence> SmokeTest(Deadline) override {
    Evidence evidence;
    evidence.tier = Tier::kContainer;
    evidence.checks.push_back({"root_read_only", true, "observed"});
    return evidence;
  }
  Expected<Result> Run(const Request&, Deadline) override {
    return Failure(ErrorCode::kInternal, "one-shot runs are not this test's");
  }
  Expected<std::unique_ptr<ProviderSession>> OpenSession(const SessionSpec&, Deadline) override {
    return std::unique_ptr<ProviderSession>(std::make_unique<ControlledSession>(control_));
  }

 private:
  std::shared_ptr<Control> control_;
};

Request Cell(std::string language, std::string code) {
  Request request;
  request.cell = CellPayload{std::move(language), std::move(code)};
  return request;
}

class SessionTest : public ::testing::Test {
 protected:
  SessionTest()
      : control_(std::make_shared<Control>()),
        sandbox_(std::make_unique<SessionProvider>(control_)) {}

  std::unique_ptr<Session> Open(SessionOptions options = {}) {
    auto session = sandbox_.OpenSession(options);
    EXPECT_TRUE(session.ok()) << session.error().ToString();
    return session.ok() ? std::move(*session) : nullptr;
  }

  std::shared_ptr<Control> control_;
  Sandbox sandbox_;
};

TEST_F(SessionTest, TheIdIs128RandomBitsInHex) {
  auto first = Open();
  auto second = Open();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->id().size(), 32u);
  EXPECT_EQ(first->id().find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_NE(first->id(), second->id());
}

TEST_F(SessionTest, RecordsAreChainedFromOne) {
  auto session = Open();
  ASSERT_TRUE(session);
  ChainState chain;
  std::string previous;
  for (int call = 1; call <= 3; ++call) {
    Request request = Cell("python", "x = " + std::to_string(call));
    auto result = session->Run(request);
    ASSERT_TRUE(result.ok()) << result.error().ToString();
    ASSERT_TRUE(result->record.session.has_value());
    EXPECT_EQ(result->record.session->session_sha256, SessionIdDigest(session->id()));
    EXPECT_EQ(result->record.session->sequence, call);
    EXPECT_EQ(result->record.session->previous_sha256, previous);
    EXPECT_TRUE(CheckExchange(request, *result, &chain).ok()) << call;
    previous = result->record.record_sha256;
  }
  SessionClose closed = session->Close();
  EXPECT_EQ(closed.ended, SessionEndReason::kClosed);
  EXPECT_EQ(closed.calls, 3);
  EXPECT_EQ(closed.last_record_sha256, previous);
  EXPECT_TRUE(control_->destroyed);
}

TEST_F(SessionTest, ACallOnAClosedSessionIsRefusedAndNothingRuns) {
  auto session = Open();
  ASSERT_TRUE(session);
  session->Close();
  auto result = session->Run(Cell("python", "1"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kNotFound);
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kRequest);
  EXPECT_NE(result.error().message().find("closed"), std::string::npos);
  EXPECT_EQ(control_->runs, 0);
  // The first end wins.
  EXPECT_EQ(session->End(SessionEndReason::kShutdown).ended, SessionEndReason::kClosed);
}

TEST_F(SessionTest, ACellNamingAGrantProfileIsRefusedPermissionAndNothingRuns) {
  auto session = Open();
  ASSERT_TRUE(session);
  Request cell = Cell("python", "1");
  cell.grant_profile = "crm-read";
  auto result = session->Run(cell);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kPermission);
  EXPECT_EQ(control_->runs, 0);
  EXPECT_EQ(session->Info().calls, 0);
}

TEST_F(SessionTest, ASessionKeepsItsImageACallNamingAnotherIsRefusedRequest) {
  sandbox_.NameImage("data");
  SessionOptions other;
  other.image = "base";
  EXPECT_EQ(NotDispatchedReason(sandbox_.OpenSession(other).error()), NotDispatched::kRequest);
  SessionOptions malformed;
  malformed.image = "-data";
  EXPECT_EQ(NotDispatchedReason(sandbox_.OpenSession(malformed).error()), NotDispatched::kRequest);
  EXPECT_FALSE(control_->destroyed) << "no sandbox was made";

  auto session = Open();
  ASSERT_TRUE(session);
  EXPECT_EQ(session->Info().image, "data");
  Request cell = Cell("python", "1");
  cell.image = "base";
  auto refused = session->Run(cell);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(NotDispatchedReason(refused.error()), NotDispatched::kRequest);
  EXPECT_EQ(control_->runs, 0);
  cell.image = "data";
  EXPECT_TRUE(session->Run(cell).ok());
  EXPECT_EQ(control_->runs, 1);
}

TEST_F(SessionTest, OneCallRunsOneWaitsAndAThirdIsRefusedCapacity) {
  auto session = Open();
  ASSERT_TRUE(session);
  {
    std::lock_guard lock(control_->mutex);
    control_->hold_runs = true;
  }
  std::thread first([&] { EXPECT_TRUE(session->Run(Cell("python", "1")).ok()); });
  {
    std::unique_lock lock(control_->mutex);
    ASSERT_TRUE(control_->changed.wait_for(lock, 5s, [&] { return control_->running == 1; }));
  }
  std::atomic<bool> second_done{false};
  std::thread second([&] {
    EXPECT_TRUE(session->Run(Cell("python", "2")).ok());
    second_done = true;
  });
  for (int attempt = 0; attempt < 2500 && !session->Info().queued; ++attempt) {
    std::this_thread::sleep_for(2ms);
  }
  ASSERT_TRUE(session->Info().queued);
  auto third = session->Run(Cell("python", "3"));
  ASSERT_FALSE(third.ok());
  EXPECT_EQ(NotDispatchedReason(third.error()), NotDispatched::kCapacity);
  EXPECT_TRUE(session->Info().busy);
  EXPECT_FALSE(second_done);
  {
    std::lock_guard lock(control_->mutex);
    control_->hold_runs = false;
    EXPECT_EQ(control_->running, 1) << "two calls ran at once";
  }
  control_->changed.notify_all();
  first.join();
  second.join();
  EXPECT_EQ(session->Info().calls, 2);
}

TEST_F(SessionTest, AFailedBoundaryCheckEndsTheSessionAndRunsNothing) {
  auto session = Open();
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->Run(Cell("python", "1")).ok());
  control_->boundary_fails = true;
  auto result = session->Run(Cell("python", "2"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kEnvironment);
  EXPECT_NE(result.error().message().find("the init is gone"), std::string::npos);
  EXPECT_EQ(control_->runs, 1);
  EXPECT_EQ(session->ended(), SessionEndReason::kBoundaryFailed);
  EXPECT_TRUE(control_->destroyed);
  EXPECT_EQ(session->Close().ended, SessionEndReason::kBoundaryFailed);
}

TEST_F(SessionTest, FilesOverTheDiskBoundEndTheSessionAfterTheCall) {
  SessionOptions options;
  options.disk_bytes = 1000;
  auto session = Open(options);
  ASSERT_TRUE(session);
  control_->disk_used = 1001;
  auto result = session->Run(Cell("python", "open('big','w').write('x' * 1001)"));
  ASSERT_TRUE(result.ok()) << "the call that wrote the files still answers";
  EXPECT_EQ(session->ended(), SessionEndReason::kDiskExceeded);
  EXPECT_EQ(session->Info().disk_used_bytes, 1001);
  EXPECT_FALSE(session->Run(Cell("python", "1")).ok());
}

TEST_F(SessionTest, TheIdleTimeoutAndTheLifetimeEndTheSession) {
  SessionOptions idle;
  idle.idle_timeout_ms = 50;
  auto session = Open(idle);
  ASSERT_TRUE(session);
  EXPECT_FALSE(session->ExpireIfDue());
  std::this_thread::sleep_for(80ms);
  EXPECT_TRUE(session->ExpireIfDue());
  EXPECT_EQ(session->ended(), SessionEndReason::kExpired);
  EXPECT_TRUE(control_->destroyed);

  SessionOptions short_lived;
  short_lived.lifetime_ms = 60;
  short_lived.idle_timeout_ms = 60;
  auto other = Open(short_lived);
  ASSERT_TRUE(other);
  std::this_thread::sleep_for(80ms);
  auto result = other->Run(Cell("python", "1"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kNotFound);
  EXPECT_NE(result.error().message().find("expired"), std::string::npos);
}

TEST_F(SessionTest, BadOptionsAndFloorsAreRefusedBeforeASandboxIsMade) {
  SessionOptions too_long;
  too_long.lifetime_ms = kMaximumSessionLifetimeMs + 1;
  EXPECT_EQ(NotDispatchedReason(sandbox_.OpenSession(too_long).error()), NotDispatched::kRequest);
  SessionOptions idle_above_lifetime;
  idle_above_lifetime.lifetime_ms = 1000;
  idle_above_lifetime.idle_timeout_ms = 2000;
  EXPECT_EQ(NotDispatchedReason(sandbox_.OpenSession(idle_above_lifetime).error()),
            NotDispatched::kRequest);
  SessionOptions not_a_tier;
  not_a_tier.minimum_isolation = "strong";
  EXPECT_EQ(NotDispatchedReason(sandbox_.OpenSession(not_a_tier).error()), NotDispatched::kRequest);
  SessionOptions floor;
  floor.minimum_isolation = "vm";
  EXPECT_EQ(NotDispatchedReason(sandbox_.OpenSession(floor).error()), NotDispatched::kIsolation);
  EXPECT_FALSE(control_->destroyed) << "no sandbox was made";
}

TEST_F(SessionTest, ASandboxWeakerThanTheFloorIsRefusedAndDestroyed) {
  control_->session_tier = Tier::kProcess;
  SessionOptions floor;
  floor.minimum_isolation = "container";
  auto session = sandbox_.OpenSession(floor);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(NotDispatchedReason(session.error()), NotDispatched::kIsolation);
  EXPECT_TRUE(control_->destroyed);
}

TEST_F(SessionTest, ACallsFloorIsCheckedAgainstTheSessionsTier) {
  auto session = Open();
  ASSERT_TRUE(session);
  Request request = Cell("python", "1");
  request.minimum_isolation = "kernel";
  auto result = session->Run(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kIsolation);
  EXPECT_EQ(control_->runs, 0);
}

TEST_F(SessionTest, ACellOutsideASessionIsRefused) {
  auto result = sandbox_.Run(Cell("python", "1"));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kRequest);
}

TEST(EmbeddedSessionTest, JavascriptCellsKeepTheirStateAndPythonIsUnsupported) {
  auto sandbox = Sandbox::Open("embedded");
  ASSERT_TRUE(sandbox.ok());
  auto session = sandbox->OpenSession(SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.error().ToString();
  auto first = (*session)->Run(Cell("javascript", "let x = 41"));
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  ASSERT_TRUE(first->cell.has_value());
  EXPECT_TRUE(first->cell->interpreter_started);
  EXPECT_EQ(first->isolation, Tier::kProcess);
  auto second = (*session)->Run(Cell("javascript", "x + 1"));
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second->cell->value, "42");
  EXPECT_FALSE(second->cell->interpreter_started);
  EXPECT_EQ((*session)->Info().interpreters, std::vector<std::string>{"javascript"});
  auto python = (*session)->Run(Cell("python", "1"));
  ASSERT_FALSE(python.ok());
  EXPECT_EQ(NotDispatchedReason(python.error()), NotDispatched::kUnsupported);
  // The digests cover the cell's fields: the exchange checks out.
  Request sent = Cell("javascript", "x");
  auto third = (*session)->Run(sent);
  ASSERT_TRUE(third.ok());
  const ChainState after_second{SessionIdDigest((*session)->id()), 2, second->record.record_sha256};
  ChainState chain = after_second;
  EXPECT_TRUE(CheckExchange(sent, *third, &chain).ok());
  Result forged = *third;
  forged.cell->value = "43";
  chain = after_second;
  EXPECT_FALSE(CheckExchange(sent, forged, &chain).ok());
}

}  // namespace
}  // namespace plimsoll
