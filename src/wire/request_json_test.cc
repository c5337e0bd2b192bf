#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "plimsoll/wire.h"

namespace plimsoll {
namespace {

using ::testing::HasSubstr;

Request RoundTrip(const Request& request) {
  auto parsed = ParseRequestJson(RequestToJson(request));
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().ToString());
  return parsed.ok() ? *parsed : Request{};
}

void ExpectRefusal(std::string_view body, NotDispatched reason, std::string_view needle) {
  auto parsed = ParseRequestJson(body);
  ASSERT_FALSE(parsed.ok()) << body;
  EXPECT_EQ(parsed.error().not_dispatched(), reason) << body << " -> " << parsed.error().ToString();
  EXPECT_THAT(parsed.error().message(), HasSubstr(std::string(needle))) << body;
}

TEST(RequestJsonTest, ParsesTheSpecExample) {
  auto parsed = ParseRequestJson(
      R"j({"protocol": 1, "minimum_isolation": "container", "timeout_ms": 5000, "trace_id": "t-1",
          "javascript": {"code": "console.log(6*7)"}})j");
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->protocol, 1);
  EXPECT_EQ(parsed->minimum_isolation, "container");
  EXPECT_EQ(parsed->timeout_ms, 5000);
  EXPECT_EQ(parsed->trace_id, "t-1");
  ASSERT_TRUE(parsed->javascript);
  EXPECT_EQ(parsed->javascript->code, "console.log(6*7)");
  EXPECT_EQ(parsed->PayloadCount(), 1);
}

TEST(RequestJsonTest, RoundTripsEveryPayloadKind) {
  Request javascript;
  javascript.minimum_isolation = "vm";
  javascript.timeout_ms = -5;
  javascript.trace_id = "a:b.c-d_e";
  javascript.grant_profile = "crm-read";
  javascript.environment = "sha256:" + std::string(64, 'a');
  javascript.javascript = JavascriptPayload{"console.log('héllo')"};
  EXPECT_EQ(RoundTrip(javascript), javascript);

  Request python;
  python.python = PythonPayload{""};
  EXPECT_EQ(RoundTrip(python), python);

  Request project;
  project.project = ProjectPayload{
      .files = {{"main.py", "print(1)"}, {"blob.bin", std::string("\x00\xff\x80", 3)}},
      .steps = {{"python3", "main.py"}, {"ls", "-la"}},
      .artifacts = {"out.txt"}};
  EXPECT_EQ(RoundTrip(project), project);

  Request empty_project;
  empty_project.project = ProjectPayload{};
  EXPECT_EQ(RoundTrip(empty_project), empty_project);

  Request cell;
  cell.cell = CellPayload{"python", "x = 1"};
  EXPECT_EQ(RoundTrip(cell), cell);

  Request module;
  module.module =
      ModulePayload{"cartpole", {{0, -0.0, 0.1, 1e-300}, {}, {0.30000000000000004}}, 5, 0.01};
  EXPECT_EQ(RoundTrip(module), module);
  EXPECT_TRUE(std::signbit(RoundTrip(module).module->rows[0][1])) << "-0 keeps its sign";

  Request several;  // refused later by ValidateRequest, but carried faithfully
  several.javascript = JavascriptPayload{"1"};
  several.cell = CellPayload{"javascript", "2"};
  EXPECT_EQ(RoundTrip(several), several);
}

