#include "daemon/server/audit.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace plimsoll::daemon {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

AuditEntry SampleEntry() {
  AuditEntry entry;
  entry.time = std::chrono::system_clock::time_point(std::chrono::milliseconds(1'700'000'000'123));
  entry.request_id = "0123456789abcdef0123456789abcdef";
  entry.method = "POST";
  entry.route = "/v1/runs";
  entry.status = 200;
  entry.caller = "ci";
  entry.duration = std::chrono::microseconds(12'345);
  return entry;
}

TEST(AuditLine, HasEveryFieldWithNullsForWhatIsUnknown) {
  json line = json::parse(FormatAuditLine(SampleEntry()));
  EXPECT_EQ(line["time"], "2023-11-14T22:13:20.123Z");
  EXPECT_EQ(line["request_id"], "0123456789abcdef0123456789abcdef");
  EXPECT_EQ(line["method"], "POST");
  EXPECT_EQ(line["route"], "/v1/runs");
  EXPECT_EQ(line["status"], 200);
  EXPECT_EQ(line["caller"], "ci");
  EXPECT_TRUE(line["not_dispatched"].is_null());
  EXPECT_TRUE(line["error_id"].is_null());
  EXPECT_DOUBLE_EQ(line["duration_ms"].get<double>(), 12.345);
  EXPECT_FALSE(line.contains("run"));

  AuditEntry refused;
  refused.status = 404;
  refused.not_dispatched = NotDispatched::kRequest;
  json bare = json::parse(FormatAuditLine(refused));
  EXPECT_TRUE(bare["request_id"].is_null());
  EXPECT_TRUE(bare["method"].is_null());
  EXPECT_TRUE(bare["route"].is_null());
  EXPECT_TRUE(bare["caller"].is_null());
  EXPECT_EQ(bare["not_dispatched"], "request");
}

TEST(AuditLine, IsOneLineEvenForHostileStrings) {
  AuditEntry entry = SampleEntry();
  std::string caller = "evil\ncaller\xff\"}";
  entry.caller = caller;
  std::string text = FormatAuditLine(entry);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  json line = json::parse(text);  // still valid JSON (invalid UTF-8 replaced)
  EXPECT_TRUE(line["caller"].get<std::string>().starts_with("evil\ncaller"));
}

TEST(AuditLine, IsPrintableAsciiWhateverItsStringsHold) {
  // Newlines, carriage returns, escape sequences, NUL, DEL, invalid UTF-8, a
  // C1 control (CSI) and the Unicode line separator: none reaches the line raw.
  using namespace std::string_literals;
  const std::string caller = "a\nb\r\x1b[31mc"s + '\0' + "d\x7f e\xff\xc3 f\xc2\x9bg\xe2\x80\xa8h"s;
  nlohmann::ordered_json details = {{"run", {{"trace_id", caller}}}};
  AuditEntry entry = SampleEntry();
  entry.caller = caller;
  entry.details = &details;
  std::string text = FormatAuditLine(entry);
  for (unsigned char byte : text) {
    EXPECT_TRUE(byte >= 0x20 && byte < 0x7f)
        << "byte 0x" << std::hex << int{byte} << " in " << text;
  }
  json line = json::parse(text);
  EXPECT_TRUE(line["caller"].get<std::string>().starts_with("a\nb\r\x1b[31mc"s + '\0'));
  EXPECT_NE(line["caller"].get<std::string>().find("\xe2\x80\xa8h"), std::string::npos);
}

TEST(AuditLine, HandlerDetailsAreAddedButNeverReplaceTheCallsOwnFields) {
  nlohmann::ordered_json details = {{"run", {{"kind", "javascript"}}}, {"status", 999}};
  AuditEntry entry = SampleEntry();
  entry.details = &details;
  json line = json::parse(FormatAuditLine(entry));
  EXPECT_EQ(line["run"]["kind"], "javascript");
  EXPECT_EQ(line["status"], 200);
}

TEST(RunAuditFields, DescribeTheRunButNeverItsCodeOrOutputs) {
  Request request;
  request.javascript = JavascriptPayload{"console.log('SECRET-CODE')"};
  request.trace_id = "trace-7";
  nlohmann::ordered_json run = RunAuditFields(request, "embedded");
  EXPECT_EQ(run["kind"], "javascript");
  EXPECT_EQ(run["payload_bytes"], request.javascript->code.size());
  EXPECT_EQ(run["provider"], "embedded");
  EXPECT_EQ(run["trace_id"], "trace-7");
  EXPECT_TRUE(run["exit_code"].is_null());
  EXPECT_TRUE(run["tier"].is_null());
  EXPECT_EQ(run["broker_calls"], 0);

  Result result;
  result.isolation = Tier::kProcess;
  result.exit_code = 3;
  result.timed_out = true;
  result.duration_ms = 17;
  result.stdout_bytes = "SECRET-OUTPUT";
  result.broker = BrokerSummary{.profile = "p", .calls = 4, .denied = 1};
  AddRunResult(run, result);
  EXPECT_EQ(run["tier"], "process");
  EXPECT_EQ(run["exit_code"], 3);
  EXPECT_EQ(run["timed_out"], true);
  EXPECT_EQ(run["duration_ms"], 17);
  EXPECT_EQ(run["broker_calls"], 4);
  std::string text = run.dump();
  EXPECT_EQ(text.find("SECRET"), std::string::npos) << text;
}

TEST(RunAuditFields, ProjectSizeIsItsFileContentsAndAMalformedTraceIsDropped) {
  Request request;
  request.project = ProjectPayload{.files = {{"a.txt", "12345"}, {"b.txt", "678"}},
                                   .steps = {{"cat", "a.txt"}},
                                   .artifacts = {}};
  request.trace_id = "has spaces and \n";
  nlohmann::ordered_json run = RunAuditFields(request, "linux");
  EXPECT_EQ(run["kind"], "project");
  EXPECT_EQ(run["payload_bytes"], 8);
  EXPECT_TRUE(run["trace_id"].is_null());
}

class AuditFile : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "plimsoll-audit-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    directory_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(directory_, ignored);
  }
  fs::path directory_;
};

