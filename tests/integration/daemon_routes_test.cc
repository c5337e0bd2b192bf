// Every route of api/openapi.yaml over real HTTP, happy paths first.
#include <gtest/gtest.h>

#include <boost/asio/write.hpp>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/cli.h"
#include "daemon_fixture.h"
#include "plimsoll/record.h"
#include "plimsoll/wire.h"

namespace plimsoll::daemon::testing {
namespace {

using nlohmann::json;

// The keys of a JSON value, recursively, as "a", "a.b", "a[].c" paths.
void CollectKeys(const json& value, const std::string& prefix, std::set<std::string>& keys) {
  if (value.is_object()) {
    for (const auto& [key, member] : value.items()) {
      keys.insert(prefix + key);
      CollectKeys(member, prefix + key + ".", keys);
    }
  } else if (value.is_array()) {
    for (const auto& element : value) CollectKeys(element, prefix + "[].", keys);
  }
}

std::set<std::string> Keys(const json& value) {
  std::set<std::string> keys;
  CollectKeys(value, "", keys);
  return keys;
}

void ExpectEchoed(const HttpReply& reply) {
  ASSERT_FALSE(reply.sent_request_id.empty());
  EXPECT_EQ(reply.Count("plimsoll-request-id"), 1u);
  EXPECT_EQ(reply.Header("plimsoll-request-id"), reply.sent_request_id);
}

TEST(DaemonRoutes, HealthzAnswersOkWithoutAuthentication) {
  DaemonUnderTest daemon({.provider = "disabled", .dev = false, .tune = {}});
  HttpReply reply = SendOnce(daemon.port(), {.method = "GET", .target = "/healthz"});
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(json::parse(reply.body)["status"], "ok");
  ExpectEchoed(reply);
}

TEST(DaemonRoutes, ReadyzRerunsThePreflight) {
  DaemonUnderTest daemon;
  HttpReply reply = SendOnce(daemon.port(), {.method = "GET", .target = "/readyz"});
  EXPECT_EQ(reply.status, 200u);
  json body = json::parse(reply.body);
  EXPECT_EQ(body["status"], "ready");
  EXPECT_EQ(body["tier"], "process");
  ExpectEchoed(reply);
}

TEST(DaemonRoutes, DescribeShowsTierEvidenceCapabilitiesAndLimits) {
  DaemonUnderTest daemon;
  HttpReply reply = SendOnce(daemon.port(), {.method = "GET", .target = "/v1/describe"});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  ExpectEchoed(reply);
  EXPECT_EQ(reply.Header("content-type"), "application/json");
  json body = json::parse(reply.body);
  EXPECT_EQ(body["protocol"], kProtocol);
  EXPECT_EQ(body["provider"], "embedded");
  EXPECT_EQ(body["tier"], "process");
  EXPECT_EQ(body["evidence"]["tier"], "process");
  EXPECT_TRUE(body["evidence"]["all_checks_passed"].get<bool>());
  EXPECT_FALSE(body["evidence"]["checks"].empty());
  EXPECT_EQ(body["capabilities"]["languages"], json::array({"javascript"}));
  EXPECT_EQ(body["sessions"]["enabled"], true);  // kept JavaScript interpreters
  EXPECT_EQ(body["limits"]["run_ceiling_ms"], Limits{}.run_ceiling_ms);
  EXPECT_TRUE(body["environment"].get<std::string>().starts_with("sha256:"));
}

TEST(DaemonRoutes, RunAnswersTheSameObjectAsTheCliJson) {
  DaemonUnderTest daemon;
  Request sent;
  sent.javascript = JavascriptPayload{"console.log(6*7)"};
  HttpReply reply = SendOnce(daemon.port(),
                             {.method = "POST", .target = "/v1/runs", .body = RequestToJson(sent)});
  ASSERT_EQ(reply.status, 200u) << reply.body;
  ExpectEchoed(reply);
  EXPECT_EQ(reply.Count("plimsoll-not-dispatched"), 0u);
  json body = json::parse(reply.body);
  EXPECT_EQ(body["stdout"], "42\n");
  EXPECT_EQ(body["exit_code"], 0);
  EXPECT_EQ(body["isolation"], "process");
  EXPECT_EQ(daemon.provider().runs(), 1);

  // The client-side exchange check passes on what came over the wire.
  auto result = ParseResultJson(reply.body);
  ASSERT_TRUE(result.ok()) << result.error().ToString();
  Status exchange = CheckExchange(sent, *result);
  EXPECT_TRUE(exchange.ok()) << exchange.error().ToString();

  std::ostringstream out, err;
  int status = cli::Main(
      {"plimsoll", "run", "--provider", "embedded", "--json", "-e", "console.log(6*7)"}, out, err);
  ASSERT_EQ(status, 0) << err.str();
  json cli = json::parse(out.str());
  EXPECT_EQ(Keys(cli), Keys(body));
  for (const char* key : {"provider", "isolation", "environment", "kind", "exit_code", "timed_out",
                          "stdout", "stderr", "stdout_truncated", "stderr_truncated"}) {
    EXPECT_EQ(cli[key], body[key]) << key;
  }
  // Same request bytes -> same request digest on both paths.
  EXPECT_EQ(cli["record"]["request_sha256"], body["record"]["request_sha256"]);
}

TEST(DaemonRoutes, MetricsLiveOnTheirOwnListener) {
  DaemonUnderTest daemon;
  SendOnce(daemon.port(), {.method = "POST", .target = "/v1/runs", .body = RunBody("1")});
  SendOnce(daemon.port(), {.method = "POST", .target = "/v1/runs", .body = "{"});
  HttpReply metrics = SendOnce(daemon.metrics_port(), {.method = "GET", .target = "/metrics"});
  ASSERT_EQ(metrics.status, 200u);
  EXPECT_TRUE(metrics.Header("content-type").starts_with("text/plain; version=0.0.4"));
  EXPECT_NE(metrics.body.find("plimsoll_runs_total{provider=\"embedded\",isolation=\"process\","
                              "outcome=\"exited\"} 1"),
            std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("plimsoll_refusals_total{reason=\"request\"} 1"), std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("plimsoll_runs_in_flight 0"), std::string::npos);

  EXPECT_EQ(SendOnce(daemon.port(), {.method = "GET", .target = "/metrics"}).status, 404u);
  EXPECT_EQ(SendOnce(daemon.metrics_port(), {.method = "GET", .target = "/v1/describe"}).status,
            404u);
}

TEST(DaemonRoutes, KeepAliveServesSeveralRequestsOnOneConnection) {
  DaemonUnderTest daemon;
  TestClient client(daemon.port());
  for (int i = 0; i < 3; ++i) {
    HttpReply reply =
        client.Send({.method = "POST", .target = "/v1/runs", .body = RunBody("console.log(1)")});
    EXPECT_EQ(reply.status, 200u);
    EXPECT_TRUE(reply.keep_alive);
    ExpectEchoed(reply);
  }
  EXPECT_EQ(daemon.provider().runs(), 3);
}

// RFC 9110 §9.3.2: an answer to HEAD has a GET's headers and no content, so
// the bytes on the wire end with the header block (a body there would be
// read as the start of the next answer on a kept-alive connection).
TEST(DaemonRoutes, AnAnswerToHeadCarriesNoContent) {
  DaemonUnderTest daemon;
  for (const char* target : {"/v1/runs", "/healthz", "/v1/nothing"}) {
    TestClient client(daemon.port());
    std::string request = std::string("HEAD ") + target +
                          " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n";
    boost::asio::write(client.socket(), boost::asio::buffer(request));
    std::string answer;
    boost::system::error_code error;
    char chunk[4096];
    while (!error) {
      size_t size = client.socket().read_some(boost::asio::buffer(chunk), error);
      answer.append(chunk, size);
    }
    size_t end_of_headers = answer.find("\r\n\r\n");
    ASSERT_NE(end_of_headers, std::string::npos) << target << ": " << answer;
    EXPECT_EQ(answer.size(), end_of_headers + 4) << target << ": content after the headers: "
                                                 << answer.substr(end_of_headers + 4);
    EXPECT_TRUE(answer.starts_with("HTTP/1.1 ")) << answer;
  }
}

TEST(DaemonRoutes, UnixSocketServesTheApi) {
  std::string path =
      ::testing::TempDir() + "plimsolld-test-" + FreshRequestId().substr(0, 8) + ".sock";
  DaemonUnderTest daemon({.provider = "embedded", .dev = true, .tune = [&](Settings& settings) {
                            settings.unix_socket = path;
                          }});
  boost::asio::io_context io_context;
  boost::asio::local::stream_protocol::socket socket(io_context);
  socket.connect(boost::asio::local::stream_protocol::endpoint(path));
  std::string id = FreshRequestId();
  std::string request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nPlimsoll-Request-Id: " + id +
                        "\r\nConnection: close\r\n\r\n";
  boost::asio::write(socket, boost::asio::buffer(request));
  std::string answer;
  boost::system::error_code error;
  char chunk[4096];
  while (!error) {
    size_t size = socket.read_some(boost::asio::buffer(chunk), error);
    answer.append(chunk, size);
  }
  EXPECT_TRUE(answer.starts_with("HTTP/1.1 200")) << answer;
  EXPECT_NE(answer.find("Plimsoll-Request-Id: " + id), std::string::npos);
}

}  // namespace
}  // namespace plimsoll::daemon::testing
