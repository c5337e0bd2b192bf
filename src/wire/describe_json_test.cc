#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plimsoll/wire.h"

namespace plimsoll {
namespace {

Description MakeDescription() {
  Description description;
  description.provider = "embedded";
  description.tier = Tier::kProcess;
  description.environment = "sha256:abc";
  description.capabilities.payloads = {PayloadKind::kJavascript};
  description.details = {{"engine", "QuickJS"}, {"engine", "again"}};
  return description;
}

TEST(DescriptionToJson, WithoutEvidenceTheTierIsUnknown) {
  auto json = nlohmann::json::parse(DescriptionToJson(MakeDescription(), std::nullopt));
  EXPECT_EQ(json["protocol"], kProtocol);
  EXPECT_EQ(json["provider"], "embedded");
  EXPECT_EQ(json["tier"], "unknown");
  EXPECT_EQ(json["claimed_tier"], "process");
  EXPECT_TRUE(json["evidence"].is_null());
  EXPECT_EQ(json["capabilities"]["languages"], nlohmann::json::array({"javascript"}));
  EXPECT_EQ(json["capabilities"]["projects"], false);
  EXPECT_EQ(json["limits"]["memory_bytes"], Limits{}.memory_bytes);
  EXPECT_EQ(json["sessions"]["enabled"], false);
  ASSERT_EQ(json["details"].size(), 2u);  // a repeated name is kept
}

TEST(DescriptionToJson, EvidenceNeverRaisesTheTierAboveTheClaim) {
  Evidence evidence;
  evidence.tier = Tier::kVm;
  evidence.summary = "why";
  evidence.checks = {{"root_read_only", true, "ro"}};
  evidence.facts = {{"runtime", "x 1"}};
  evidence.collected_unix_ms = 7;
  auto json = nlohmann::json::parse(DescriptionToJson(MakeDescription(), evidence));
  EXPECT_EQ(json["tier"], "process");
  EXPECT_EQ(json["evidence"]["tier"], "vm");
  EXPECT_EQ(json["evidence"]["all_checks_passed"], true);
  EXPECT_EQ(json["evidence"]["checks"][0]["name"], "root_read_only");
  EXPECT_EQ(json["evidence"]["facts"][0]["value"], "x 1");
  EXPECT_EQ(json["evidence"]["collected_unix_ms"], 7);
}

}  // namespace
}  // namespace plimsoll
