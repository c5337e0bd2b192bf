#include "guest/report_bounds.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace plimsoll::guest {
namespace {

using Clock = std::chrono::steady_clock;

const std::string kKey(kReportKeyBytes, 'k');

Job TwoStepJob() {
  Job job;
  job.steps = {{"python3", "main.py"}, {"ls", "-l"}};
  job.artifacts = {"out.txt", "log.txt"};
  job.timeout_ms = 5000;
  job.output_cap_bytes = 1024;
  job.max_artifact_bytes = 4096;
  job.report_key = kKey;
  return job;
}

StepResult Step(std::vector<std::string> command, std::string out = "ok\n") {
  StepResult step;
  step.command = std::move(command);
  step.stdout_bytes = std::move(out);
  return step;
}

Report HonestReport() {
  Report report;
  report.steps = {Step({"python3", "main.py"}), Step({"ls", "-l"})};
  report.artifacts = {{"out.txt", "data", false}};
  report.detail = "The artifact \"log.txt\" was not brought back: it does not exist.\n";
  return report;
}

// Sends `bytes` sealed, as an agent does, and reads it as the host does.
Expected<Report> Exchange(const Job& job, const std::string& bytes) {
  int fds[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
  auto deadline = Clock::now() + std::chrono::seconds(10);
  std::thread agent([&] {
    (void)WriteFrame(fds[1], bytes, deadline);
    (void)WriteFrame(fds[1], Seal(kKey, bytes), deadline);
  });
  auto report = ReadSealedReport(fds[0], job, deadline);
  agent.join();
  close(fds[0]);
  close(fds[1]);
  return report;
}

TEST(ReportBounds, AnHonestReportIsAccepted) {
  auto report = Exchange(TwoStepJob(), EncodeReport(HonestReport()));
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  EXPECT_EQ(report->steps.size(), 2u);
}

TEST(ReportBounds, AReportAtEveryCapStillFits) {
  Job job = TwoStepJob();
  Report report = HonestReport();
  for (StepResult& step : report.steps) {
    step.stdout_bytes.assign(static_cast<size_t>(job.output_cap_bytes), '\x01');
    step.stderr_bytes.assign(static_cast<size_t>(job.output_cap_bytes), '"');
  }
  report.artifacts = {{"out.txt", std::string(2048, 'a'), false},
                      {"log.txt", std::string(2048, 'b'), true}};
  report.detail = std::string(64 * 1024, '\x02');  // escaped 6x in JSON
  std::string bytes = EncodeReport(report);
  EXPECT_LE(bytes.size(), ReportBoundsFor(job).max_frame_bytes);
  auto read = Exchange(job, bytes);
  EXPECT_TRUE(read.ok()) << read.error().ToString();
}

// Issue 13: a report is bounded before it is parsed into a DOM. A taken-over
// agent's frame of many tiny strings (within kMaxFrameBytes) is refused by
// the shape check; before, it was parsed whole.
TEST(ReportBounds, AFrameOfManySmallStringsIsRefusedBeforeParsing) {
  std::string bytes =
      "{\"version\":1,\"outcome\":\"completed\",\"steps\":[],\"artifacts\":[],"
      "\"detail\":\"\",\"x\":[";
  for (int i = 0; i < 100'000; ++i) bytes += "\"\",";
  bytes += "\"\"]}";
  ASSERT_LT(bytes.size(), kMaxFrameBytes);
  Status shape = CheckReportShape(bytes, ReportBoundsFor(TwoStepJob()));
  ASSERT_FALSE(shape.ok());
  EXPECT_NE(shape.error().message().find("strings"), std::string::npos);
  auto read = Exchange(TwoStepJob(), bytes);
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code(), ErrorCode::kDataLoss);
}

TEST(ReportBounds, AFrameLargerThanTheJobAllowsIsRefused) {
  Report report = HonestReport();
  // Past everything the job allows, displays included (their 4 MiB cap, ~5.6 MB as base64).
  report.detail = std::string(12 << 20, 'x');
  std::string bytes = EncodeReport(report);
  ASSERT_LT(bytes.size(), kMaxFrameBytes);
  auto read = Exchange(TwoStepJob(), bytes);
  ASSERT_FALSE(read.ok());
  EXPECT_NE(read.error().message().find("bytes"), std::string::npos) << read.error().message();
}

TEST(ReportBounds, DeepNestingIsRefused) {
  std::string bytes(1000, '[');
  EXPECT_FALSE(CheckReportShape(bytes, ReportBoundsFor(TwoStepJob())).ok());
  EXPECT_EQ(ScanJsonShape("{\"a\":[\"[{\",{}]}").depth, 3u);  // brackets in strings do not count
  EXPECT_EQ(ScanJsonShape("{\"a\\\"\":\"b\"}").strings, 2u);  // escaped quotes
}

// Issue 13: the report may describe only what the job asked for.
TEST(ReportBounds, StepsArtifactsAndOutputsTheJobDidNotAskForAreRefused) {
  Job job = TwoStepJob();
  Report more_steps = HonestReport();
  more_steps.steps.push_back(Step({"rm", "-rf", "/"}));
  EXPECT_FALSE(CheckReportAgainstJob(more_steps, job).ok());

  Report other_command = HonestReport();
  other_command.steps[0].command = {"python3", "evil.py"};
  EXPECT_FALSE(CheckReportAgainstJob(other_command, job).ok());

  Report too_much_output = HonestReport();
  too_much_output.steps[1].stderr_bytes.assign(1025, 'e');
  EXPECT_FALSE(CheckReportAgainstJob(too_much_output, job).ok());

  Report other_file = HonestReport();
  other_file.artifacts.push_back({"../../etc/shadow", "x", false});
  EXPECT_FALSE(CheckReportAgainstJob(other_file, job).ok());

  Report twice = HonestReport();
  twice.artifacts.push_back({"out.txt", "again", false});
  EXPECT_FALSE(CheckReportAgainstJob(twice, job).ok());

  Report over_budget = HonestReport();
  over_budget.artifacts = {{"out.txt", std::string(3000, 'a'), false},
                           {"log.txt", std::string(3000, 'b'), false}};
  EXPECT_FALSE(CheckReportAgainstJob(over_budget, job).ok());

  Report fewer_steps = HonestReport();  // a failing first step stops the rest
  fewer_steps.steps.pop_back();
  EXPECT_TRUE(CheckReportAgainstJob(fewer_steps, job).ok());

  auto read = Exchange(job, EncodeReport(other_command));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code(), ErrorCode::kDataLoss);
}

}  // namespace
}  // namespace plimsoll::guest
