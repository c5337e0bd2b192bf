#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "plimsoll/record.h"
#include "plimsoll/result.h"

namespace plimsoll {
namespace {

const std::string kSession = SessionIdDigest("sess-1");

Request Sent() {
  Request request;
  request.minimum_isolation = "container";
  request.timeout_ms = 0;  // as sent: the daemon's default is not part of the digest
  request.cell = CellPayload{"javascript", "x"};
  return request;
}

Result Answer(const Request& request, std::optional<SessionLink> link = std::nullopt) {
  Result result;
  result.provider = "linux";
  result.isolation = Tier::kContainer;
  result.environment = "sha256:e";
  result.kind = PayloadKind::kCell;
  result.stdout_bytes = "1\n";
  result.record = MakeRecord(request, result, PolicyDigest(Limits{}), {100, 105}, std::move(link));
  return result;
}

void ExpectDataLoss(const Status& status, std::string_view needle) {
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.error().code(), ErrorCode::kDataLoss);
  EXPECT_FALSE(status.error().not_dispatched());
  EXPECT_THAT(status.error().message(), ::testing::HasSubstr(std::string(needle)));
}

TEST(CheckExchangeTest, AcceptsAnHonestAnswer) {
  Request sent = Sent();
  EXPECT_TRUE(CheckExchange(sent, Answer(sent)).ok());
}

TEST(CheckExchangeTest, RefusesEveryTamperedField) {
  Request sent = Sent();
  struct Case {
    const char* needle;
    std::function<void(Request&, Result&)> tamper;
  };
  std::vector<Case> cases = {
      {"request_sha256", [](Request& r, Result&) { r.cell->code = "y"; }},
      {"request_sha256", [](Request& r, Result&) { r.timeout_ms = 5000; }},
      {"result_sha256", [](Request&, Result& a) { a.stdout_bytes = "2\n"; }},
      {"result_sha256", [](Request&, Result& a) { a.exit_code = 1; }},
      {"record_sha256", [](Request&, Result& a) { a.record.policy = "other"; }},
      {"record_sha256", [](Request&, Result& a) { a.record.started_unix_ms = 99; }},
      {"version", [](Request&, Result& a) { a.record.version = 2; }},
      {"another provider", [](Request&, Result& a) { a.record.provider = "oci"; }},
      {"another tier", [](Request&, Result& a) { a.record.isolation = Tier::kVm; }},
      {"another environment", [](Request&, Result& a) { a.record.environment = "sha256:f"; }},
      {"ends before", [](Request&, Result& a) { a.record.ended_unix_ms = 99; }},
  };
  for (const Case& c : cases) {
    Request request = sent;
    Result answer = Answer(sent);
    c.tamper(request, answer);
    ExpectDataLoss(CheckExchange(request, answer), c.needle);
  }
}

TEST(CheckExchangeTest, RefusesATierBelowTheFloorEvenWhenTheRecordAgrees) {
  Request sent = Sent();
  sent.minimum_isolation = "kernel";
  ExpectDataLoss(CheckExchange(sent, Answer(sent)), "does not meet the requested floor");
  sent.minimum_isolation = "strong";
  ExpectDataLoss(CheckExchange(sent, Answer(sent)), "does not meet the requested floor");
}

TEST(CheckExchangeTest, RefusesAnotherEnvironmentThanRequired) {
  Request sent = Sent();
  sent.environment = "sha256:other";
  ExpectDataLoss(CheckExchange(sent, Answer(sent)), "environment");
  sent.environment = "sha256:e";
  EXPECT_TRUE(CheckExchange(sent, Answer(sent)).ok());
}

TEST(CheckExchangeTest, FollowsASessionChain) {
  Request sent = Sent();
  ChainState chain{kSession, 0, ""};
  std::string previous;
  for (int64_t sequence = 1; sequence <= 3; ++sequence) {
    Result answer = Answer(sent, SessionLink{kSession, sequence, previous});
    Status status = CheckExchange(sent, answer, &chain);
    ASSERT_TRUE(status.ok()) << status.error().ToString();
    EXPECT_EQ(chain.last_sequence, sequence);
    EXPECT_EQ(chain.last_record_sha256, answer.record.record_sha256);
    previous = answer.record.record_sha256;
  }
}

TEST(CheckExchangeTest, RefusesBrokenChainsWithoutAdvancing) {
  Request sent = Sent();
  Result first = Answer(sent, SessionLink{kSession, 1, ""});
  ChainState start{kSession, 0, ""};
  ChainState after_first = start;
  ASSERT_TRUE(CheckExchange(sent, first, &after_first).ok());
  const std::string& link = first.record.record_sha256;

  struct Case {
    const char* needle;
    ChainState state;
    std::optional<SessionLink> session;
  };
  std::vector<Case> cases = {
      {"no session fields", start, std::nullopt},
      {"another session", start, SessionLink{SessionIdDigest("sess-2"), 1, ""}},
      {"sequence is 2; expected 1", start, SessionLink{kSession, 2, ""}},
      {"sequence is 0; expected 1", start, SessionLink{kSession, 0, ""}},
      {"previous_sha256", start, SessionLink{kSession, 1, link}},
      {"sequence is 3; expected 2", after_first, SessionLink{kSession, 3, link}},  // a gap
      {"sequence is 1; expected 2", after_first, SessionLink{kSession, 1, ""}},    // a replay
      {"previous_sha256", after_first, SessionLink{kSession, 2, ""}},
      {"previous_sha256", after_first, SessionLink{kSession, 2, std::string(64, '0')}},
      {"64 lowercase hex", start, SessionLink{"SESSION", 1, ""}},
  };
  for (const Case& c : cases) {
    ChainState state = c.state;
    ExpectDataLoss(CheckExchange(sent, Answer(sent, c.session), &state), c.needle);
    EXPECT_EQ(state.last_sequence, c.state.last_sequence) << c.needle;
    EXPECT_EQ(state.last_record_sha256, c.state.last_record_sha256) << c.needle;
  }
}

TEST(CheckExchangeTest, RefusesASingleRunWhoseRecordCarriesSessionFields) {
  Request sent = Sent();
  Result answer = Answer(sent, SessionLink{kSession, 1, ""});
  // Every other field is consistent: only the session link is out of place.
  ExpectDataLoss(CheckExchange(sent, answer), "single run's record carries session fields");
  ExpectDataLoss(CheckExchange(sent, Answer(sent, SessionLink{kSession, 7, std::string(64, 'a')})),
                 "session fields");
}

TEST(CheckExchangeTest, LearnsTheSessionFromTheFirstRecordWhenNotGiven) {
  Request sent = Sent();
  ChainState chain;
  ASSERT_TRUE(CheckExchange(sent, Answer(sent, SessionLink{kSession, 1, ""}), &chain).ok());
  EXPECT_EQ(chain.session_sha256, kSession);
}

}  // namespace
}  // namespace plimsoll
