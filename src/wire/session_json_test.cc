#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plimsoll/wire.h"

namespace plimsoll {
namespace {

using ::testing::HasSubstr;

TEST(SessionJsonTest, ReadsEveryFieldOfTheOpenBody) {
  auto parsed = ParseSessionOpenJson(
      R"({"protocol":1,"minimum_isolation":"container","environment":"sha256:abc",)"
      R"("owner":"00112233445566778899aabbccddeeff","lifetime_ms":60000,"idle_timeout_ms":1000})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->options.minimum_isolation, "container");
  EXPECT_EQ(parsed->options.environment, "sha256:abc");
  EXPECT_EQ(parsed->owner, "00112233445566778899aabbccddeeff");
  EXPECT_EQ(parsed->options.lifetime_ms, 60000);
  EXPECT_EQ(parsed->options.idle_timeout_ms, 1000);
  auto again = ParseSessionOpenJson(SessionOpenToJson(*parsed));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(*again, *parsed);
}

TEST(SessionJsonTest, TheProtocolIsCheckedFirst) {
  for (const char* body : {R"({})", R"({"protocol":2,"bogus":1})", R"({"protocol":"1"})"}) {
    auto parsed = ParseSessionOpenJson(body);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(NotDispatchedReason(parsed.error()), NotDispatched::kProtocol) << body;
  }
}

TEST(SessionJsonTest, MalformedBodiesAreRequestRefusals) {
  for (const char* body :
       {"", "[]", "{", R"({"protocol":1,"bogus":1})", R"({"protocol":1,"lifetime_ms":"1"})",
        R"({"protocol":1,"owner":"alice"})",
        R"({"protocol":1,"owner":"00112233445566778899AABBCCDDEEFF"})",
        R"({"protocol":1,"owner":"0011"})", R"({"protocol":1,"owner":""})"}) {
    auto parsed = ParseSessionOpenJson(body);
    ASSERT_FALSE(parsed.ok()) << body;
    EXPECT_EQ(NotDispatchedReason(parsed.error()), NotDispatched::kRequest) << body;
  }
  auto raw_name = ParseSessionOpenJson(R"({"protocol":1,"owner":"alice@example.com"})");
  EXPECT_THAT(raw_name.error().message(), HasSubstr("never takes a raw name"));
}

TEST(SessionJsonTest, TheAnswersHaveTheirFields) {
  SessionInfo info;
  info.id = std::string(32, 'a');
  info.provider = "embedded";
  info.isolation = Tier::kProcess;
  info.environment = "sha256:e";
  info.created_unix_ms = 1000;
  info.expires_unix_ms = 2000;
  info.idle_timeout_ms = 500;
  info.calls = 3;
  info.interpreters = {"javascript"};
  info.last_record_sha256 = std::string(64, 'f');
  auto opened = nlohmann::json::parse(SessionOpenedToJson(info, Limits{}));
  EXPECT_EQ(opened["session_id"], info.id);
  EXPECT_EQ(opened["isolation"], "process");
  EXPECT_EQ(opened["expires_unix_ms"], 2000);
  EXPECT_EQ(opened["limits"]["memory_bytes"], Limits{}.memory_bytes);
  auto state = nlohmann::json::parse(SessionStateToJson(info));
  EXPECT_EQ(state["calls"], 3);
  EXPECT_EQ(state["interpreters"], nlohmann::json::array({"javascript"}));
  EXPECT_EQ(state["busy"], false);
  auto closed = nlohmann::json::parse(
      SessionCloseToJson(SessionClose{SessionEndReason::kReplaced, 3, info.last_record_sha256}));
  EXPECT_EQ(closed["ended"], "replaced");
  EXPECT_EQ(closed["calls"], 3);
  EXPECT_EQ(closed["last_record_sha256"], info.last_record_sha256);
}

}  // namespace
}  // namespace plimsoll
