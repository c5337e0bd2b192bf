#include "broker/advisor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace plimsoll::broker {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

Profile Inventory() {
  auto grants = ParseGrants(R"(version: 1
profiles:
  inventory:
    base_url: https://inventory.example.com
    allow: [GET /items, GET /items/*, GET /stock/*, POST /items/*/notes]
    allowed_callers: [alice]
    token: {source: static, env: TOKEN}
    batch_of:
      GET /items/*: GET /items
)",
                            "advisor_test");
  EXPECT_TRUE(grants.ok()) << grants.error().ToString();
  return grants->profiles().at("inventory");
}

TraceEntry Read(std::string route, std::string fingerprint, double latency_ms,
                int64_t response_bytes, int status = 200) {
  TraceEntry entry;
  entry.method = "GET";
  entry.route = std::move(route);
  entry.status = status;
  entry.allowed = true;
  entry.latency_ms = latency_ms;
  entry.response_bytes = response_bytes;
  entry.fingerprint = std::move(fingerprint);
  return entry;
}

TEST(AdvisorTest, FindsFanOutOverAPerItemRoute) {
  // The examples/advisor/ shape: 12 items read one by one after the list.
  std::vector<TraceEntry> trace;
  trace.push_back(Read("/items", "list", 9, 1200));
  for (int i = 0; i < 12; ++i) {
    trace.push_back(Read("/items/*", "item" + std::to_string(i), 10 + i, 100));
  }
  auto findings = Advise(trace, Inventory());
  ASSERT_EQ(findings.size(), 1u);
  const Advice& advice = findings[0].advice;
  EXPECT_EQ(advice.pattern, "fan_out");
  EXPECT_EQ(advice.route, "GET /items/*");
  EXPECT_EQ(advice.extra_calls, 11);
  EXPECT_DOUBLE_EQ(advice.added_latency_ms, 11 * 15.5);  // median of 10..21
  EXPECT_EQ(advice.bytes, 1200);
  EXPECT_THAT(advice.message, HasSubstr("GET /items/* 12 times"));
  EXPECT_THAT(advice.message, HasSubstr("call GET /items once"));
  EXPECT_TRUE(findings[0].agent_fixable);
  EXPECT_EQ(AgentAdvice(findings), std::vector<Advice>{advice});
}

TEST(AdvisorTest, NeedsThreeAnsweredCallsAndAGrantedCollection) {
  std::vector<TraceEntry> two = {Read("/items/*", "a", 5, 10), Read("/items/*", "b", 5, 10)};
  EXPECT_THAT(Advise(two, Inventory()), IsEmpty());

  // Denied and unanswered calls do not count.
  std::vector<TraceEntry> mixed = two;
  TraceEntry denied = Read("/items/*", "c", 0, 0, 0);
  denied.allowed = false;
  denied.refusal = CallRefusal::kMaxCalls;
  mixed.push_back(denied);
  TraceEntry timed_out = Read("/items/*", "d", 0, 0, 0);
  timed_out.refusal = CallRefusal::kUpstreamTimeout;
  mixed.push_back(timed_out);
  EXPECT_THAT(Advise(mixed, Inventory()), IsEmpty());

  // A per-item route without a batch_of hint is not fan-out.
  std::vector<TraceEntry> stock = {Read("/stock/*", "a", 5, 10), Read("/stock/*", "b", 5, 10),
                                   Read("/stock/*", "c", 5, 10)};
  EXPECT_THAT(Advise(stock, Inventory()), IsEmpty());

  // The collection must still be granted.
  Profile without_collection = Inventory();
  without_collection.allow.erase(without_collection.allow.begin());
  std::vector<TraceEntry> three = two;
  three.push_back(Read("/items/*", "c", 5, 10));
  EXPECT_THAT(Advise(three, without_collection), IsEmpty());
  EXPECT_EQ(Advise(three, Inventory()).size(), 1u);
}

TEST(AdvisorTest, FindsRepeatedIdenticalReads) {
  std::vector<TraceEntry> trace = {
      Read("/stock/*", "same", 10, 50), Read("/stock/*", "same", 30, 50),
      Read("/stock/*", "same", 20, 50), Read("/stock/*", "other", 99, 7),
      Read("/items", "list", 4, 500),   Read("/items", "list", 6, 500),
  };
  auto findings = Advise(trace, Inventory());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].advice.pattern, "repeated_read");
  EXPECT_EQ(findings[0].advice.route, "GET /items");
  EXPECT_EQ(findings[0].advice.extra_calls, 1);
  EXPECT_DOUBLE_EQ(findings[0].advice.added_latency_ms, 5);
  EXPECT_EQ(findings[0].advice.bytes, 1000);
  EXPECT_THAT(findings[0].advice.message, HasSubstr("1 GET /items request identical"));
  EXPECT_EQ(findings[1].advice.route, "GET /stock/*");
  EXPECT_EQ(findings[1].advice.extra_calls, 2);
  EXPECT_DOUBLE_EQ(findings[1].advice.added_latency_ms, 2 * 20.0);
  EXPECT_EQ(findings[1].advice.bytes, 150);  // the unrepeated read is not counted
  EXPECT_THAT(findings[1].advice.message, HasSubstr("2 GET /stock/* requests identical"));
  EXPECT_TRUE(findings[1].agent_fixable);
}

TEST(AdvisorTest, OnlyReadsCountAsRepeatedReads) {
  TraceEntry note = Read("/items/*/notes", "same", 5, 10);
  note.method = "POST";
  std::vector<TraceEntry> trace = {note, note, note};
  EXPECT_THAT(Advise(trace, Inventory()), IsEmpty());
  std::vector<TraceEntry> unfingerprinted = {Read("/stock/*", "", 5, 10),
                                             Read("/stock/*", "", 5, 10)};
  EXPECT_THAT(Advise(unfingerprinted, Inventory()), IsEmpty());
}

TEST(AdvisorTest, ReportsBothPatternsFanOutFirst) {
  std::vector<TraceEntry> trace;
  for (int i = 0; i < 4; ++i) trace.push_back(Read("/items/*", "same", 10, 100));
  auto findings = Advise(trace, Inventory());
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].advice.pattern, "fan_out");
  EXPECT_EQ(findings[1].advice.pattern, "repeated_read");
  EXPECT_EQ(findings[1].advice.extra_calls, 3);
}

TEST(AdvisorTest, FindingsNeverCarryFingerprintsOrPaths) {
  std::vector<TraceEntry> trace;
  for (int i = 0; i < 5; ++i) trace.push_back(Read("/items/*", "f1ngerpr1nt", 10, 100));
  for (const auto& finding : Advise(trace, Inventory())) {
    EXPECT_THAT(finding.advice.message, Not(HasSubstr("f1ngerpr1nt")));
    EXPECT_THAT(finding.advice.route, Not(HasSubstr("f1ngerpr1nt")));
  }
}

}  // namespace
}  // namespace plimsoll::broker