TEST(RequestJsonTest, NonUtf8BytesTravelAsBase64) {
  Request request;
  request.javascript = JavascriptPayload{std::string("\xff\xfe", 2)};
  request.project = ProjectPayload{
      .files = {{"a.bin", std::string("\xc0\xaf", 2)}}, .steps = {{"true"}}, .artifacts = {}};
  std::string json = RequestToJson(request);
  EXPECT_THAT(json, HasSubstr(R"("code":{"base64":"//4="})"));
  EXPECT_THAT(json, HasSubstr(R"("content":{"base64":"wK8="})"));
  EXPECT_EQ(RoundTrip(request), request);
}

TEST(RequestJsonTest, OmitsAbsentFields) {
  Request request;
  request.javascript = JavascriptPayload{"1"};
  EXPECT_EQ(RequestToJson(request), R"({"protocol":1,"javascript":{"code":"1"}})");
}

TEST(RequestJsonTest, ChecksProtocolBeforeThePayload) {
  ExpectRefusal(R"({"protocol":2,"javascript":5})", NotDispatched::kProtocol, "says 2");
  ExpectRefusal(R"({"javascript":{"code":"1"}})", NotDispatched::kProtocol, "no \"protocol\"");
  ExpectRefusal(R"({"ruby":{"code":"1"}})", NotDispatched::kProtocol, "no \"protocol\"");
  ExpectRefusal(R"({"protocol":"1","javascript":{"code":"1"}})", NotDispatched::kProtocol,
                "a string");
  ExpectRefusal(R"({"protocol":1.0,"javascript":{"code":"1"}})", NotDispatched::kProtocol,
                "non-integer");
  ExpectRefusal(R"({"protocol":null})", NotDispatched::kProtocol, "null");
  ExpectRefusal(R"({"protocol":true})", NotDispatched::kProtocol, "boolean");
  ExpectRefusal(R"({"protocol":0})", NotDispatched::kProtocol, "says 0");
  ExpectRefusal(R"({"protocol":-1})", NotDispatched::kProtocol, "says -1");
  ExpectRefusal(R"({"protocol":18446744073709551615})", NotDispatched::kProtocol,
                "says 18446744073709551615");
  ExpectRefusal(R"({"protocol":1e400})", NotDispatched::kRequest, "not valid JSON");
  ExpectRefusal(R"({"protocol":2,"unknown":1,"project":{"files":7}})", NotDispatched::kProtocol,
                "says 2");
}

TEST(RequestJsonTest, RefusesBadModuleShapesNamingTheField) {
  ExpectRefusal(R"({"protocol":1,"module":{"rows":[],"end_time":1,"step":1}})",
                NotDispatched::kRequest, "module.model is required");
  ExpectRefusal(R"({"protocol":1,"module":{"model":"m","rows":[[1,"2"]],"end_time":1,"step":1}})",
                NotDispatched::kRequest, "module.rows[0][1]");
  ExpectRefusal(R"({"protocol":1,"module":{"model":"m","rows":[3],"end_time":1,"step":1}})",
                NotDispatched::kRequest, "module.rows[0] must be an array of numbers");
  ExpectRefusal(R"({"protocol":1,"module":{"model":"m","rows":[],"end_time":"1","step":1}})",
                NotDispatched::kRequest, "module.end_time");
  ExpectRefusal(R"({"protocol":1,"module":{"model":"m","rows":[],"end_time":1}})",
                NotDispatched::kRequest, "module.step is required");
  ExpectRefusal(R"({"protocol":1,"module":{"model":"m","rows":[],"end_time":1,"step":1,"x":0}})",
                NotDispatched::kRequest, "module.x");
}

TEST(RequestJsonTest, RefusesBadShapesNamingTheField) {
  ExpectRefusal(R"({"protocol":1,"javascript":5})", NotDispatched::kRequest,
                "javascript must be an object");
  ExpectRefusal(R"({"protocol":1,"javascript":{}})", NotDispatched::kRequest,
                "javascript.code is required");
  ExpectRefusal(R"({"protocol":1,"javascript":{"code":1}})", NotDispatched::kRequest,
                "javascript.code must be a string or");
  ExpectRefusal(R"({"protocol":1,"javascript":{"code":"1","extra":1}})", NotDispatched::kRequest,
                "javascript.extra");
  ExpectRefusal(R"({"protocol":1,"minimum_isolaton":"vm","javascript":{"code":"1"}})",
                NotDispatched::kRequest, "Unknown field \"minimum_isolaton\"");
  ExpectRefusal(R"({"protocol":1,"ruby":{"code":"1"}})", NotDispatched::kRequest, "\"ruby\"");
  ExpectRefusal(R"({"protocol":1,"timeout_ms":"5000","javascript":{"code":"1"}})",
                NotDispatched::kRequest, "timeout_ms must be an integer");
  ExpectRefusal(R"({"protocol":1,"timeout_ms":5000.5,"javascript":{"code":"1"}})",
                NotDispatched::kRequest, "timeout_ms must be an integer");
  ExpectRefusal(R"({"protocol":1,"timeout_ms":9223372036854775808,"javascript":{"code":"1"}})",
                NotDispatched::kRequest, "64-bit");
  ExpectRefusal(R"({"protocol":1,"minimum_isolation":3,"javascript":{"code":"1"}})",
                NotDispatched::kRequest, "minimum_isolation must be a string");
  ExpectRefusal(R"({"protocol":1,"project":{"files":[{"path":"a","content":"x"},{"path":"b"}]}})",
                NotDispatched::kRequest, "project.files[1].content is required");
  ExpectRefusal(R"({"protocol":1,"project":{"files":[{"path":"a","content":{"base64":"!!"}}]}})",
                NotDispatched::kRequest, "project.files[0].content.base64 is not canonical");
  ExpectRefusal(
      R"({"protocol":1,"project":{"files":[{"path":"a","content":{"base64":"Zg==","x":1}}]}})",
      NotDispatched::kRequest, "project.files[0].content must be a string or");
  ExpectRefusal(R"({"protocol":1,"project":{"steps":["node main.js"]}})", NotDispatched::kRequest,
                "project.steps[0] must be an argv array");
  ExpectRefusal(R"({"protocol":1,"project":{"steps":[["node",3]]}})", NotDispatched::kRequest,
                "project.steps[0][1] must be a string");
  ExpectRefusal(R"({"protocol":1,"project":{"artifacts":"out.txt"}})", NotDispatched::kRequest,
                "project.artifacts must be an array");
  ExpectRefusal(R"({"protocol":1,"cell":{"code":"1"}})", NotDispatched::kRequest,
                "cell.language is required");
  ExpectRefusal(R"({"protocol":1,"protocol":1,"javascript":{"code":"1"}})", NotDispatched::kRequest,
                "repeats the key \"protocol\"");
  ExpectRefusal(R"({"protocol":1,"javascript":{"code":"1","code":"2"}})", NotDispatched::kRequest,
                "repeats the key \"code\"");
  ExpectRefusal(R"([1])", NotDispatched::kRequest, "must be a JSON object");
  ExpectRefusal("", NotDispatched::kRequest, "not valid JSON");
}

TEST(RequestJsonTest, NullMeansAbsent) {
  auto parsed = ParseRequestJson(
      R"({"protocol":1,"minimum_isolation":null,"timeout_ms":null,"python":null,
          "javascript":{"code":"1"}})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->minimum_isolation, "");
  EXPECT_FALSE(parsed->python);
  EXPECT_EQ(parsed->PayloadCount(), 1);
}

TEST(RequestJsonTest, AcceptsBase64ForTextToo) {
  auto parsed = ParseRequestJson(R"({"protocol":1,"javascript":{"code":{"base64":"MSsx"}}})");
  ASSERT_TRUE(parsed.ok()) << parsed.error().ToString();
  EXPECT_EQ(parsed->javascript->code, "1+1");
}

TEST(RequestJsonTest, InvalidUtf8InNonByteStringsIsReplacedNotThrown) {
  Request request;
  request.trace_id = std::string("t\xff", 2);
  request.javascript = JavascriptPayload{"1"};
  std::string json = RequestToJson(request);
  auto parsed = ParseRequestJson(json);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(parsed->trace_id, "t\xEF\xBF\xBD");  // U+FFFD
}

}  // namespace
}  // namespace plimsoll
