#include "guest/protocol.h"
#include "guest/report_bounds.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

namespace plimsoll::guest {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

const std::string kKey(kReportKeyBytes, 'k');

struct Channel {
  int host = -1;
  int guest = -1;
  Channel() {
    int fds[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
    host = fds[0];
    guest = fds[1];
  }
  ~Channel() {
    if (host >= 0) close(host);
    if (guest >= 0) close(guest);
  }
  void CloseGuest() {
    close(guest);
    guest = -1;
  }
};

Clock::time_point Soon() {
  return Clock::now() + std::chrono::seconds(5);
}

void WriteRaw(int fd, std::string_view bytes) {
  ASSERT_EQ(write(fd, bytes.data(), bytes.size()), static_cast<ssize_t>(bytes.size()));
}

std::string Header(uint32_t size) {
  return {static_cast<char>(size >> 24), static_cast<char>(size >> 16),
          static_cast<char>(size >> 8), static_cast<char>(size)};
}

Job SampleJob() {
  Job job;
  job.files = {{"main.py", "print('hi')\n"}, {"data/bin", std::string("\0\xff\x01", 3)}};
  job.steps = {{"python3", "main.py"}, {"ls", "-l", "sp ace"}};
  job.artifacts = {"out.txt"};
  job.timeout_ms = 5000;
  job.output_cap_bytes = 65536;
  job.max_artifact_bytes = 1 << 20;
  job.nofile = 128;
  job.fsize_bytes = 1 << 20;
  job.nproc = 64;
  job.environment = {"A=1", "B=two=2"};
  job.report_key = kKey;
  return job;
}

Report SampleReport() {
  Report report;
  StepResult step;
  step.command = {"python3", "main.py"};
  step.exit_code = 137;
  step.timed_out = false;
  step.stdout_bytes = std::string("ok\n\x80\x00", 5);
  step.stderr_bytes = "warn";
  step.stdout_truncated = true;
  step.duration_ms = 12;
  report.steps = {step};
  report.outcome = ProjectOutcome::kTimedOut;
  report.artifacts = {{"out.txt", std::string("\x01\x02", 2), true}};
  report.detail = "The artifact \"x\" was not brought back: it does not exist.\n";
  return report;
}

void ExpectSameJob(const Job& a, const Job& b) {
  EXPECT_EQ(a.files, b.files);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.artifacts, b.artifacts);
  EXPECT_EQ(a.timeout_ms, b.timeout_ms);
  EXPECT_EQ(a.output_cap_bytes, b.output_cap_bytes);
  EXPECT_EQ(a.max_artifact_bytes, b.max_artifact_bytes);
  EXPECT_EQ(a.nofile, b.nofile);
  EXPECT_EQ(a.fsize_bytes, b.fsize_bytes);
  EXPECT_EQ(a.nproc, b.nproc);
  EXPECT_EQ(a.environment, b.environment);
  EXPECT_EQ(a.report_key, b.report_key);
  EXPECT_EQ(a.seccomp_filter, b.seccomp_filter);
}

TEST(GuestProtocol, JobRoundTrips) {
  Job job = SampleJob();
  auto decoded = DecodeJob(EncodeJob(job));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  ExpectSameJob(job, *decoded);
}

TEST(GuestProtocol, ASeccompFilterTravelsOnlyWhenSetAndOnlyInWholeInstructions) {
  Job job = SampleJob();
  EXPECT_EQ(EncodeJob(job).find("seccomp_filter"), std::string::npos);  // absent: none
  job.seccomp_filter = std::string(16, '\x06');                         // two 8-byte instructions
  auto decoded = DecodeJob(EncodeJob(job));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  ExpectSameJob(job, *decoded);
  for (size_t size : {size_t{7}, size_t{12}, kMaxSeccompFilterBytes + 8}) {
    job.seccomp_filter = std::string(size, '\x06');
    EXPECT_FALSE(DecodeJob(EncodeJob(job)).ok()) << size;
  }
}

TEST(GuestProtocol, ReportRoundTrips) {
  Report report = SampleReport();
  auto decoded = DecodeReport(EncodeReport(report));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  EXPECT_EQ(decoded->steps, report.steps);
  EXPECT_EQ(decoded->outcome, report.outcome);
  EXPECT_EQ(decoded->artifacts, report.artifacts);
  EXPECT_EQ(decoded->detail, report.detail);
}

TEST(GuestProtocol, ACellTravelsAndIsCheckedBothWays) {
  Job job = SampleJob();
  job.files.clear();
  job.steps.clear();
  job.artifacts.clear();
  job.cell = JobCell{"javascript", "x + 1", 64, 3, 0};
  auto decoded = DecodeJob(EncodeJob(job));
  ASSERT_TRUE(decoded.ok()) << decoded.error().ToString();
  ASSERT_TRUE(decoded->cell.has_value());
  EXPECT_EQ(decoded->cell->code, "x + 1");
  EXPECT_EQ(decoded->cell->number, 3);
  // A cell with steps, an unknown language or an absurd cap is refused.
  Job mixed = job;
  mixed.steps = {{"true"}};
  EXPECT_FALSE(DecodeJob(EncodeJob(mixed)).ok());
  Job ruby = job;
  ruby.cell->language = "ruby";
  EXPECT_FALSE(DecodeJob(EncodeJob(ruby)).ok());
  Job huge = job;
  huge.cell->value_cap_bytes = kMaxCellValueCapBytes + 1;
  EXPECT_FALSE(DecodeJob(EncodeJob(huge)).ok());

  Report report;
  StepResult step;
  step.command = CellCommand("javascript");
  report.steps = {step};
  report.cell = ReportCell{std::string("42"), false, true, true};
  report.interpreters = std::vector<std::string>{"javascript"};
  auto read = DecodeReport(EncodeReport(report));
  ASSERT_TRUE(read.ok()) << read.error().ToString();
  EXPECT_EQ(read->cell->value, "42");
  EXPECT_TRUE(read->cell->interpreter_started);
  EXPECT_EQ(read->interpreters, report.interpreters);
  EXPECT_TRUE(CheckReportAgainstJob(*read, job).ok());
  // The host refuses a cell answer the job did not ask for, a value over
  // its cap, a step that is not the cell's, and a missing answer.
  EXPECT_FALSE(CheckReportAgainstJob(*read, SampleJob()).ok());
  Report long_value = *read;
  long_value.cell->value = std::string(65, 'v');
  EXPECT_FALSE(CheckReportAgainstJob(long_value, job).ok());
  Report other_step = *read;
  other_step.steps[0].command = {"sh"};
  EXPECT_FALSE(CheckReportAgainstJob(other_step, job).ok());
  Report no_answer = *read;
  no_answer.cell.reset();
  EXPECT_FALSE(CheckReportAgainstJob(no_answer, job).ok());
  Report bad_language = report;
  bad_language.interpreters = std::vector<std::string>{"ruby"};
  EXPECT_FALSE(DecodeReport(EncodeReport(bad_language)).ok());
}

TEST(GuestProtocol, DecodeJobIsStrict) {
  std::string good = EncodeJob(SampleJob());
  auto replace = [&](std::string_view from, std::string_view to) {
    std::string copy = good;
    size_t at = copy.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    copy.replace(at, from.size(), to);
    return copy;
  };
  const std::string bad[] = {
      "",
      "[]",
      "{",
      replace("\"version\":1", "\"version\":2"),
      replace("\"nofile\":128", "\"nofile\":128,\"extra\":1"),
      replace("\"nofile\":128", "\"nofile\":128,\"nofile\":129"),
      replace("\"timeout_ms\":5000", "\"timeout_ms\":0"),
      replace("\"timeout_ms\":5000", "\"timeout_ms\":99999999999999"),
      replace("\"output_cap_bytes\":65536", "\"output_cap_bytes\":\"65536\""),
      replace("\"main.py\"", "\"../main.py\""),
      replace("\"main.py\"", "\"/etc/passwd\""),
      replace("\"out.txt\"", "\"a//b\""),
      replace("\"A=1\"", "\"A\""),
      replace("[\"python3\",\"main.py\"]", "[]"),
      replace("\"content\":\"", "\"content\":\"!"),
  };
  for (const auto& text : bad) {
    auto decoded = DecodeJob(text);
    EXPECT_FALSE(decoded.ok()) << text;
    if (!decoded.ok()) {
      EXPECT_EQ(decoded.error().code(), ErrorCode::kDataLoss);
    }
  }
  Job short_key = SampleJob();
  short_key.report_key = "short";
  EXPECT_FALSE(DecodeJob(EncodeJob(short_key)).ok());
}

TEST(GuestProtocol, DecodeReportRefusesProtocolErrorAndJunk) {
  Report report = SampleReport();
  report.outcome = ProjectOutcome::kProtocolError;
  EXPECT_FALSE(DecodeReport(EncodeReport(report)).ok());
  EXPECT_FALSE(DecodeReport("{\"version\":1}").ok());
  EXPECT_FALSE(DecodeReport("null").ok());
}

TEST(GuestProtocol, SealIsHmacSha256Hex) {
  // RFC 4231 test case 2.
  EXPECT_EQ(Seal("Jefe", "what do ya want for nothing?"),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  EXPECT_NE(Seal(kKey, "a"), Seal(kKey, "b"));
  // RFC 4231 test case 6: a key longer than the block is hashed first.
  EXPECT_EQ(
      Seal(std::string(131, '\xaa'), "Test Using Larger Than Block-Size Key - Hash Key First"),
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(GuestProtocol, SealMatchesOpensslHmacForEveryKeyAndMessageSize) {
  for (size_t key_size : {0, 1, 32, 63, 64, 65, 200}) {
    for (size_t data_size : {0, 1, 55, 56, 64, 1000, 100'000}) {
      std::string key(key_size, '\0'), data(data_size, '\0');
      for (size_t i = 0; i < key_size; ++i) key[i] = static_cast<char>(i * 7 + 3);
      for (size_t i = 0; i < data_size; ++i) data[i] = static_cast<char>(i * 13 + key_size);
      unsigned char mac[EVP_MAX_MD_SIZE];
      unsigned int size = 0;
      static const unsigned char kNothing = 0;
      HMAC(EVP_sha256(),
           key.empty() ? &kNothing : reinterpret_cast<const unsigned char*>(key.data()),
           static_cast<int>(key.size()),
           data.empty() ? &kNothing : reinterpret_cast<const unsigned char*>(data.data()),
           data.size(), mac, &size);
      std::string hex;
      for (unsigned int i = 0; i < size; ++i) {
        hex.push_back("0123456789abcdef"[mac[i] >> 4]);
        hex.push_back("0123456789abcdef"[mac[i] & 15]);
      }
      EXPECT_EQ(Seal(key, data), hex) << "key " << key_size << " data " << data_size;
    }
  }
}

TEST(GuestFrames, RoundTripIncludingEmptyAndLarge) {
  Channel channel;
  std::string large(3 << 20, 'x');
  std::thread writer([&] {
    EXPECT_TRUE(WriteFrame(channel.guest, "", Soon()).ok());
    EXPECT_TRUE(WriteFrame(channel.guest, large, Soon()).ok());
  });
  auto first = ReadFrame(channel.host, Soon());
  auto second = ReadFrame(channel.host, Soon());
  writer.join();
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, "");
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, large);
}

TEST(GuestFrames, WorksOnANonBlockingPipe) {
  int fds[2];
  ASSERT_EQ(pipe2(fds, O_NONBLOCK | O_CLOEXEC), 0);
  std::string payload(300000, 'p');
  std::thread writer([&] { EXPECT_TRUE(WriteFrame(fds[1], payload, Soon()).ok()); });
  auto read = ReadFrame(fds[0], Soon());
  writer.join();
  close(fds[0]);
  close(fds[1]);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, payload);
}

TEST(GuestFrames, TruncatedFramesAreDataLoss) {
  {
    Channel channel;
    WriteRaw(channel.guest, Header(10) + "abc");
    channel.CloseGuest();
    auto read = ReadFrame(channel.host, Soon());
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.error().code(), ErrorCode::kDataLoss);
    EXPECT_NE(read.error().message().find("3 of 10"), std::string::npos);
  }
  {
    Channel channel;
    WriteRaw(channel.guest, std::string("\0\0", 2));
    channel.CloseGuest();
    EXPECT_EQ(ReadFrame(channel.host, Soon()).error().code(), ErrorCode::kDataLoss);
  }
  {
    Channel channel;
    channel.CloseGuest();
    EXPECT_EQ(ReadFrame(channel.host, Soon()).error().code(), ErrorCode::kDataLoss);
  }
}

TEST(GuestFrames, OversizeFramesAreRefused) {
  Channel channel;
  WriteRaw(channel.guest, Header(kMaxFrameBytes + 1));
  auto read = ReadFrame(channel.host, Soon());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code(), ErrorCode::kDataLoss);
  std::string huge(size_t{kMaxFrameBytes} + 1, 'x');
  EXPECT_EQ(WriteFrame(channel.guest, huge, Soon()).error().code(), ErrorCode::kResourceExhausted);
}

