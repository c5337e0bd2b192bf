#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "plimsoll/wire.h"

namespace plimsoll {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Result SpecExample() {
  Result result;
  result.provider = "linux";
  result.isolation = Tier::kContainer;
  result.environment = "sha256:abc";
  result.duration_ms = 11;
  result.kind = PayloadKind::kJavascript;
  result.stdout_bytes = "42\n";
  result.record.request_sha256 = std::string(64, 'a');
  result.record.result_sha256 = std::string(64, 'b');
  result.record.provider = "linux";
  result.record.isolation = Tier::kContainer;
  result.record.environment = "sha256:abc";
  result.record.policy = std::string(64, 'c');
  result.record.started_unix_ms = 1764400000000;
  result.record.ended_unix_ms = 1764400000011;
  result.record.record_sha256 = std::string(64, 'd');
  return result;
}

Result FullProject() {
  Result result = SpecExample();
  result.kind = PayloadKind::kProject;
  result.isolation = Tier::kVm;
  result.exit_code = -3;
  result.timed_out = true;
  result.stdout_bytes = std::string("\xff\x00", 2);
  result.stderr_bytes = "é";
  result.stdout_truncated = true;
  result.outcome = ProjectOutcome::kProtocolError;
  result.steps = {StepResult{
      {"node", "main.js"}, 1, true, "o", std::string("\xed\xa0\x80", 3), true, false, 7}};
  result.artifacts = {Artifact{"a.bin", std::string("\x80", 1), true},
                      Artifact{"b.txt", "", false}};
  result.broker = BrokerSummary{"crm", 3, 1};
  result.advice = {
      Advice{"fan_out", "GET /v1/items/*", "m", 2, 1.5, 10},
      Advice{"x", "r", "m", 0, std::numeric_limits<double>::quiet_NaN(), 0},
      Advice{"x", "r", "m", 0, std::numeric_limits<double>::infinity(), 0},
      Advice{"x", "r", "m", 0, -std::numeric_limits<double>::infinity(), 0},
      Advice{"x", "r", "m", 0, -0.0, 0},
      Advice{"x", "r", "m", 0, 0.1, 0},
      Advice{"x", "r", "m", 0, std::numeric_limits<double>::denorm_min(), 0},
  };
  result.displays = {Display{"image/png", std::string("\x89PNG\r\n\x1a\n\x00", 9), 640, 480},
                     Display{"text/html", "<b>é</b>", 0, 0}};
  result.displays_truncated = true;
  result.record.session = SessionLink{std::string(64, 'e'), 2, std::string(64, 'f')};
  return result;
}

TEST(ResultJsonTest, WritesTheSpecShape) {
  EXPECT_EQ(
      ResultToJson(SpecExample()),
      R"({"provider":"linux","isolation":"container","environment":"sha256:abc",)"
      R"("duration_ms":11,"kind":"javascript","exit_code":0,"timed_out":false,"stdout":"42\n",)"
      R"("stderr":"","stdout_truncated":false,"stderr_truncated":false,"record":{"version":1,)"
      R"("request_sha256":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",)"
      R"("result_sha256":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",)"
      R"("provider":"linux","isolation":"container","environment":"sha256:abc",)"
      R"("policy":"cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc",)"
      R"("started_unix_ms":1764400000000,"ended_unix_ms":1764400000011,)"
      R"("record_sha256":"dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"}})");
}

TEST(ResultJsonTest, RoundTripsASimpleResult) {
  auto parsed = ParseResultJson(ResultToJson(SpecExample()));
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, SpecExample());
}

TEST(ResultJsonTest, RoundTripsEveryFieldBitForBit) {
  Result full = FullProject();
  std::string json = ResultToJson(full);
  EXPECT_THAT(json, HasSubstr(R"("stdout":{"base64":"/wA="})"));
  EXPECT_THAT(json, HasSubstr(R"("stderr":"é")"));
  EXPECT_THAT(json, HasSubstr(R"("stderr":{"base64":"7aCA"})"));
  EXPECT_THAT(json, HasSubstr(R"("added_latency_ms":"NaN")"));
  EXPECT_THAT(json, HasSubstr(R"("added_latency_ms":"Infinity")"));
  EXPECT_THAT(json, HasSubstr(R"("added_latency_ms":"-Infinity")"));
  EXPECT_THAT(json, HasSubstr(R"("added_latency_ms":-0.0)"));
  EXPECT_THAT(json, HasSubstr(R"("session":"eeee)"));
  auto parsed = ParseResultJson(json);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  // NaN != NaN, so compare the advice floats by bits and the rest by value.
  ASSERT_EQ(parsed->advice.size(), full.advice.size());
  for (size_t i = 0; i < full.advice.size(); ++i) {
    double want = full.advice[i].added_latency_ms;
    double got = parsed->advice[i].added_latency_ms;
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(got)) << i;
    } else {
      EXPECT_EQ(std::bit_cast<uint64_t>(got), std::bit_cast<uint64_t>(want)) << i;
    }
    parsed->advice[i].added_latency_ms = 0;
    full.advice[i].added_latency_ms = 0;
  }
  EXPECT_EQ(*parsed, full);
}

