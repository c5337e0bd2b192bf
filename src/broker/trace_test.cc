#include "broker/trace.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <thread>
#include <vector>

namespace plimsoll::broker {
namespace {

using ::testing::ElementsAre;
using ::testing::MatchesRegex;

CanonicalPath Path(std::string_view raw) {
  auto path = CanonicalizePath(raw);
  EXPECT_TRUE(path.ok()) << raw;
  return *path;
}

TraceEntry Call(std::string method, std::string route, int status, bool allowed = true,
                CallRefusal refusal = CallRefusal::kNone) {
  TraceEntry entry;
  entry.method = std::move(method);
  entry.route = std::move(route);
  entry.status = status;
  entry.allowed = allowed;
  entry.refusal = refusal;
  return entry;
}

TEST(CallRefusalTest, HasShortStableCodes) {
  EXPECT_EQ(CallRefusalCode(CallRefusal::kNone), "");
  EXPECT_EQ(CallRefusalCode(CallRefusal::kNotAllowed), "not_allowed");
  EXPECT_EQ(CallRefusalCode(CallRefusal::kBadPath), "bad_path");
  EXPECT_EQ(CallRefusalCode(CallRefusal::kMaxCalls), "max_calls");
  EXPECT_EQ(CallRefusalCode(CallRefusal::kRouteMaxCalls), "route_max_calls");
  EXPECT_EQ(CallRefusalCode(CallRefusal::kCircuitOpen), "circuit_open");
  EXPECT_EQ(CallRefusalCode(CallRefusal::kBodyTooLarge), "body_too_large");
  EXPECT_EQ(CallRefusalCode(CallRefusal::kUpstreamTimeout), "upstream_timeout");
  EXPECT_EQ(CallRefusalCode(CallRefusal::kUpstreamError), "upstream_error");
}

TEST(CallTraceTest, MethodsAreNamedOrOther) {
  EXPECT_EQ(TraceMethodName("GET"), "GET");
  EXPECT_EQ(TraceMethodName("DELETE"), "DELETE");
  EXPECT_EQ(TraceMethodName("get"), "OTHER");
  EXPECT_EQ(TraceMethodName("X-SECRET-GUEST-TEXT"), "OTHER");
}

TEST(CallTraceTest, FingerprintsAreKeyedAndSeparateEveryPart) {
  CallTrace trace(std::string(32, 'k'));
  std::string fingerprint = trace.Fingerprint("GET", Path("/items/1"), "");
  EXPECT_THAT(fingerprint, MatchesRegex("[0-9a-f]{64}"));
  // The same request, even spelled differently, is the same fingerprint.
  EXPECT_EQ(trace.Fingerprint("GET", Path("/items/%31"), ""), fingerprint);
  EXPECT_NE(trace.Fingerprint("GET", Path("/items/2"), ""), fingerprint);
  EXPECT_NE(trace.Fingerprint("HEAD", Path("/items/1"), ""), fingerprint);
  EXPECT_NE(trace.Fingerprint("GET", Path("/items/1"), "x"), fingerprint);
  // Framing: moving bytes between path and body changes the fingerprint.
  EXPECT_NE(trace.Fingerprint("POST", Path("/a"), "b"), trace.Fingerprint("POST", Path("/ab"), ""));
  // Another run's key gives another fingerprint for the same request.
  CallTrace other(std::string(32, 'j'));
  EXPECT_NE(other.Fingerprint("GET", Path("/items/1"), ""), fingerprint);
  // Fresh traces get fresh random keys.
  auto first = CallTrace::Create();
  auto second = CallTrace::Create();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE((*first)->Fingerprint("GET", Path("/items/1"), ""),
            (*second)->Fingerprint("GET", Path("/items/1"), ""));
}

TEST(CallTraceTest, SummarizesByRowWithTotals) {
  CallTrace trace(std::string(32, 'k'));
  trace.Record(Call("GET", "/items/*", 200));
  trace.Record(Call("GET", "/items/*", 200));
  trace.Record(Call("GET", "/items/*", 404));
  trace.Record(Call("GET", "/items", 200));
  trace.Record(Call("GET", "", 0, false, CallRefusal::kNotAllowed));
  trace.Record(Call("GET", "", 0, false, CallRefusal::kBadPath));
  trace.Record(Call("GET", "", 0, false, CallRefusal::kBadPath));
  trace.Record(Call("GET", "/items/*", 0, true, CallRefusal::kUpstreamTimeout));
  TraceSummary summary = trace.Summarize();
  EXPECT_EQ(summary.calls, 8);
  EXPECT_EQ(summary.denied, 3);
  EXPECT_EQ(summary.rows_dropped, 0);
  EXPECT_THAT(summary.rows,
              ElementsAre(TraceSummaryRow{"GET", "", 0, false, "bad_path", 2},
                          TraceSummaryRow{"GET", "", 0, false, "not_allowed", 1},
                          TraceSummaryRow{"GET", "/items", 200, true, "", 1},
                          TraceSummaryRow{"GET", "/items/*", 0, true, "upstream_timeout", 1},
                          TraceSummaryRow{"GET", "/items/*", 200, true, "", 2},
                          TraceSummaryRow{"GET", "/items/*", 404, true, "", 1}));
  EXPECT_EQ(trace.Entries().size(), 8u);
  EXPECT_EQ(trace.Entries()[2].status, 404);
}

TEST(CallTraceTest, KeepsTheMostFrequentRowsAndCountsTheRest) {
  CallTrace trace(std::string(32, 'k'));
  // 300 distinct rows (statuses 200..499); the first 10 are called twice.
  for (int status = 200; status < 500; ++status) {
    trace.Record(Call("GET", "/items/*", status));
    if (status < 210) trace.Record(Call("GET", "/items/*", status));
  }
  TraceSummary summary = trace.Summarize();
  EXPECT_EQ(summary.calls, 310);
  EXPECT_EQ(summary.rows.size(), kMaxSummaryRows);
  EXPECT_EQ(summary.rows_dropped, 300 - static_cast<int64_t>(kMaxSummaryRows));
  EXPECT_EQ(summary.rows.front().status, 200);
  EXPECT_EQ(summary.rows.front().count, 2);
  // Ties are broken by the smaller key: statuses 200..455 stay.
  EXPECT_EQ(summary.rows.back().status, 455);
  EXPECT_TRUE(std::is_sorted(summary.rows.begin(), summary.rows.end(),
                             [](const auto& a, const auto& b) { return a.status < b.status; }));
  EXPECT_EQ(trace.Summarize(), summary);  // deterministic
}

TEST(CallTraceTest, KeepsABoundedNumberOfEntriesButCountsEveryCall) {
  CallTrace trace(std::string(32, 'k'));
  for (std::size_t i = 0; i < kMaxTraceEntries + 10; ++i) {
    trace.Record(Call("GET", "", 0, false, CallRefusal::kMaxCalls));
  }
  EXPECT_EQ(trace.Entries().size(), kMaxTraceEntries);
  EXPECT_EQ(trace.entries_dropped(), 10);
  EXPECT_EQ(trace.Summarize().calls, static_cast<int64_t>(kMaxTraceEntries + 10));
  EXPECT_EQ(trace.Summarize().denied, static_cast<int64_t>(kMaxTraceEntries + 10));
}

TEST(CallTraceTest, RecordsFromSeveralThreads) {
  CallTrace trace(std::string(32, 'k'));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&trace] {
      for (int i = 0; i < 250; ++i) trace.Record(Call("GET", "/items/*", 200));
    });
  }
  for (auto& thread : threads) thread.join();
  TraceSummary summary = trace.Summarize();
  EXPECT_EQ(summary.calls, 1000);
  ASSERT_EQ(summary.rows.size(), 1u);
  EXPECT_EQ(summary.rows[0].count, 1000);
}

}  // namespace
}  // namespace plimsoll::broker