TEST(GuestFrames, SilentPeerHitsTheDeadline) {
  Channel channel;
  auto started = Clock::now();
  auto read = ReadFrame(channel.host, Clock::now() + milliseconds(100));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code(), ErrorCode::kDeadlineExceeded);
  EXPECT_LT(Clock::now() - started, std::chrono::seconds(3));
  // Half a frame, then silence.
  WriteRaw(channel.guest, Header(10) + "ab");
  read = ReadFrame(channel.host, Clock::now() + milliseconds(100));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.error().code(), ErrorCode::kDeadlineExceeded);
}

TEST(GuestFrames, WriteToAFullSilentPeerHitsTheDeadline) {
  Channel channel;
  std::string big(8 << 20, 'x');  // more than any socket buffer
  auto written = WriteFrame(channel.guest, big, Clock::now() + milliseconds(200));
  ASSERT_FALSE(written.ok());
  EXPECT_EQ(written.error().code(), ErrorCode::kDeadlineExceeded);
}

TEST(GuestSeal, SealedReportIsAccepted) {
  Channel channel;
  std::string bytes = EncodeReport(SampleReport());
  ASSERT_TRUE(WriteFrame(channel.guest, bytes, Soon()).ok());
  ASSERT_TRUE(WriteFrame(channel.guest, Seal(kKey, bytes), Soon()).ok());
  auto report = ReadSealedReport(channel.host, kKey, Soon());
  ASSERT_TRUE(report.ok()) << report.error().ToString();
  EXPECT_EQ(report->steps, SampleReport().steps);
}

