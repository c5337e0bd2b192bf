// Refusals: every one carries the mark in the body and in
// Plimsoll-Not-Dispatched, echoes the request ID, and provably ran nothing
// (the provider's run counter did not move).
#include <gtest/gtest.h>

#include <array>
#include <boost/asio/write.hpp>
#include <chrono>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "daemon_fixture.h"

namespace plimsoll::daemon::testing {
namespace {

using nlohmann::json;

// Checks the shape of a refusal and returns its error object.
json ExpectRefusal(const HttpReply& reply, unsigned status, const std::string& code,
                   const std::string& reason) {
  EXPECT_EQ(reply.status, status) << reply.body;
  EXPECT_EQ(reply.Header("plimsoll-not-dispatched"), reason) << reply.body;
  EXPECT_EQ(reply.Header("content-type"), "application/json");
  if (!reply.sent_request_id.empty()) {
    EXPECT_EQ(reply.Header("plimsoll-request-id"), reply.sent_request_id);
  }
  json body = json::parse(reply.body);
  json error = body["error"];
  EXPECT_EQ(error["code"], code) << reply.body;
  EXPECT_EQ(error["not_dispatched"], reason) << reply.body;
  EXPECT_FALSE(error["message"].get<std::string>().empty());
  if (!reply.sent_request_id.empty()) {
    EXPECT_EQ(error["request_id"], reply.sent_request_id);
  }
  return error;
}

HttpCall PostRun(std::string body) {
  return {.method = "POST", .target = "/v1/runs", .body = std::move(body)};
}

TEST(DaemonRefusals, BadJsonIsARequestRefusal) {
  DaemonUnderTest daemon;
  ExpectRefusal(SendOnce(daemon.port(), PostRun("{\"protocol\": 1, ")), 400, "invalid_argument",
                "request");
  ExpectRefusal(SendOnce(daemon.port(), PostRun(RunBody("1", R"("minimum_isolaton": "vm")"))), 400,
                "invalid_argument", "request");
  EXPECT_EQ(daemon.provider().runs(), 0);
}

TEST(DaemonRefusals, OversizeBodyIsRefusedBeforeItIsRead) {
  DaemonUnderTest daemon;
  std::string huge(size_t{8} << 20, ' ');
  huge += "{}";
  HttpReply reply = SendOnce(daemon.port(), PostRun(huge));
  ExpectRefusal(reply, 413, "invalid_argument", "request");
  EXPECT_EQ(daemon.provider().runs(), 0);
}

TEST(DaemonRefusals, UnknownRouteAndWrongMethodCarryTheMark) {
  DaemonUnderTest daemon;
  ExpectRefusal(SendOnce(daemon.port(), {.method = "GET", .target = "/v2/nothing"}), 404,
                "not_found", "request");
  HttpReply wrong = SendOnce(daemon.port(), {.method = "GET", .target = "/v1/runs"});
  ExpectRefusal(wrong, 405, "invalid_argument", "request");
  EXPECT_EQ(wrong.Header("allow"), "POST");
  EXPECT_EQ(daemon.provider().runs(), 0);
}

// An answer to HEAD has a GET answer's headers and no content (RFC 9110
// §9.3.2): content after the header would be read by a client that keeps the
// connection as the start of its next answer.
TEST(DaemonRefusals, AnAnswerToHeadCarriesNoContentAndTheConnectionStaysInStep) {
  DaemonUnderTest daemon;
  TestClient client(daemon.port());
  const std::string head =
      "HEAD /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nPlimsoll-Request-Id: " + FreshRequestId() +
      "\r\n\r\n";
  boost::asio::write(client.socket(), boost::asio::buffer(head));
  std::string bytes;
  auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (bytes.find("\r\n\r\n") == std::string::npos &&
         std::chrono::steady_clock::now() < give_up) {
    std::array<char, 4096> chunk;
    size_t got = client.socket().read_some(boost::asio::buffer(chunk));
    bytes.append(chunk.data(), got);
  }
  size_t end = bytes.find("\r\n\r\n");
  ASSERT_NE(end, std::string::npos) << bytes;
  EXPECT_EQ(bytes.rfind("HTTP/1.1 405", 0), 0u) << bytes;
  EXPECT_NE(bytes.find("Plimsoll-Not-Dispatched: request"), std::string::npos) << bytes;
  // Nothing after the header, then or later: the next answer starts clean.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  EXPECT_EQ(client.socket().available(), 0u);
  EXPECT_EQ(bytes.size(), end + 4) << bytes.substr(end + 4);
  HttpReply next = client.Send({.method = "GET", .target = "/healthz"});
  EXPECT_EQ(next.status, 200u) << next.body;
  EXPECT_EQ(next.Header("plimsoll-request-id"), next.sent_request_id);
}

TEST(DaemonRefusals, WrongContentTypeIsRefused) {
  DaemonUnderTest daemon;
  HttpCall call = PostRun(RunBody("1"));
  call.content_type = "text/plain";
  ExpectRefusal(SendOnce(daemon.port(), call), 415, "invalid_argument", "request");
  call.content_type = std::nullopt;
  ExpectRefusal(SendOnce(daemon.port(), call), 415, "invalid_argument", "request");
  call.content_type = "application/json; charset=UTF-8";
  EXPECT_EQ(SendOnce(daemon.port(), call).status, 200u);
  EXPECT_EQ(daemon.provider().runs(), 1);
}

TEST(DaemonRefusals, ProtocolIsCheckedBeforeThePayload) {
  DaemonUnderTest daemon;
  ExpectRefusal(SendOnce(daemon.port(), PostRun(R"({"protocol": 2, "javascript": {"code": "1"}})")),
                409, "failed_precondition", "protocol");
  // A broken payload does not hide a wrong protocol.
  ExpectRefusal(SendOnce(daemon.port(), PostRun(R"({"javascript": 5, "protocol": 7})")), 409,
                "failed_precondition", "protocol");
  ExpectRefusal(SendOnce(daemon.port(), PostRun(R"({"javascript": {"code": "1"}})")), 409,
                "failed_precondition", "protocol");
  EXPECT_EQ(daemon.provider().runs(), 0);
}

TEST(DaemonRefusals, FloorAboveTheEvidenceRunsNothing) {
  DaemonUnderTest daemon;
  json error = ExpectRefusal(
      SendOnce(daemon.port(),
               PostRun(RunBody("console.log(1)", R"("minimum_isolation": "container")"))),
      409, "failed_precondition", "isolation");
  EXPECT_NE(error["message"].get<std::string>().find("container"), std::string::npos);
  EXPECT_EQ(daemon.provider().runs(), 0);
}

// No broker yet (issue 19): a named profile is refused as an unknown one would
// be, and the code does not run without the grant it asked for.
TEST(DaemonRefusals, AGrantProfileNoDaemonServesRunsNothing) {
  DaemonUnderTest daemon;
  ExpectRefusal(
      SendOnce(daemon.port(), PostRun(RunBody("console.log(1)", R"("grant_profile": "crm-read")"))),
      403, "permission_denied", "permission");
  EXPECT_EQ(daemon.provider().runs(), 0);
}

TEST(DaemonRefusals, UnsupportedPayloadRunsNothing) {
  DaemonUnderTest daemon;
  ExpectRefusal(
      SendOnce(daemon.port(), PostRun(R"j({"protocol": 1, "python": {"code": "print(1)"}})j")), 501,
      "unimplemented", "unsupported");
}

TEST(DaemonRefusals, WithoutCallersEveryApiRouteIsUnauthenticated) {
  DaemonUnderTest daemon({.provider = "disabled", .dev = false, .tune = {}});
  HttpReply run = SendOnce(daemon.port(), PostRun(RunBody("1")));
  ExpectRefusal(run, 401, "unauthenticated", "permission");
  EXPECT_EQ(run.Header("www-authenticate"), "Bearer");
  ExpectRefusal(SendOnce(daemon.port(), {.method = "GET", .target = "/v1/describe"}), 401,
                "unauthenticated", "permission");
  EXPECT_EQ(daemon.provider().runs(), 0);
}

TEST(DaemonRefusals, DisabledProviderRefusesUnsupported) {
  DaemonUnderTest daemon({.provider = "disabled", .dev = true, .tune = {}});
  json error = ExpectRefusal(SendOnce(daemon.port(), PostRun(RunBody("1"))), 501, "unimplemented",
                             "unsupported");
  EXPECT_NE(error["message"].get<std::string>().find("--provider"), std::string::npos);
}

TEST(DaemonRefusals, AFullRunPoolShedsCapacity) {
  DaemonUnderTest daemon({.provider = "embedded", .dev = true, .tune = [](Settings& settings) {
                            settings.run_workers = 1;
                            settings.run_queue = 0;
                            settings.max_concurrent_runs = 2;  // the pool is the bound here
                          }});
  daemon.provider().Hold();
  auto first = std::async(std::launch::async, [&] {
    return SendOnce(daemon.port(), PostRun(RunBody("console.log(1)")));
  });
  while (daemon.provider().runs() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  HttpReply shed = SendOnce(daemon.port(), PostRun(RunBody("console.log(2)")));
  ExpectRefusal(shed, 429, "resource_exhausted", "capacity");
  EXPECT_EQ(shed.Header("retry-after"), "1");
  daemon.provider().Release();
  EXPECT_EQ(first.get().status, 200u);
  EXPECT_EQ(daemon.provider().runs(), 1);
}

TEST(DaemonRefusals, InternalErrorsAreMaskedWithAnErrorId) {
  DaemonUnderTest daemon;
  daemon.provider().FailRunsWith("secret detail /var/lib/thing");
  HttpReply reply = SendOnce(daemon.port(), PostRun(RunBody("1")));
  EXPECT_EQ(reply.status, 500u);
  EXPECT_EQ(reply.Count("plimsoll-not-dispatched"), 0u);
  std::string error_id = reply.Header("plimsoll-error-id");
  ASSERT_EQ(error_id.size(), 32u);
  json error = json::parse(reply.body)["error"];
  EXPECT_EQ(error["code"], "internal");
  EXPECT_FALSE(error.contains("not_dispatched"));
  std::string message = error["message"];
  EXPECT_EQ(message.find("secret"), std::string::npos);
  EXPECT_NE(message.find(error_id), std::string::npos);
  std::string log = daemon.log_text();
  EXPECT_NE(log.find(error_id), std::string::npos);
  EXPECT_NE(log.find("secret detail"), std::string::npos);
}

TEST(DaemonRequestIds, AbsentMalformedAndRepeatedIdsAreNeitherEchoedNorRefused) {
  DaemonUnderTest daemon;
  HttpReply absent =
      SendOnce(daemon.port(),
               {.method = "POST", .target = "/v1/runs", .body = "{", .send_request_id = false});
  ExpectRefusal(absent, 400, "invalid_argument", "request");
  EXPECT_EQ(absent.Count("plimsoll-request-id"), 0u);
  EXPECT_FALSE(json::parse(absent.body)["error"].contains("request_id"));

  for (std::string bad : {std::string(32, 'A'), std::string(31, 'a'), std::string(33, 'a'),
                          std::string("0123456789abcdef0123456789abcdeg"), std::string()}) {
    HttpReply reply = SendOnce(daemon.port(), {.method = "GET",
                                               .target = "/healthz",
                                               .headers = {{"Plimsoll-Request-Id", bad}},
                                               .send_request_id = false});
    EXPECT_EQ(reply.status, 200u) << bad;
    EXPECT_EQ(reply.Count("plimsoll-request-id"), 0u) << bad;
  }

  std::string one = FreshRequestId();
  for (auto headers :
       {std::vector<std::pair<std::string, std::string>>{{"Plimsoll-Request-Id", one},
                                                         {"Plimsoll-Request-Id", one}},
        std::vector<std::pair<std::string, std::string>>{
            {"Plimsoll-Request-Id", one}, {"plimsoll-request-id", FreshRequestId()}}}) {
    HttpReply twice = SendOnce(daemon.port(), {.method = "POST",
                                               .target = "/v1/runs",
                                               .body = "[]",
                                               .headers = headers,
                                               .send_request_id = false});
    ExpectRefusal(twice, 400, "invalid_argument", "request");
    EXPECT_EQ(twice.Count("plimsoll-request-id"), 0u);
    EXPECT_FALSE(json::parse(twice.body)["error"].contains("request_id"));
  }
  EXPECT_EQ(daemon.provider().runs(), 0);
}

}  // namespace
}  // namespace plimsoll::daemon::testing
