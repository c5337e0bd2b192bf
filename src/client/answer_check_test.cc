#include "client/answer_check.h"

#include <gtest/gtest.h>

#include <functional>

#include "plimsoll/record.h"
#include "plimsoll/wire.h"

namespace plimsoll::client {
namespace {

constexpr char kSentId[] = "0123456789abcdef0123456789abcdef";
constexpr char kOtherId[] = "fedcba9876543210fedcba9876543210";

Request SampleRequest() {
  Request request;
  request.minimum_isolation = "process";
  request.timeout_ms = 5000;
  request.javascript = JavascriptPayload{"console.log(6*7)"};
  return request;
}

// What an honest daemon answers for `request`.
Result HonestResult(const Request& request, Tier tier = Tier::kProcess) {
  Result result;
  result.provider = "embedded";
  result.isolation = tier;
  result.environment = "sha256:engine";
  result.stdout_bytes = "42\n";
  result.duration_ms = 3;
  result.record = MakeRecord(request, result, "sha256:policy", {1000, 1003});
  return result;
}

HttpAnswer Success(const Result& result, std::string id = kSentId) {
  return {.status = 200, .headers = {{"plimsoll-request-id", id}}, .body = ResultToJson(result)};
}

HttpAnswer RefusalAnswer(NotDispatched reason, std::string header_id = kSentId,
                         std::string body_id = kSentId, bool mark_header = true) {
  HttpAnswer answer;
  answer.status = 409;
  answer.headers.emplace_back("plimsoll-request-id", header_id);
  if (mark_header) {
    answer.headers.emplace_back("plimsoll-not-dispatched", std::string(NotDispatchedName(reason)));
  }
  answer.body = ErrorToJson(Refusal(reason, "The floor is above this daemon's tier."), body_id);
  return answer;
}

TEST(AnswerCheckTest, AnHonestAnswerIsBelieved) {
  Request request = SampleRequest();
  Result honest = HonestResult(request);
  Expected<Result> result = CheckRunAnswer(request, kSentId, Success(honest));
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  EXPECT_EQ(*result, honest);
}

TEST(AnswerCheckTest, ASuccessWithoutThisCallsIdIsDataLoss) {
  Request request = SampleRequest();
  HttpAnswer swapped = Success(HonestResult(request), kOtherId);
  Expected<Result> result = CheckRunAnswer(request, kSentId, swapped);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kDataLoss);
  EXPECT_FALSE(result.error().not_dispatched());
  EXPECT_NE(result.error().message().find(kOtherId), std::string::npos);
  EXPECT_NE(result.error().message().find("the code may have run"), std::string::npos);

  HttpAnswer missing = Success(HonestResult(request));
  missing.headers.clear();
  EXPECT_EQ(CheckRunAnswer(request, kSentId, missing).error().code(), ErrorCode::kDataLoss);

  HttpAnswer twice = Success(HonestResult(request));
  twice.headers.emplace_back("plimsoll-request-id", kSentId);
  EXPECT_EQ(CheckRunAnswer(request, kSentId, twice).error().code(), ErrorCode::kDataLoss)
      << "two echoes, even equal ones, are not exactly one";

  HttpAnswer uppercase = Success(HonestResult(request), "0123456789ABCDEF0123456789ABCDEF");
  EXPECT_EQ(CheckRunAnswer(request, kSentId, uppercase).error().code(), ErrorCode::kDataLoss);
}

TEST(AnswerCheckTest, AnHonestRefusalKeepsItsMark) {
  Expected<Result> result =
      CheckRunAnswer(SampleRequest(), kSentId, RefusalAnswer(NotDispatched::kIsolation));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kIsolation);
  EXPECT_EQ(result.error().code(), ErrorCode::kFailedPrecondition);
  EXPECT_EQ(result.error().message(), "The floor is above this daemon's tier.");
}