TEST(GuestSeal, ForgedOrMismatchedSealsAreRefused) {
  std::string bytes = EncodeReport(SampleReport());
  std::string other_key(kReportKeyBytes, 'o');
  std::string tampered = bytes;
  tampered[tampered.find("timed_out")] = 'T';
  std::string good_seal = Seal(kKey, bytes);
  std::string upper = good_seal;
  for (auto& c : upper) c = static_cast<char>(toupper(c));
  const std::pair<std::string, std::string> cases[] = {
      {bytes, Seal(other_key, bytes)},   // sealed under another key
      {tampered, good_seal},             // report changed after sealing
      {bytes, good_seal.substr(0, 63)},  // short seal
      {bytes, good_seal + "0"},          // long seal
      {bytes, upper},                    // not the canonical form
      {bytes, ""},
  };
  for (const auto& [report, seal] : cases) {
    Channel channel;
    ASSERT_TRUE(WriteFrame(channel.guest, report, Soon()).ok());
    ASSERT_TRUE(WriteFrame(channel.guest, seal, Soon()).ok());
    auto read = ReadSealedReport(channel.host, kKey, Soon());
    ASSERT_FALSE(read.ok()) << seal;
    EXPECT_EQ(read.error().code(), ErrorCode::kDataLoss);
  }
  {
    Channel channel;  // the report without any seal
    ASSERT_TRUE(WriteFrame(channel.guest, bytes, Soon()).ok());
    channel.CloseGuest();
    EXPECT_FALSE(ReadSealedReport(channel.host, kKey, Soon()).ok());
  }
  {
    Channel channel;  // a wrong-sized key on the host side
    EXPECT_EQ(ReadSealedReport(channel.host, "k", Soon()).error().code(), ErrorCode::kInternal);
  }
}