TEST(ResultJsonTest, OmitsOptionalFieldsWhenAbsent) {
  std::string json = ResultToJson(SpecExample());
  for (const char* key : {"outcome", "steps", "artifacts", "broker", "advice", "session",
                          "sequence", "previous_sha256", "displays", "displays_truncated"}) {
    EXPECT_THAT(json, Not(HasSubstr(std::string("\"") + key + "\""))) << key;
  }
  Result project = SpecExample();
  project.kind = PayloadKind::kProject;
  EXPECT_THAT(ResultToJson(project), HasSubstr(R"("steps":[],"artifacts":[])"));
}

TEST(ResultJsonTest, ReadsIntegersAsFloatsFromOtherLanguages) {
  // JavaScript writes 5.0 as 5.
  Result result = SpecExample();
  result.advice = {Advice{"p", "r", "m", 1, 5.0, 2}};
  std::string json = ResultToJson(result);
  std::string from_javascript = json;
  from_javascript.replace(from_javascript.find("5.0"), 3, "5");
  auto parsed = ParseResultJson(from_javascript);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, result);
}

TEST(ResultJsonTest, IgnoresUnknownFieldsButIsStrictAboutTypes) {
  std::string json = ResultToJson(SpecExample());
  std::string extended = R"({"future_field":{"x":[1,2]},)" + json.substr(1);
  auto parsed = ParseResultJson(extended);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(*parsed, SpecExample());

  for (
      auto [from, to] : std::initializer_list<std::pair<std::string, std::string>>{
          {R"("exit_code":0)", R"("exit_code":"0")"},
          {R"("exit_code":0)", R"("exit_code":0.5)"},
          {R"("timed_out":false)", R"("timed_out":0)"},
          {R"("isolation":"container","environment")", R"("isolation":"strong","environment")"},
          {R"("kind":"javascript")", R"("kind":"ruby")"},
          {R"("version":1)", R"("version":null)"},
          {R"("stdout":"42\n")", R"("stdout":{"base64":"not base64"})"},
          {R"(,"record_sha256":"dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd")",
           ""},
          {R"("ended_unix_ms":1764400000011)", R"("ended_unix_ms":1764400000011,"sequence":1)"},
      }) {
    std::string broken = json;
    size_t at = broken.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    broken.replace(at, from.size(), to);
    auto result = ParseResultJson(broken);
    ASSERT_FALSE(result.ok()) << broken;
    EXPECT_EQ(result.error().code(), ErrorCode::kDataLoss);
    EXPECT_FALSE(result.error().not_dispatched())
        << "an unreadable answer must never read as nothing ran";
  }
}

TEST(ResultJsonTest, DisplaysAreReadStrictly) {
  Result result = SpecExample();
  result.displays = {Display{"text/plain", "x", 0, 0}};
  std::string json = ResultToJson(result);
  EXPECT_THAT(json, HasSubstr(R"("displays":[{"mime":"text/plain","data":"x"}])"));
  auto parsed = ParseResultJson(json);
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->displays, result.displays);
  EXPECT_FALSE(parsed->displays_truncated);
  for (const char* bad :
       {R"([{"mime":"","data":"x"}])", R"([{"mime":"a/b","data":"x","width":-1}])",
        R"([{"mime":"a/b","data":"x","height":0}])", R"([{"mime":"a/b"}])",
        R"([{"mime":"a/b","data":"x","extra":1}])", R"(["x"])", R"({"mime":"a/b"})"}) {
    std::string broken = json;
    broken.replace(broken.find(R"([{"mime":"text/plain","data":"x"}])"),
                   std::string(R"([{"mime":"text/plain","data":"x"}])").size(), bad);
    auto refused = ParseResultJson(broken);
    ASSERT_FALSE(refused.ok()) << bad;
    EXPECT_EQ(refused.error().code(), ErrorCode::kDataLoss) << bad;
  }
}

}  // namespace
}  // namespace plimsoll