TEST(AnswerCheckTest, ARefusalWithoutThisCallsIdLosesItsMark) {
  for (const HttpAnswer& answer : {
           RefusalAnswer(NotDispatched::kIsolation, kOtherId, kSentId),        // header swapped
           RefusalAnswer(NotDispatched::kIsolation, kSentId, kOtherId),        // body swapped
           RefusalAnswer(NotDispatched::kIsolation, kSentId, ""),              // body has none
           RefusalAnswer(NotDispatched::kIsolation, kSentId, kSentId, false),  // no mark header
       }) {
    Expected<Result> result = CheckRunAnswer(SampleRequest(), kSentId, answer);
    ASSERT_FALSE(result.ok());
    EXPECT_FALSE(NotDispatchedReason(result.error()).has_value()) << result.error().ToString();
    EXPECT_EQ(result.error().code(), ErrorCode::kDataLoss);
    EXPECT_NE(result.error().message().find("not believed"), std::string::npos);
    EXPECT_NE(result.error().message().find("The floor is above"), std::string::npos)
        << "what the answer said is quoted";
  }
  HttpAnswer no_header = RefusalAnswer(NotDispatched::kIsolation);
  no_header.headers.erase(no_header.headers.begin());
  EXPECT_FALSE(CheckRunAnswer(SampleRequest(), kSentId, no_header).error().not_dispatched());
}

TEST(AnswerCheckTest, AMarkHeaderThatDisagreesWithTheBodyDropsTheMark) {
  HttpAnswer answer = RefusalAnswer(NotDispatched::kIsolation);
  answer.headers[1].second = "capacity";
  Expected<Result> result = CheckRunAnswer(SampleRequest(), kSentId, answer);
  ASSERT_FALSE(result.ok());
  EXPECT_FALSE(result.error().not_dispatched());
  EXPECT_NE(result.error().message().find("Plimsoll-Not-Dispatched"), std::string::npos);
}

TEST(AnswerCheckTest, AnUnmarkedErrorStaysUnmarked) {
  HttpAnswer answer;
  answer.status = 500;
  answer.headers = {{"plimsoll-request-id", kSentId}};
  answer.body = ErrorToJson(Failure(ErrorCode::kInternal, "error ID 1"), kSentId);
  Expected<Result> result = CheckRunAnswer(SampleRequest(), kSentId, answer);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kInternal);
  EXPECT_FALSE(result.error().not_dispatched());
}

TEST(AnswerCheckTest, TamperedAnswersAreDataLoss) {
  Request request = SampleRequest();
  struct Case {
    const char* name;
    std::function<void(Result&)> tamper;
    const char* says;
  };
  std::vector<Case> cases = {
      {"stdout changed", [](Result& r) { r.stdout_bytes = "43\n"; }, "result_sha256"},
      {"exit code changed", [](Result& r) { r.exit_code = 1; }, "result_sha256"},
      {"record digest changed", [](Result& r) { r.record.record_sha256 = std::string(64, 'a'); },
       "record_sha256"},
      {"record start moved", [](Result& r) { r.record.started_unix_ms = 999; }, "record_sha256"},
      {"request digest changed", [](Result& r) { r.record.request_sha256 = std::string(64, 'b'); },
       "request_sha256"},
      {"record names another tier", [](Result& r) { r.record.isolation = Tier::kVm; },
       "another tier"},
  };
  for (const Case& tampered : cases) {
    Result result = HonestResult(request);
    tampered.tamper(result);
    Expected<Result> checked = CheckRunAnswer(request, kSentId, Success(result));
    ASSERT_FALSE(checked.ok()) << tampered.name;
    EXPECT_EQ(checked.error().code(), ErrorCode::kDataLoss) << tampered.name;
    EXPECT_FALSE(checked.error().not_dispatched()) << tampered.name;
    EXPECT_NE(checked.error().message().find(tampered.says), std::string::npos)
        << tampered.name << ": " << checked.error().message();
  }
}