TEST(GuestJob, FromJavascriptPythonProjectAndCell) {
  Limits limits;
  Request js;
  js.timeout_ms = 2000;
  js.javascript = JavascriptPayload{"console.log(1)"};
  auto job = JobFromRequest(js, limits, kKey);
  ASSERT_TRUE(job.ok());
  ASSERT_EQ(job->files.size(), 1u);
  EXPECT_EQ(job->files[0].path, "main.js");
  EXPECT_EQ(job->steps, (std::vector<std::vector<std::string>>{
                            {kQjsPath, "--timeout-ms", "2000", "--output-cap",
                             std::to_string(limits.output_cap_bytes + 1), "main.js"}}));
  EXPECT_EQ(job->timeout_ms, 2000 + kJavascriptGraceMs);
  EXPECT_TRUE(DecodeJob(EncodeJob(*job)).ok());

  Request py;
  py.timeout_ms = 3000;
  py.python = PythonPayload{"print(1)"};
  job = JobFromRequest(py, limits, kKey);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->files[0].path, "main.py");
  EXPECT_EQ(job->steps, (std::vector<std::vector<std::string>>{{"python3", "main.py"}}));
  EXPECT_EQ(job->timeout_ms, 3000);
  EXPECT_EQ(job->output_cap_bytes, limits.output_cap_bytes);
  EXPECT_EQ(job->max_artifact_bytes, limits.max_artifact_bytes);
  EXPECT_EQ(job->fsize_bytes, limits.work_bytes);

  Request project;
  project.timeout_ms = 9000;
  project.project = ProjectPayload{{{"a/b.txt", "x"}}, {{"cat", "a/b.txt"}}, {"a/b.txt"}};
  job = JobFromRequest(project, limits, kKey);
  ASSERT_TRUE(job.ok());
  EXPECT_EQ(job->files, project.project->files);
  EXPECT_EQ(job->steps, project.project->steps);
  EXPECT_EQ(job->artifacts, project.project->artifacts);
  EXPECT_EQ(job->timeout_ms, 9000);

  Request cell;
  cell.timeout_ms = 700;
  cell.cell = CellPayload{"python", "x = 1"};
  job = JobFromRequest(cell, limits, kKey);
  ASSERT_TRUE(job.ok());
  ASSERT_TRUE(job->cell.has_value());
  EXPECT_EQ(job->cell->language, "python");
  EXPECT_EQ(job->cell->code, "x = 1");
  EXPECT_EQ(job->cell->value_cap_bytes, limits.output_cap_bytes);
  EXPECT_TRUE(job->steps.empty() && job->files.empty());
  EXPECT_EQ(job->timeout_ms, 700);
  cell.cell->language = "javascript";
  EXPECT_EQ(JobFromRequest(cell, limits, kKey)->timeout_ms, 700 + kJavascriptGraceMs);
  EXPECT_EQ(JobFromRequest(py, limits, "short").error().code(), ErrorCode::kInternal);
}

