#include "providers/embedded/host_call_bridge.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace plimsoll {
namespace {

using ::testing::HasSubstr;

// Records the calls it is given and answers as told.
class RecordingCalls final : public GrantedCalls {
 public:
  struct Seen {
    std::string method, path, body, content_type;
  };

  HostCallAnswer Call(std::string_view method, std::string_view path, std::string_view body,
                      std::string_view content_type,
                      std::chrono::steady_clock::time_point /*deadline*/) override {
    seen.push_back(
        {std::string(method), std::string(path), std::string(body), std::string(content_type)});
    return answer;
  }
  BrokerSummary Summary() const override { return {}; }
  std::vector<::plimsoll::Advice> Advice() const override { return {}; }

  std::vector<Seen> seen;
  HostCallAnswer answer{.status = 200, .content_type = "application/json", .body = R"({"a":1})"};
};

class HostCallBridgeTest : public ::testing::Test {
 protected:
  engine::HostAnswer Send(const std::string& request) {
    return HostCallBridge(calls_,
                          std::chrono::steady_clock::now() + std::chrono::seconds(5))(request);
  }
  RecordingCalls calls_;
};

TEST_F(HostCallBridgeTest, AnAnswerReachesTheScriptAsStatusTypeBodyAndTruncation) {
  engine::HostAnswer answer = Send(R"({"method":"GET","path":"/items/1"})");
  ASSERT_TRUE(answer.ok) << answer.body;
  auto parsed = nlohmann::json::parse(answer.body);
  EXPECT_EQ(parsed["status"], 200);
  EXPECT_EQ(parsed["content_type"], "application/json");
  EXPECT_EQ(parsed["body"], R"({"a":1})");
  EXPECT_EQ(parsed["truncated"], false);
  ASSERT_EQ(calls_.seen.size(), 1u);
  EXPECT_EQ(calls_.seen[0].method, "GET");
  EXPECT_EQ(calls_.seen[0].path, "/items/1");
  EXPECT_EQ(calls_.seen[0].body, "");
}

TEST_F(HostCallBridgeTest, AnObjectBodyIsSentAsJsonAStringBodyAsItIs) {
  ASSERT_TRUE(Send(R"({"method":"POST","path":"/x","body":{"q":[1,2]}})").ok);
  ASSERT_TRUE(
      Send(R"({"method":"POST","path":"/x","body":"raw text","content_type":"text/plain"})").ok);
  ASSERT_EQ(calls_.seen.size(), 2u);
  EXPECT_EQ(calls_.seen[0].body, R"({"q":[1,2]})");
  EXPECT_EQ(calls_.seen[0].content_type, "application/json");
  EXPECT_EQ(calls_.seen[1].body, "raw text");
  EXPECT_EQ(calls_.seen[1].content_type, "text/plain");
}

TEST_F(HostCallBridgeTest, BytesThatAreNotUtf8ComeBackAsBase64) {
  calls_.answer.body = std::string("\xff\x00\x01", 3);
  engine::HostAnswer answer = Send(R"({"method":"GET","path":"/blob"})");
  ASSERT_TRUE(answer.ok);
  auto parsed = nlohmann::json::parse(answer.body);
  EXPECT_FALSE(parsed.contains("body"));
  EXPECT_EQ(parsed["body_base64"], "/wAB");
}

TEST_F(HostCallBridgeTest, ARefusedCallThrowsTheBrokersMessage) {
  calls_.answer = HostCallAnswer{.status = 403,
                                 .content_type = "application/json",
                                 .body = R"({"error":"not_allowed"})",
                                 .refused = "not_allowed",
                                 .message = "No allow entry matches."};
  engine::HostAnswer answer = Send(R"({"method":"GET","path":"/admin"})");
  EXPECT_FALSE(answer.ok);
  EXPECT_EQ(answer.body, "No allow entry matches.");
}

TEST_F(HostCallBridgeTest, ARequestItCannotReadNeverReachesTheBroker) {
  for (const char* request : {"not json", "[1]", R"({"path":"/x"})", R"({"method":"GET"})",
                              R"({"method":1,"path":"/x"})", R"({"method":"GET","path":["/x"]})",
                              R"({"method":"GET","path":"/x","headers":{"Authorization":"y"}})",
                              R"({"method":"GET","path":"/x","content_type":7})"}) {
    engine::HostAnswer answer = Send(request);
    EXPECT_FALSE(answer.ok) << request;
    EXPECT_THAT(answer.body, HasSubstr("host call")) << request;
  }
  EXPECT_TRUE(calls_.seen.empty());
}

// Issue 39: the script's JSON is guest input, parsed in the daemon's own
// process; its nesting is bounded like every other JSON the daemon reads
// (wire/json_reader.h), so a deeply nested body is refused, not parsed and
// then dumped recursively (which overflowed the stack).
TEST_F(HostCallBridgeTest, ADeeplyNestedBodyIsRefusedCleanly) {
  const std::size_t depth = std::size_t{1} << 19;  // the whole 1 MiB a script may send
  std::string deep = R"({"method":"POST","path":"/x","body":)";
  deep.append(depth, '[');
  deep.append(depth, ']');
  deep += "}";
  engine::HostAnswer answer = Send(deep);
  EXPECT_FALSE(answer.ok);
  EXPECT_THAT(answer.body, HasSubstr("host call"));
  EXPECT_THAT(answer.body, HasSubstr("deeper than 64"));

  // Just over the limit is refused too; at it, the body goes through.
  auto nested = [](int levels) {
    return R"({"method":"POST","path":"/x","body":)" + std::string(levels, '[') +
           std::string(levels, ']') + "}";
  };
  EXPECT_FALSE(Send(nested(64)).ok);
  EXPECT_TRUE(calls_.seen.empty());
  ASSERT_TRUE(Send(nested(63)).ok);
  ASSERT_EQ(calls_.seen.size(), 1u);
  EXPECT_EQ(calls_.seen[0].body, std::string(63, '[') + std::string(63, ']'));

  // A repeated key is refused as well: two parsers must not read two requests.
  EXPECT_FALSE(Send(R"({"method":"GET","path":"/x","path":"/admin"})").ok);
  EXPECT_EQ(calls_.seen.size(), 1u);
}

}  // namespace
}  // namespace plimsoll