TEST(AnswerCheckTest, AnAnswerToAnotherRequestIsDataLoss) {
  Request other = SampleRequest();
  other.javascript->code = "console.log(1)";
  Expected<Result> checked = CheckRunAnswer(SampleRequest(), kSentId, Success(HonestResult(other)));
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error().code(), ErrorCode::kDataLoss);
  EXPECT_NE(checked.error().message().find("request_sha256"), std::string::npos);
}

TEST(AnswerCheckTest, ATierBelowTheFloorIsDataLossEvenWithAConsistentRecord) {
  Request request = SampleRequest();
  request.minimum_isolation = "container";
  // A self-consistent answer (digests and record match) whose tier is below the floor.
  Result weak = HonestResult(request, Tier::kProcess);
  Expected<Result> checked = CheckRunAnswer(request, kSentId, Success(weak));
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error().code(), ErrorCode::kDataLoss);
  EXPECT_FALSE(checked.error().not_dispatched());
  EXPECT_NE(checked.error().message().find("does not meet the requested floor"), std::string::npos)
      << checked.error().message();
  EXPECT_TRUE(CheckRunAnswer(request, kSentId, Success(HonestResult(request, Tier::kKernel))).ok());
}

TEST(AnswerCheckTest, UnreadableAnswersAreDataLossWithoutAMark) {
  Request request = SampleRequest();
  HttpAnswer not_json{.status = 200, .headers = {{"plimsoll-request-id", kSentId}}, .body = "{"};
  HttpAnswer html{
      .status = 502,
      .headers = {{"plimsoll-request-id", kSentId}, {"plimsoll-not-dispatched", "capacity"}},
      .body = "<html>Bad Gateway</html>"};
  HttpAnswer unknown_code{
      .status = 409,
      .headers = {{"plimsoll-request-id", kSentId}, {"plimsoll-not-dispatched", "isolation"}},
      .body = R"({"error":{"code":"teapot","message":"m","not_dispatched":"isolation",)"
              R"("request_id":"0123456789abcdef0123456789abcdef"}})"};
  HttpAnswer result_shaped_error{
      .status = 200, .headers = {{"plimsoll-request-id", kSentId}}, .body = R"({"error":{}})"};
  for (const HttpAnswer& answer : {not_json, html, unknown_code, result_shaped_error}) {
    Expected<Result> checked = CheckRunAnswer(request, kSentId, answer);
    ASSERT_FALSE(checked.ok()) << answer.body;
    EXPECT_EQ(checked.error().code(), ErrorCode::kDataLoss) << answer.body;
    EXPECT_FALSE(checked.error().not_dispatched()) << answer.body;
  }
  EXPECT_NE(CheckRunAnswer(request, kSentId, html).error().message().find("HTTP 502"),
            std::string::npos);
}

TEST(AnswerCheckTest, HostileHeaderValuesArePrintedSafely) {
  HttpAnswer answer = Success(HonestResult(SampleRequest()), std::string("\x1b[31m\r\nX", 7));
  Expected<Result> checked = CheckRunAnswer(SampleRequest(), kSentId, answer);
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error().message().find('\x1b'), std::string::npos);
  EXPECT_EQ(checked.error().message().find('\r'), std::string::npos);
}

TEST(AnswerCheckTest, DescribeAndHealthCheckTheEchoToo) {
  Description description;
  description.provider = "embedded";
  std::string body = DescriptionToJson(description, std::nullopt);
  HttpAnswer good{.status = 200, .headers = {{"plimsoll-request-id", kSentId}}, .body = body};
  auto described = CheckDescribeAnswer(kSentId, good);
  ASSERT_TRUE(described.ok()) << described.error().ToString();
  EXPECT_EQ(described->description.provider, "embedded");
  HttpAnswer swapped = good;
  swapped.headers[0].second = kOtherId;
  EXPECT_EQ(CheckDescribeAnswer(kSentId, swapped).error().code(), ErrorCode::kDataLoss);

  HttpAnswer health{
      .status = 200, .headers = {{"plimsoll-request-id", kSentId}}, .body = R"({"status":"ok"})"};
  EXPECT_TRUE(CheckHealthAnswer(kSentId, health).ok());
  health.headers.clear();
  EXPECT_EQ(CheckHealthAnswer(kSentId, health).error().code(), ErrorCode::kDataLoss);
  HttpAnswer unauthenticated{
      .status = 401,
      .headers = {{"plimsoll-request-id", kSentId}, {"plimsoll-not-dispatched", "permission"}},
      .body = ErrorToJson(Refusal(NotDispatched::kPermission, "No token."), kSentId)};
  Status refused = CheckHealthAnswer(kSentId, unauthenticated);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().not_dispatched(), NotDispatched::kPermission);
}

