// Nothing a peer sends may crash a parser: every malformed body is an Error.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plimsoll/wire.h"

namespace plimsoll {
namespace {

std::vector<std::string> MalformedBodies() {
  std::vector<std::string> bodies = {
      "",
      " ",
      "null",
      "0",
      "\"protocol\"",
      "{",
      "}",
      "{\"protocol\":1",
      "{\"protocol\":1,}",
      "{'protocol':1}",
      "{\"protocol\":1} {}",
      "{\"protocol\":1}/* comment */",
      "{\"protocol\":NaN}",
      "{\"protocol\":Infinity}",
      "{\"protocol\":01}",
      "{\"protocol\":1,\"javascript\":{\"code\":\"\\ud800\"}}",  // lone surrogate escape
      "{\"protocol\":1,\"javascript\":{\"code\":\"\\u12\"}}",
      "{\"protocol\":1,\"javascript\":{\"code\":\"a\x01\"}}",              // raw control character
      std::string("{\"protocol\":1,\"javascript\":{\"code\":\"\xff\"}}"),  // invalid UTF-8
      std::string("{\"protocol\":1,\"javascript\":{\"code\":\"\xc0\xaf\"}}"),
      std::string("{\"protocol\":1,\"javascript\":{\"code\":\"\xed\xa0\x80\"}}"),
      std::string("{\"protocol\":1,\0\"javascript\":{}}", 27),
      "{\"protocol\":1,\"project\":{\"files\":[[[[[[]]]]]]}}",
      "{\"protocol\":1,\"project\":{\"steps\":[[],{},null,1]}}",
      "{\"protocol\":1,\"project\":{\"files\":[{\"path\":null,\"content\":null}]}}",
      "{\"protocol\":1,\"cell\":[]}",
      "{\"protocol\":1,\"timeout_ms\":-9223372036854775809,\"javascript\":{\"code\":\"\"}}",
      "{\"protocol\":1,\"timeout_ms\":1e308,\"javascript\":{\"code\":\"\"}}",
      "{\"protocol\":1,\"timeout_ms\":-0,\"javascript\":{\"code\":{\"base64\":\"===\"}}}",
      "{\"error\":{\"code\":\"internal\",\"message\":\"m\",\"request_id\":5}}",
      "{\"provider\":\"x\",\"record\":[]}",
  };
  bodies.push_back(std::string(100000, '[') + std::string(100000, ']'));
  bodies.push_back("{\"protocol\":1,\"a\":" + std::string(5000, '{'));
  std::string wide = "{\"protocol\":1";
  for (int i = 0; i < 2000; ++i) wide += ",\"k" + std::to_string(i) + "\":" + std::to_string(i);
  bodies.push_back(wide + "}");
  return bodies;
}

TEST(MalformedJsonTest, NoBodyCrashesAnyParser) {
  for (const std::string& body : MalformedBodies()) {
    auto request = ParseRequestJson(body);
    if (!request.ok()) {
      EXPECT_TRUE(request.error().not_dispatched().has_value()) << body.substr(0, 80);
    }
    auto result = ParseResultJson(body);
    EXPECT_FALSE(result.ok()) << body.substr(0, 80);
    if (!result.ok()) {
      EXPECT_FALSE(result.error().not_dispatched().has_value());
    }
    auto error = ParseErrorJson(body);
    EXPECT_FALSE(error.ok()) << body.substr(0, 80);
  }
}

TEST(MalformedJsonTest, EveryMalformedRequestIsRefused) {
  for (const std::string& body : MalformedBodies()) {
    EXPECT_FALSE(ParseRequestJson(body).ok()) << body.substr(0, 80);
  }
}

TEST(MalformedJsonTest, DeepNestingIsRefusedWithAClearMessage) {
  auto request = ParseRequestJson("{\"protocol\":1,\"x\":" + std::string(1000, '[') +
                                  std::string(1000, ']') + "}");
  ASSERT_FALSE(request.ok());
  EXPECT_NE(request.error().message().find("nests deeper than"), std::string::npos)
      << request.error().message();
}

TEST(MalformedJsonTest, TruncationsOfAValidRequestNeverCrash) {
  Request request;
  request.minimum_isolation = "container";
  request.project = ProjectPayload{.files = {{"a.bin", std::string("\x00\xff", 2)}},
                                   .steps = {{"node", "main.js"}},
                                   .artifacts = {"out"}};
  std::string body = RequestToJson(request);
  for (size_t cut = 0; cut < body.size(); ++cut) {
    EXPECT_FALSE(ParseRequestJson(body.substr(0, cut)).ok()) << cut;
  }
  ASSERT_TRUE(ParseRequestJson(body).ok());
}

}  // namespace
}  // namespace plimsoll
