// libFuzzer target: what the HOST reads from the agent channel (src/guest/:
// frame.cc, protocol.cc, exchange.cc, job.cc), as arbitrary bytes. The agent
// runs the guest's code, so everything it sends is hostile input.
//
//   stream   the input is the whole channel: ExchangeJob writes a job and
//            reads frames, the report and its seal (ReadSealedReport) with
//            a fixed report key. Never a crash; a refused stream is an
//            error value (data_loss, no nothing-ran mark: code may have
//            run), and AnswerFailedExchange makes of it a protocol_error
//            result (project) or an unmarked internal error (snippet).
//   sealed   the input is the Report frame's body, framed and sealed by the
//            harness with the right key, so the fuzzer reaches DecodeReport
//            through the real reader: the reader agrees with DecodeReport;
//            an accepted report keeps the protocol's bounds, re-encodes and
//            decodes to the same report, and fills a Result (FillResult)
//            the wire can carry; the same body with its seal one digit off
//            or cut short is refused.
//   job      DecodeJob (what the agent reads): an accepted job keeps the
//            protocol's bounds and round-trips through EncodeJob.
//
// Seeds: fuzz/corpus/guest_report/ (fuzz/gen_guest_seeds.py writes the
// sealed streams with kKey below). fuzz/run runs it.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "guest/exchange.h"
#include "guest/protocol.h"
#include "plimsoll/wire.h"
#include "request_checks.h"

namespace {

namespace guest = plimsoll::guest;
using plimsoll::ErrorCode;
using plimsoll::Expected;

// The report key of every exchange here: bytes 0x00..0x1f (the seeds are
// sealed with it).
std::string Key() {
  std::string key(guest::kReportKeyBytes, '\0');
  for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<char>(i);
  return key;
}

std::string Frame(std::string_view body) {
  auto size = static_cast<uint32_t>(body.size());
  std::string frame = {static_cast<char>(size >> 24), static_cast<char>((size >> 16) & 0xff),
                       static_cast<char>((size >> 8) & 0xff), static_cast<char>(size & 0xff)};
  frame.append(body);
  return frame;
}

// A connected pair whose far end has already sent `stream` and hung up, so
// every read finishes without waiting (the input is far below the socket
// buffer: fuzz/run bounds -max_len).
struct Channel {
  int host = -1;
  int agent = -1;
  explicit Channel(std::string_view stream) {
    int fds[2];
    FUZZ_CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0, "socketpair failed");
    host = fds[0];
    agent = fds[1];
    while (!stream.empty()) {
      ssize_t sent = send(agent, stream.data(), stream.size(), MSG_NOSIGNAL);
      FUZZ_CHECK(sent > 0, "the test stream did not fit the socket buffer");
      stream.remove_prefix(static_cast<size_t>(sent));
    }
    shutdown(agent, SHUT_WR);
  }
  ~Channel() {
    close(host);
    close(agent);
  }
  Channel(const Channel&) = delete;
  Channel& operator=(const Channel&) = delete;
};

std::chrono::steady_clock::time_point Deadline() {
  // Never reached (every byte is there before the read); a bound anyway.
  return std::chrono::steady_clock::now() + std::chrono::seconds(5);
}

plimsoll::Request SnippetRequest() {
  plimsoll::Request request;
  request.python = plimsoll::PythonPayload{"print(1)"};
  request.timeout_ms = 1000;
  return request;
}

plimsoll::Request ProjectRequest() {
  plimsoll::Request request;
  plimsoll::ProjectPayload project;
  project.files.push_back({"main.py", "print(1)"});
  project.steps.push_back({"python3", "main.py"});
  project.artifacts.push_back("out.txt");
  request.project = project;
  request.timeout_ms = 1000;
  return request;
}

void CheckReportBounds(const guest::Report& report) {
  FUZZ_CHECK(report.outcome != plimsoll::ProjectOutcome::kProtocolError,
             "an agent's report claimed a protocol error (only the host decides that)");
  FUZZ_CHECK(report.steps.size() <= guest::kMaxJobSteps, "a report with too many steps");
  FUZZ_CHECK(report.artifacts.size() <= guest::kMaxJobFiles, "a report with too many artifacts");
  for (const auto& step : report.steps) {
    FUZZ_CHECK(step.exit_code >= 0 && step.exit_code <= 255,
               "a step exit code outside 0..255: " + std::to_string(step.exit_code));
    FUZZ_CHECK(step.duration_ms >= 0, "a negative step duration");
  }
  for (const auto& artifact : report.artifacts) {
    FUZZ_CHECK(!plimsoll::CheckRelativePath(artifact.path).has_value(),
               "an accepted artifact path the request rules refuse: " + artifact.path);
  }
}

void CheckReportRoundTrip(const guest::Report& report) {
  std::string written = guest::EncodeReport(report);
  Expected<guest::Report> again = guest::DecodeReport(written);
  FUZZ_CHECK(again.ok(), "DecodeReport refuses what EncodeReport wrote: " + written);
  FUZZ_CHECK(again->steps == report.steps && again->artifacts == report.artifacts &&
                 again->outcome == report.outcome && again->detail == report.detail,
             "a report changed in a round trip through " + written);
  FUZZ_CHECK(guest::EncodeReport(*again) == written, "writing a report twice gave different text");
}