TEST(GuestJob, FillResultForProjects) {
  Request request;
  request.project = ProjectPayload{{}, {{"a"}, {"b"}}, {}};
  Report report = SampleReport();
  StepResult first;
  first.command = {"a"};
  first.stdout_bytes = "first";
  report.steps.insert(report.steps.begin(), first);
  Result result;
  FillResult(request, report, &result);
  EXPECT_EQ(result.kind, PayloadKind::kProject);
  EXPECT_EQ(result.outcome, ProjectOutcome::kTimedOut);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.steps.size(), 2u);
  EXPECT_EQ(result.exit_code, 137);
  EXPECT_EQ(result.stdout_bytes, report.steps.back().stdout_bytes);
  EXPECT_TRUE(result.stdout_truncated);
  EXPECT_EQ(result.artifacts, report.artifacts);
}

TEST(GuestJob, FillResultForJavascriptDropsQjsNotesAndMapsTimeout) {
  Request request;
  request.javascript = JavascriptPayload{"x"};
  Report report;
  StepResult step;
  step.command = {kQjsPath};
  step.exit_code = 124;
  step.stdout_bytes = "aaaa";
  step.stdout_truncated = true;
  step.stderr_bytes = "boom\nqjs: stdout truncated at 5 bytes\n";
  report.steps = {step};
  Result result;
  FillResult(request, report, &result);
  EXPECT_TRUE(result.timed_out);
  EXPECT_EQ(result.exit_code, 124);
  EXPECT_EQ(result.stderr_bytes, "boom\n");
  EXPECT_TRUE(result.stdout_truncated);
  EXPECT_FALSE(result.outcome.has_value());

  // Without the agent's own flag the line is the script's: kept.
  report.steps[0].stdout_truncated = false;
  FillResult(request, report, &result);
  EXPECT_EQ(result.stderr_bytes, step.stderr_bytes);
}

TEST(GuestJob, FillResultForASnippetWhoseSetupFailed) {
  Request request;
  request.python = PythonPayload{"x"};
  Report report;
  report.outcome = ProjectOutcome::kSetupFailed;
  report.detail = "The project file \"main.py\" cannot be written: No space left on device.";
  Result result;
  FillResult(request, report, &result);
  EXPECT_EQ(result.kind, PayloadKind::kPython);
  EXPECT_EQ(result.exit_code, kExitNotFound);
  EXPECT_EQ(result.stderr_bytes, "plimsoll-guest: " + report.detail + "\n");
}

}  // namespace
}  // namespace plimsoll::guest