TEST_F(AuditFile, IsCreated0600AndAppendedLineByLine) {
  fs::path path = directory_ / "audit.jsonl";
  auto audit = AuditLog::OpenFile(path.string());
  ASSERT_TRUE(audit.ok()) << audit.error().ToString();
  struct stat status {};
  ASSERT_EQ(::stat(path.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0600u);
  ASSERT_TRUE((*audit)->Write(SampleEntry()).ok());
  ASSERT_TRUE((*audit)->Write(SampleEntry()).ok());
  EXPECT_EQ((*audit)->destination(), path.string());
  audit->reset();

  auto reopened = AuditLog::OpenFile(path.string());  // appends, never truncates
  ASSERT_TRUE(reopened.ok());
  ASSERT_TRUE((*reopened)->Write(SampleEntry()).ok());
  std::ifstream in(path);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    EXPECT_EQ(json::parse(line)["route"], "/v1/runs");
    ++lines;
  }
  EXPECT_EQ(lines, 3);
}

TEST_F(AuditFile, RefusesWhatIsNotARegularFile) {
  auto directory = AuditLog::OpenFile(directory_.string());
  ASSERT_FALSE(directory.ok());
  EXPECT_NE(directory.error().message().find(directory_.string()), std::string::npos);

  fs::path target = directory_ / "target";
  std::ofstream(target) << "";
  fs::path link = directory_ / "link";
  fs::create_symlink(target, link);
  EXPECT_FALSE(AuditLog::OpenFile(link.string()).ok());  // links are not followed

  EXPECT_FALSE(AuditLog::OpenFile((directory_ / "missing" / "audit.jsonl").string()).ok());
  EXPECT_FALSE(AuditLog::OpenFile("").ok());
}

TEST(AuditToOperatorLog, MarksEachLineAsAudit) {
  std::ostringstream text;
  Log log(text);
  auto audit = AuditLog::ToOperatorLog(log);
  ASSERT_TRUE(audit->Write(SampleEntry()).ok());
  std::string line = text.str();
  const std::string prefix = "plimsolld: audit: ";
  ASSERT_TRUE(line.starts_with(prefix)) << line;
  json parsed = json::parse(line.substr(prefix.size()));
  EXPECT_EQ(parsed["caller"], "ci");
  EXPECT_EQ(audit->destination(), "the operator log");
}

}  // namespace
}  // namespace plimsoll::daemon
