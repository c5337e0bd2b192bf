#include "guest/host_calls.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "guest/protocol.h"
#include "guest/report_bounds.h"

namespace plimsoll::guest {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

Clock::time_point Soon() {
  return Clock::now() + std::chrono::seconds(5);
}

// Answers every call with the path echoed in the body; remembers them.
class EchoCalls final : public GrantedCalls {
 public:
  HostCallAnswer Call(std::string_view method, std::string_view path, std::string_view body,
                      std::string_view content_type, Clock::time_point) override {
    seen.push_back(std::string(method) + " " + std::string(path) + " " + std::string(body) + " " +
                   std::string(content_type));
    if (path == "/refused") {
      return HostCallAnswer{.status = 403, .refused = "not_allowed", .message = "No."};
    }
    return HostCallAnswer{.status = 200,
                          .content_type = "application/json",
                          .body = std::string("{\"path\":\"") + std::string(path) + "\"}"};
  }
  BrokerSummary Summary() const override { return {}; }
  std::vector<::plimsoll::Advice> Advice() const override { return {}; }
  std::vector<std::string> seen;
};

TEST(HostCalls, ACallAndItsAnswerRoundTripWithAnyBytes) {
  HostCall call{.id = 7,
                .method = "POST",
                .path = "/items/1",
                .content_type = "application/octet-stream",
                .body = std::string("\0\xff\x01", 3)};
  std::string frame = EncodeHostCall(call);
  EXPECT_TRUE(IsHostCallFrame(frame));
  auto decoded = DecodeHostCall(frame);
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_EQ(decoded->id, 7);
  EXPECT_EQ(decoded->body, call.body);
  EXPECT_EQ(decoded->content_type, call.content_type);

  HostCallAnswer answer{.status = 201,
                        .content_type = "text/plain",
                        .body = std::string("\xfe", 1),
                        .truncated = true,
                        .refused = "",
                        .message = ""};
  std::string answer_frame = EncodeHostAnswer(7, answer);
  EXPECT_FALSE(IsHostCallFrame(answer_frame));
  auto back = DecodeHostAnswer(answer_frame, 7);
  ASSERT_TRUE(back.ok()) << back.error().ToString();
  EXPECT_EQ(back->status, 201);
  EXPECT_EQ(back->body, answer.body);
  EXPECT_TRUE(back->truncated);
  // An answer to another call is refused.
  EXPECT_FALSE(DecodeHostAnswer(answer_frame, 8).ok());
}

TEST(HostCalls, DecodingIsStrict) {
  const std::string prefix(kHostCallPrefix);
  for (const std::string& frame : std::vector<std::string>{
           "", "{}", prefix, prefix + "[]", prefix + "not json",
           prefix + R"({"id":1,"method":"GET","path":"/x","content_type":"","body":"","x":1})",
           prefix + R"({"id":0,"method":"GET","path":"/x","content_type":"","body":""})",
           prefix + R"({"id":1,"method":"GET","path":"/x","content_type":""})",
           prefix + R"({"id":1,"method":7,"path":"/x","content_type":"","body":""})",
           prefix + R"({"id":1,"id":2,"method":"GET","path":"/x","content_type":"","body":""})",
           prefix + R"({"id":1,"method":"GET","path":")" + std::string(kMaxHostCallPath + 1, 'a') +
               R"(","content_type":"","body":""})"}) {
    auto decoded = DecodeHostCall(frame);
    EXPECT_FALSE(decoded.ok()) << frame.substr(0, 80);
    if (!decoded.ok()) {
      EXPECT_EQ(decoded.error().code(), ErrorCode::kDataLoss);
    }
  }
}

// The host's loop over a socketpair: the agent's calls are answered in
// order, then its report is read as usual.
TEST(HostCalls, TheHostAnswersEveryCallBeforeReadingTheReport) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  const std::string key(kReportKeyBytes, 'k');
  std::vector<HostCallAnswer> agent_saw;
  std::thread agent([&] {
    for (int64_t id = 1; id <= 3; ++id) {
      HostCall call{.id = id,
                    .method = "GET",
                    .path = id == 2 ? "/refused" : "/items/1",
                    .content_type = "",
                    .body = ""};
      ASSERT_TRUE(WriteFrame(fds[1], EncodeHostCall(call), Soon()).ok());
      auto frame = ReadFrame(fds[1], Soon());
      ASSERT_TRUE(frame.ok());
      auto answer = DecodeHostAnswer(*frame, id);
      ASSERT_TRUE(answer.ok()) << answer.error().ToString();
      agent_saw.push_back(*answer);
    }
    std::string report = EncodeReport(Report{});
    ASSERT_TRUE(WriteFrame(fds[1], report, Soon()).ok());
    ASSERT_TRUE(WriteFrame(fds[1], Seal(key, report), Soon()).ok());
  });
  EchoCalls calls;
  auto report = ReadSealedFrame(fds[0], key, Soon(), &calls);
  agent.join();
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  EXPECT_TRUE(DecodeReport(*report).ok());
  ASSERT_EQ(calls.seen.size(), 3u);
  ASSERT_EQ(agent_saw.size(), 3u);
  EXPECT_EQ(agent_saw[0].body, R"({"path":"/items/1"})");
  EXPECT_EQ(agent_saw[1].refused, "not_allowed");
  close(fds[0]);
  close(fds[1]);
}

TEST(HostCalls, ACallFromARunWithoutAGrantMakesTheReportUntrusted) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  const std::string key(kReportKeyBytes, 'k');
  ASSERT_TRUE(
      WriteFrame(
          fds[1],
          EncodeHostCall({.id = 1, .method = "GET", .path = "/x", .content_type = "", .body = ""}),
          Soon())
          .ok());
  auto report = ReadSealedFrame(fds[0], key, Soon(), /*calls=*/nullptr);
  ASSERT_FALSE(report.ok());
  EXPECT_EQ(report.error().code(), ErrorCode::kDataLoss);
  EXPECT_THAT(report.error().message(), HasSubstr("no grant"));

  // The same through the job: a job without host_calls passes no calls on.
  ASSERT_TRUE(
      WriteFrame(
          fds[1],
          EncodeHostCall({.id = 1, .method = "GET", .path = "/x", .content_type = "", .body = ""}),
          Soon())
          .ok());
  Job job;
  job.report_key = key;
  EchoCalls calls;
  auto through_job = ReadSealedReport(fds[0], job, Soon(), &calls);
  EXPECT_FALSE(through_job.ok());
  EXPECT_TRUE(calls.seen.empty());
  close(fds[0]);
  close(fds[1]);
}

TEST(HostCalls, TheJobSaysWhetherTheRelayRuns) {
  Job job;
  job.report_key = std::string(kReportKeyBytes, 'k');
  job.timeout_ms = 1000;
  job.output_cap_bytes = 1024;
  EXPECT_THAT(EncodeJob(job), ::testing::Not(HasSubstr("host_calls")));
  job.host_calls = true;
  auto decoded = DecodeJob(EncodeJob(job));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_TRUE(decoded->host_calls);
}

}  // namespace
}  // namespace plimsoll::guest
