#include "plimsoll/record.h"

#include <gtest/gtest.h>

#include <chrono>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "plimsoll/result.h"

namespace plimsoll {
namespace {

using std::chrono::milliseconds;

Request SampleRequest() {
  Request request;
  request.minimum_isolation = "container";
  request.timeout_ms = 5000;
  request.javascript = JavascriptPayload{"console.log(6*7)"};
  return request;
}

Result SampleResult() {
  Result result;
  result.provider = "linux";
  result.isolation = Tier::kContainer;
  result.environment = "sha256:e";
  result.stdout_bytes = "42\n";
  result.duration_ms = 11;
  return result;
}

TEST(RecordClockTest, EndIsStartPlusMonotonicElapsed) {
  auto origin = std::chrono::steady_clock::now();
  RecordClock clock(1000, origin);
  auto span = clock.StopAt(origin + milliseconds(250) + std::chrono::microseconds(900));
  EXPECT_EQ(span.started_unix_ms, 1000);
  EXPECT_EQ(span.ended_unix_ms, 1250);
  // A stop "before" the origin cannot end before the start.
  EXPECT_EQ(clock.StopAt(origin - milliseconds(5)).ended_unix_ms, 1000);
  // Near the end of time the end saturates instead of wrapping.
  RecordClock late(std::numeric_limits<int64_t>::max() - 1, origin);
  EXPECT_EQ(late.StopAt(origin + milliseconds(10)).ended_unix_ms,
            std::numeric_limits<int64_t>::max());
  RecordClock early(-5, origin);
  EXPECT_EQ(early.StopAt(origin + milliseconds(10)).ended_unix_ms, 5);
}

TEST(RecordClockTest, StartReadsTheWallClock) {
  auto before =
      std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  auto span = RecordClock::Start().Stop();
  EXPECT_GE(span.started_unix_ms, before);
  EXPECT_GE(span.ended_unix_ms, span.started_unix_ms);
}

TEST(MakeRecordTest, FillsEveryField) {
  Request request = SampleRequest();
  Result result = SampleResult();
  Record record =
      MakeRecord(request, result, "policy", {10, 21}, SessionLink{SessionIdDigest("s"), 1, ""});
  EXPECT_EQ(record.version, kRecordVersion);
  EXPECT_EQ(record.request_sha256, RequestDigest(request));
  EXPECT_EQ(record.result_sha256, ResultDigest(result));
  EXPECT_EQ(record.provider, "linux");
  EXPECT_EQ(record.isolation, Tier::kContainer);
  EXPECT_EQ(record.environment, "sha256:e");
  EXPECT_EQ(record.policy, "policy");
  EXPECT_EQ(record.started_unix_ms, 10);
  EXPECT_EQ(record.ended_unix_ms, 21);
  ASSERT_TRUE(record.session);
  EXPECT_EQ(record.session->session_sha256.size(), 64u);
  EXPECT_EQ(record.record_sha256, RecordDigest(record));
  EXPECT_EQ(MakeRecord(request, result, "p", {10, 5}).ended_unix_ms, 10);
}

TEST(DigestTest, DigestsAreLowercaseHexAndIgnoreTheirOwnOutput) {
  Result result = SampleResult();
  std::string before = ResultDigest(result);
  result.record = MakeRecord(SampleRequest(), result, "p", {1, 2});
  EXPECT_EQ(ResultDigest(result), before);  // the record is not part of the result digest
  Record record = result.record;
  record.record_sha256 = "anything";
  EXPECT_EQ(RecordDigest(record), result.record.record_sha256);
  for (const std::string& digest :
       {before, RequestDigest(SampleRequest()), PolicyDigest(Limits{})}) {
    EXPECT_EQ(digest.size(), 64u);
    EXPECT_EQ(digest.find_first_not_of("0123456789abcdef"), std::string::npos);
  }
}

// Each mutation must change the digest, and all must differ from each other.
template <typename T>
void ExpectEveryMutationCounts(const T& base, std::function<std::string(const T&)> digest,
                               const std::vector<std::function<void(T&)>>& mutations) {
  std::set<std::string> seen = {digest(base)};
  for (size_t i = 0; i < mutations.size(); ++i) {
    T changed = base;
    mutations[i](changed);
    EXPECT_TRUE(seen.insert(digest(changed)).second)
        << "mutation " << i << " did not change the digest";
  }
}

TEST(DigestTest, RequestDigestCoversEveryCoveredField) {
  Request base = SampleRequest();
  base.project = ProjectPayload{.files = {{"a", "b"}}, .steps = {{"c", "d"}}, .artifacts = {"e"}};
  base.cell = CellPayload{"python", "x"};
  base.python = PythonPayload{"y"};
  base.module = ModulePayload{"cartpole", {{0.0, 1}}, 5, 0.01};
  ExpectEveryMutationCounts<Request>(base, RequestDigest,
                                     {
                                         [](Request& r) { r.protocol = 2; },
                                         [](Request& r) { r.minimum_isolation = "vm"; },
                                         [](Request& r) { r.timeout_ms = -5000; },
                                         [](Request& r) { r.grant_profile = "g"; },
                                         [](Request& r) { r.javascript->code += " "; },
                                         [](Request& r) { r.javascript.reset(); },
                                         [](Request& r) { r.python->code = ""; },
                                         [](Request& r) { r.python.reset(); },
                                         [](Request& r) { r.project->files[0].path = "b"; },
                                         [](Request& r) { r.project->files[0].content = "a"; },
                                         [](Request& r) {
                                           r.project->files.push_back({"", ""});
                                         },
                                         [](Request& r) { r.project->steps[0][1] = "e"; },
                                         [](Request& r) { r.project->steps[0].push_back(""); },
                                         [](Request& r) { r.project->steps.push_back({}); },
                                         [](Request& r) { r.project->artifacts.clear(); },
                                         [](Request& r) { r.project.reset(); },
                                         [](Request& r) { r.cell->language = "javascript"; },
                                         [](Request& r) { r.cell->code = "y"; },
                                         [](Request& r) { r.cell.reset(); },
                                         [](Request& r) { r.module->model = "shower"; },
                                         [](Request& r) { r.module->rows[0][0] = -0.0; },
                                         [](Request& r) { r.module->rows[0].push_back(0); },
                                         [](Request& r) { r.module->rows.push_back({}); },
                                         [](Request& r) { r.module->rows.clear(); },
                                         [](Request& r) { r.module->end_time = 6; },
                                         [](Request& r) { r.module->step = 0.02; },
                                         [](Request& r) { r.module.reset(); },
                                     });
  // Deliberately not covered (SPEC §5's list): trace_id, environment.
  Request other = base;
  other.trace_id = "t";
  other.environment = "sha256:x";
  EXPECT_EQ(RequestDigest(other), RequestDigest(base));
}

TEST(DigestTest, GroupsAreFramedByCounts) {
  // Moving an argument between steps changes the digest even though the
  // flattened argument list is the same.
  Request a, b;
  a.project = ProjectPayload{.files = {}, .steps = {{"x", "y"}, {"z"}}, .artifacts = {}};
  b.project = ProjectPayload{.files = {}, .steps = {{"x"}, {"y", "z"}}, .artifacts = {}};
  EXPECT_NE(RequestDigest(a), RequestDigest(b));
}

TEST(DigestTest, ResultDigestCoversEveryFieldAndPresence) {
  Result base = SampleResult();
  base.kind = PayloadKind::kProject;
  base.outcome = ProjectOutcome::kCompleted;
  base.steps = {StepResult{{"a"}, 0, false, "o", "e", false, false, 1}};
  base.artifacts = {Artifact{"p", "c", false}};
  base.broker = BrokerSummary{"g", 1, 0};
  base.advice = {Advice{"fan_out", "r", "m", 1, 2.5, 3}};
  ExpectEveryMutationCounts<Result>(base, ResultDigest,
                                    {
                                        [](Result& r) { r.provider = "oci"; },
                                        [](Result& r) { r.isolation = Tier::kKernel; },
                                        [](Result& r) { r.environment = ""; },
                                        [](Result& r) { r.kind = PayloadKind::kCell; },
                                        [](Result& r) { r.exit_code = -1; },
                                        [](Result& r) { r.timed_out = true; },
                                        [](Result& r) { r.stdout_bytes = "42"; },
                                        [](Result& r) { r.stderr_bytes = "!"; },
                                        [](Result& r) { r.stdout_truncated = true; },
                                        [](Result& r) { r.stderr_truncated = true; },
                                        [](Result& r) { r.duration_ms = 12; },
                                        [](Result& r) { r.outcome = ProjectOutcome::kSetupFailed; },
                                        [](Result& r) { r.outcome.reset(); },
                                        [](Result& r) { r.steps[0].command.push_back("b"); },
                                        [](Result& r) { r.steps[0].exit_code = 2; },
                                        [](Result& r) { r.steps[0].timed_out = true; },
                                        [](Result& r) { r.steps[0].stdout_bytes = ""; },
                                        [](Result& r) { r.steps[0].stderr_bytes = ""; },
                                        [](Result& r) { r.steps[0].stdout_truncated = true; },
                                        [](Result& r) { r.steps[0].stderr_truncated = true; },
                                        [](Result& r) { r.steps[0].duration_ms = 0; },
                                        [](Result& r) { r.steps.clear(); },
                                        [](Result& r) { r.artifacts[0].path = "q"; },
                                        [](Result& r) { r.artifacts[0].content = "d"; },
                                        [](Result& r) { r.artifacts[0].truncated = true; },
                                        [](Result& r) { r.artifacts.clear(); },
                                        [](Result& r) { r.broker->profile = ""; },
                                        [](Result& r) { r.broker->calls = 2; },
                                        [](Result& r) { r.broker->denied = 1; },
                                        [](Result& r) { r.broker.reset(); },
                                        [](Result& r) { r.advice[0].pattern = "repeated_read"; },
                                        [](Result& r) { r.advice[0].route = "s"; },
                                        [](Result& r) { r.advice[0].message = ""; },
                                        [](Result& r) { r.advice[0].extra_calls = 0; },
                                        [](Result& r) { r.advice[0].added_latency_ms = -2.5; },
                                        [](Result& r) { r.advice[0].bytes = 4; },
                                        [](Result& r) { r.advice.clear(); },
                                    });
}

TEST(DigestTest, NaNsAreOneValueButSignedZerosAreTwo) {
  Result a = SampleResult();
  a.advice = {Advice{"p", "r", "m", 0, std::numeric_limits<double>::quiet_NaN(), 0}};
  Result b = a;
  b.advice[0].added_latency_ms = -std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(ResultDigest(a), ResultDigest(b));
  a.advice[0].added_latency_ms = 0.0;
  b.advice[0].added_latency_ms = -0.0;
  EXPECT_NE(ResultDigest(a), ResultDigest(b));
}

TEST(DigestTest, RecordDigestCoversEveryField) {
  Record base = MakeRecord(SampleRequest(), SampleResult(), "p", {1, 2},
                           SessionLink{std::string(64, 'a'), 2, std::string(64, 'b')});
  ExpectEveryMutationCounts<Record>(base, RecordDigest,
                                    {
                                        [](Record& r) { r.version = 2; },
                                        [](Record& r) { r.request_sha256[0] = 'x'; },
                                        [](Record& r) { r.result_sha256[0] = 'x'; },
                                        [](Record& r) { r.provider = "x"; },
                                        [](Record& r) { r.isolation = Tier::kVm; },
                                        [](Record& r) { r.environment = "x"; },
                                        [](Record& r) { r.policy = "x"; },
                                        [](Record& r) { r.started_unix_ms = 0; },
                                        [](Record& r) { r.ended_unix_ms = 3; },
                                        [](Record& r) { r.session->session_sha256 = ""; },
                                        [](Record& r) { r.session->sequence = 3; },
                                        [](Record& r) { r.session->previous_sha256 = ""; },
                                        [](Record& r) { r.session.reset(); },
                                    });
}

TEST(DigestTest, PolicyDigestCoversEveryLimit) {
  std::vector<std::function<void(Limits&)>> mutations;
  for (int64_t Limits::*member :
       {&Limits::memory_bytes, &Limits::cpus_millis, &Limits::pids, &Limits::tmp_bytes,
        &Limits::work_bytes, &Limits::output_cap_bytes, &Limits::snippet_timeout_default_ms,
        &Limits::snippet_timeout_max_ms, &Limits::project_timeout_default_ms,
        &Limits::project_timeout_max_ms, &Limits::run_ceiling_ms, &Limits::max_code_bytes,
        &Limits::max_project_files, &Limits::max_project_bytes, &Limits::max_artifacts,
        &Limits::max_artifact_bytes}) {
    mutations.push_back([member](Limits& l) { l.*member += 1; });
  }
  ExpectEveryMutationCounts<Limits>(Limits{}, PolicyDigest, mutations);
}

}  // namespace
}  // namespace plimsoll
