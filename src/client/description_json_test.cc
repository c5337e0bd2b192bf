#include "client/description_json.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plimsoll/wire.h"

namespace plimsoll::client {
namespace {

Description SampleDescription() {
  Description description;
  description.provider = "linux";
  description.tier = Tier::kContainer;
  description.environment = "sha256:abc";
  description.capabilities.payloads = {PayloadKind::kJavascript, PayloadKind::kProject};
  description.capabilities.grants = true;
  description.limits.pids = 99;
  description.limits.max_artifact_bytes = 12345;
  description.details = {{"pool", "3 ready"}, {"pool", "repeated names survive"}};
  return description;
}

Evidence SampleEvidence() {
  Evidence evidence;
  evidence.tier = Tier::kContainer;
  evidence.summary = "namespaces, seccomp, cgroups";
  evidence.facts = {{"runtime", "own"}};
  evidence.checks = {{"root_read_only", true, "EROFS"}, {"no_network", false, "eth0 seen"}};
  evidence.collected_unix_ms = 1700000000000;
  return evidence;
}

TEST(DescriptionJsonTest, ReadsWhatTheDaemonWrites) {
  auto parsed = ParseDescriptionJson(DescriptionToJson(SampleDescription(), SampleEvidence()));
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->protocol, kProtocol);
  const Description expected = SampleDescription();
  EXPECT_EQ(parsed->description.provider, expected.provider);
  EXPECT_EQ(parsed->description.tier, expected.tier);
  EXPECT_EQ(parsed->description.environment, expected.environment);
  EXPECT_EQ(parsed->description.capabilities.payloads, expected.capabilities.payloads);
  EXPECT_EQ(parsed->description.capabilities.sessions, expected.capabilities.sessions);
  EXPECT_EQ(parsed->description.capabilities.grants, expected.capabilities.grants);
  EXPECT_EQ(parsed->description.limits, expected.limits);
  EXPECT_EQ(parsed->description.details, expected.details) << "repeated names survive";
  EXPECT_EQ(parsed->tier, Tier::kContainer);
  ASSERT_TRUE(parsed->evidence.has_value());
  EXPECT_EQ(parsed->evidence->summary, "namespaces, seccomp, cgroups");
  EXPECT_EQ(parsed->evidence->facts, SampleEvidence().facts);
  ASSERT_EQ(parsed->evidence->checks.size(), 2u);
  EXPECT_FALSE(parsed->evidence->checks[1].passed);
  EXPECT_EQ(parsed->evidence->checks[1].detail, "eth0 seen");
  EXPECT_EQ(parsed->evidence->collected_unix_ms, 1700000000000);
}

TEST(DescriptionJsonTest, NoEvidenceYetIsNullAndTierUnknown) {
  auto parsed = ParseDescriptionJson(DescriptionToJson(SampleDescription(), std::nullopt));
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_FALSE(parsed->evidence.has_value());
  EXPECT_EQ(parsed->tier, Tier::kUnknown);
}

TEST(DescriptionJsonTest, UnknownFieldsAndPayloadKindsAreSkipped) {
  nlohmann::json body =
      nlohmann::json::parse(DescriptionToJson(SampleDescription(), SampleEvidence()));
  body["new_field"] = {1, 2, 3};
  body["capabilities"]["payloads"].push_back("rust");
  auto parsed = ParseDescriptionJson(body.dump());
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->description.capabilities.payloads, SampleDescription().capabilities.payloads);
}

TEST(DescriptionJsonTest, MalformedBodiesAreDataLossWithoutAMark) {
  nlohmann::json good =
      nlohmann::json::parse(DescriptionToJson(SampleDescription(), SampleEvidence()));
  auto with = [&](auto change) {
    nlohmann::json copy = good;
    change(copy);
    return copy.dump();
  };
  struct Case {
    std::string body;
    std::string says;
  };
  std::vector<Case> cases = {
      {"not json", "not valid JSON"},
      {"[1]", "the body is an array"},
      {R"({"protocol":1,"protocol":1})", "repeats the key"},
      {with([](auto& j) { j.erase("limits"); }), "limits is required"},
      {with([](auto& j) { j["tier"] = "steel"; }), "tier \"steel\" is not a tier name"},
      {with([](auto& j) { j["evidence"] = 3; }), "evidence must be an object"},
      {with([](auto& j) { j.erase("evidence"); }), "evidence is required"},
      {with([](auto& j) { j["evidence"]["checks"][0]["passed"] = "yes"; }),
       "evidence.checks[0].passed"},
      {with([](auto& j) { j["limits"]["pids"] = 1.5; }), "limits.pids"},
      {with([](auto& j) { j["details"][0] = "x"; }), "details[0] is a string"},
      {with([](auto& j) { j["capabilities"]["payloads"][0] = 7; }), "capabilities.payloads[0]"},
  };
  for (const Case& bad : cases) {
    auto parsed = ParseDescriptionJson(bad.body);
    ASSERT_FALSE(parsed.ok()) << bad.body;
    EXPECT_EQ(parsed.error().code(), ErrorCode::kDataLoss);
    EXPECT_FALSE(parsed.error().not_dispatched().has_value());
    EXPECT_NE(parsed.error().message().find(bad.says), std::string::npos)
        << parsed.error().message();
  }
}

}  // namespace
}  // namespace plimsoll::client