// A session call's answer with every digest and the chain intact, as an
// on-path rewriter that lowered the tier would make it.
HttpAnswer SessionCallAnswer(const Request& request, Tier tier, const ChainState& chain) {
  Result result;
  result.provider = "linux";
  result.isolation = tier;
  result.environment = "sha256:image";
  result.kind = PayloadKind::kCell;
  result.duration_ms = 3;
  result.record = MakeRecord(
      request, result, "sha256:policy", {1000, 1003},
      SessionLink{chain.session_sha256, chain.last_sequence + 1, chain.last_record_sha256});
  return Success(result);
}

TEST(AnswerCheckTest, ASessionCallBelowTheSessionsFloorIsDataLoss) {
  Request cell;  // a cell asks no floor of its own
  cell.cell = CellPayload{"javascript", "6 * 7"};
  const ChainState start{SessionIdDigest(kOtherId), 0, ""};

  ChainState chain = start;
  Expected<Result> met = CheckSessionRunAnswer(
      cell, kSentId, SessionCallAnswer(cell, Tier::kContainer, chain), chain, "container");
  ASSERT_TRUE(met.ok()) << met.error().ToString();
  EXPECT_EQ(chain.last_sequence, 1);

  chain = start;
  Expected<Result> lowered = CheckSessionRunAnswer(
      cell, kSentId, SessionCallAnswer(cell, Tier::kProcess, chain), chain, "container");
  ASSERT_FALSE(lowered.ok()) << "a cell lowered below the session's floor was believed";
  EXPECT_EQ(lowered.error().code(), ErrorCode::kDataLoss);
  EXPECT_FALSE(lowered.error().not_dispatched());
  EXPECT_NE(lowered.error().message().find("the session was opened with"), std::string::npos);
  EXPECT_EQ(chain.last_sequence, 0) << "a call that failed must not advance the chain";

  // Without a session floor, only the call's own floor holds.
  EXPECT_TRUE(CheckSessionRunAnswer(cell, kSentId, SessionCallAnswer(cell, Tier::kProcess, chain),
                                    chain, "")
                  .ok());
}

TEST(AnswerCheckTest, ASessionOpenedBelowItsFloorIsDataLoss) {
  SessionInfo info;
  info.id = kOtherId;
  info.provider = "linux";
  info.isolation = Tier::kProcess;
  info.environment = "sha256:image";
  HttpAnswer answer{.status = 201,
                    .headers = {{"plimsoll-request-id", kSentId}},
                    .body = SessionOpenedToJson(info, Limits{})};
  SessionOpenRequest open;
  EXPECT_TRUE(CheckSessionOpenAnswer(open, kSentId, answer).ok());
  open.options.minimum_isolation = "container";
  Expected<SessionInfo> below = CheckSessionOpenAnswer(open, kSentId, answer);
  ASSERT_FALSE(below.ok());
  EXPECT_EQ(below.error().code(), ErrorCode::kDataLoss);
  open.options.minimum_isolation = "";
  open.options.environment = "sha256:other";
  EXPECT_EQ(CheckSessionOpenAnswer(open, kSentId, answer).error().code(), ErrorCode::kDataLoss);
}

}  // namespace
}  // namespace plimsoll::client
