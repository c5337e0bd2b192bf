#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "plimsoll/wire.h"

namespace plimsoll {
namespace {

TEST(ErrorJsonTest, WritesTheSpecShape) {
  Error refusal =
      Refusal(NotDispatched::kIsolation, ErrorCode::kFailedPrecondition, "Below the floor.");
  EXPECT_EQ(ErrorToJson(refusal, "0123456789abcdef0123456789abcdef"),
            R"({"error":{"code":"failed_precondition","message":"Below the floor.",)"
            R"("not_dispatched":"isolation","request_id":"0123456789abcdef0123456789abcdef"}})");
  EXPECT_EQ(ErrorToJson(Failure(ErrorCode::kInternal, "x"), ""),
            R"({"error":{"code":"internal","message":"x"}})");
}

TEST(ErrorJsonTest, RoundTripsWithAndWithoutTheMark) {
  for (const Error& error :
       {Refusal(NotDispatched::kCapacity, ErrorCode::kResourceExhausted, "Busy."),
        Refusal(NotDispatched::kProtocol, ErrorCode::kInvalidArgument, "Protocol 2."),
        Failure(ErrorCode::kDeadlineExceeded, "Took too long."),
        Failure(ErrorCode::kDataLoss, "")}) {
    for (std::string id : {std::string(), std::string(32, 'a')}) {
      auto parsed = ParseErrorJson(ErrorToJson(error, id));
      ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
      EXPECT_EQ(parsed->error, error);
      EXPECT_EQ(parsed->request_id, id);
    }
  }
}

TEST(ErrorJsonTest, UnreadableErrorsLoseTheMark) {
  for (const char* body : {
           R"({"error":{"code":"no_such_code","message":"m","not_dispatched":"request"}})",
           R"({"error":{"code":"invalid_argument","message":"m","not_dispatched":"maybe"}})",
           R"({"error":{"code":"invalid_argument","not_dispatched":"request"}})",
           R"({"error":{"code":"invalid_argument","message":7,"not_dispatched":"request"}})",
           R"({"error":{"code":"invalid_argument","message":"m","not_dispatched":null}})",
           R"({"error":"invalid_argument"})",
           R"({"code":"invalid_argument","message":"m"})",
           R"([])",
           R"(not json)",
       }) {
    auto parsed = ParseErrorJson(body);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kDataLoss) << body;
    EXPECT_FALSE(parsed.error().not_dispatched()) << body;
  }
}

}  // namespace
}  // namespace plimsoll