// What a provider does with an accepted report: the result must be one the
// daemon can send (ResultToJson) and a client can read (ParseResultJson).
void CheckFill(const plimsoll::Request& request, const guest::Report& report) {
  plimsoll::Result result;
  result.provider = "fuzz";
  result.kind = *request.kind();
  guest::FillResult(request, report, &result);
  std::string written = plimsoll::ResultToJson(result);
  Expected<plimsoll::Result> read = plimsoll::ParseResultJson(written);
  FUZZ_CHECK(read.ok(), "a filled result does not read back: " +
                            (read.ok() ? std::string() : read.error().ToString()) + "\n" + written);
  if (request.project) {
    FUZZ_CHECK(result.outcome == report.outcome, "FillResult changed a project's outcome");
    FUZZ_CHECK(result.steps.size() == report.steps.size(), "FillResult dropped a step");
  }
}

void CheckStream(std::string_view stream) {
  const std::string key = Key();
  static const plimsoll::Request kSnippet = SnippetRequest();
  static const plimsoll::Request kProject = ProjectRequest();
  const plimsoll::Request& request = stream.size() % 2 == 0 ? kSnippet : kProject;
  Expected<guest::Job> job = guest::JobFromRequest(request, plimsoll::Limits{}, key);
  FUZZ_CHECK(job.ok(), "JobFromRequest refused the harness's request");

  Channel channel(stream);
  plimsoll::Result result;
  result.kind = *request.kind();
  plimsoll::Status exchanged = guest::ExchangeJob(channel.host, *job, request, Deadline(), &result);
  if (exchanged.ok()) {
    // Only a stream sealed with the key gets here (the seeds are).
    if (request.project)
      FUZZ_CHECK(result.outcome.has_value(), "a project result lost its outcome");
    return;
  }
  const plimsoll::Error& error = exchanged.error();
  FUZZ_CHECK(error.code() == ErrorCode::kDataLoss,
             "a bad agent stream is not data_loss: " + error.ToString());
  FUZZ_CHECK(
      !error.not_dispatched().has_value(),
      "a bad agent stream was marked nothing-ran (the code may have run): " + error.ToString());
  FUZZ_CHECK(!error.message().empty(), "a refused stream without a message");
  Expected<plimsoll::Result> answer =
      guest::AnswerFailedExchange(request, error, "the agent's report was refused", result);
  if (request.project) {
    FUZZ_CHECK(answer.ok() && answer->outcome == plimsoll::ProjectOutcome::kProtocolError,
               "a project's failed exchange is not a protocol_error result");
  } else {
    FUZZ_CHECK(!answer.ok() && answer.error().code() == ErrorCode::kInternal &&
                   !answer.error().not_dispatched().has_value(),
               "a snippet's failed exchange is not an unmarked internal error");
  }
}

Expected<guest::Report> ReadStream(const std::string& stream, const std::string& key) {
  Channel channel(stream);
  return guest::ReadSealedReport(channel.host, key, Deadline());
}

void CheckSealed(std::string_view body) {
  if (body.size() > guest::kMaxFrameBytes) return;
  const std::string key = Key();
  const std::string seal = guest::Seal(key, body);
  FUZZ_CHECK(seal.size() == 64, "a seal is not 64 hex digits");
  FUZZ_CHECK(guest::Seal(key, body) == seal, "Seal is not deterministic");

  Expected<guest::Report> read = ReadStream(Frame(body) + Frame(seal), key);
  Expected<guest::Report> direct = guest::DecodeReport(body);
  FUZZ_CHECK(read.ok() == direct.ok(), "the channel reader and DecodeReport disagree");
  if (!direct.ok()) {
    FUZZ_CHECK(direct.error().code() == ErrorCode::kDataLoss &&
                   !direct.error().not_dispatched().has_value() &&
                   !direct.error().message().empty(),
               "a refused report is not an unmarked data_loss with a message: " +
                   direct.error().ToString());
  } else {
    CheckReportBounds(*direct);
    CheckReportRoundTrip(*direct);
    static const plimsoll::Request kSnippet = SnippetRequest();
    static const plimsoll::Request kProject = ProjectRequest();
    CheckFill(kSnippet, *direct);
    CheckFill(kProject, *direct);
  }

  // A seal one digit off, or cut short, or made with another key: refused,
  // whatever the body.
  std::string off = seal;
  off[body.size() % off.size()] = off[body.size() % off.size()] == '0' ? '1' : '0';
  Expected<guest::Report> forged = ReadStream(Frame(body) + Frame(off), key);
  FUZZ_CHECK(!forged.ok() && forged.error().code() == ErrorCode::kDataLoss,
             "a report with a wrong seal was accepted");
  Expected<guest::Report> cut = ReadStream(Frame(body) + Frame(seal.substr(0, 63)), key);
  FUZZ_CHECK(!cut.ok(), "a report with a short seal was accepted");
  std::string other_key = key;
  other_key[0] ^= 1;
  Expected<guest::Report> other = ReadStream(Frame(body) + Frame(seal), other_key);
  FUZZ_CHECK(!other.ok(), "a report sealed under another key was accepted");
}

void CheckJob(std::string_view body) {
  Expected<guest::Job> job = guest::DecodeJob(body);
  if (!job.ok()) {
    FUZZ_CHECK(job.error().code() == ErrorCode::kDataLoss, "a refused job is not data_loss");
    return;
  }
  FUZZ_CHECK(job->report_key.size() == guest::kReportKeyBytes, "a job key of the wrong size");
  for (const auto& argv : job->steps) {
    FUZZ_CHECK(!argv.empty() && !argv.front().empty(), "a job step without a program");
  }
  std::string written = guest::EncodeJob(*job);
  Expected<guest::Job> again = guest::DecodeJob(written);
  FUZZ_CHECK(again.ok(), "DecodeJob refuses what EncodeJob wrote: " + written);
  FUZZ_CHECK(guest::EncodeJob(*again) == written, "a job changed in a round trip");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  CheckStream(input);
  CheckSealed(input);
  CheckJob(input);
  return 0;
}
