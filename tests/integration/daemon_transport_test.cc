// Transport behaviour: slow clients, malformed HTTP, oversize headers,
// 100-continue, many concurrent clients, and the drain.
#include <gtest/gtest.h>

#include <boost/asio/write.hpp>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "daemon_fixture.h"
#include "plimsoll/wire.h"

namespace plimsoll::daemon::testing {
namespace {

using nlohmann::json;
using std::chrono::milliseconds;

DaemonOptions Quick() {
  return {.provider = "embedded", .dev = true, .tune = [](Settings& settings) {
            settings.http.header_timeout = milliseconds(300);
            settings.http.body_timeout = milliseconds(300);
            settings.http.idle_timeout = milliseconds(300);
          }};
}

TEST(DaemonTransport, ASlowHeaderGets408WithTheMarkThenTheConnectionCloses) {
  DaemonUnderTest daemon(Quick());
  TestClient client(daemon.port());
  auto started = std::chrono::steady_clock::now();
  auto reply = client.SendRaw("POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  ASSERT_TRUE(reply.has_value());
  EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(5));
  EXPECT_EQ(reply->status, 408u);
  EXPECT_EQ(reply->Header("plimsoll-not-dispatched"), "request");
  EXPECT_EQ(json::parse(reply->body)["error"]["not_dispatched"], "request");
  EXPECT_TRUE(client.WaitForClose(milliseconds(2000)));
}

TEST(DaemonTransport, ASlowBodyGets408AndEchoesTheId) {
  DaemonUnderTest daemon(Quick());
  TestClient client(daemon.port());
  std::string id = FreshRequestId();
  auto reply = client.SendRaw(
      "POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Plimsoll-Request-Id: " +
      id + "\r\nContent-Length: 100\r\n\r\n{\"pro");
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 408u);
  EXPECT_EQ(reply->Header("plimsoll-request-id"), id);
  EXPECT_EQ(reply->Header("plimsoll-not-dispatched"), "request");
  EXPECT_EQ(daemon.provider().runs(), 0);
}

TEST(DaemonTransport, AnIdleConnectionIsClosedQuietly) {
  DaemonUnderTest daemon(Quick());
  TestClient client(daemon.port());
  EXPECT_TRUE(client.WaitForClose(milliseconds(3000)));
}

TEST(DaemonTransport, MalformedHttpIs400WithTheMark) {
  DaemonUnderTest daemon;
  TestClient client(daemon.port());
  auto reply = client.SendRaw("THIS IS NOT HTTP\r\n\r\n");
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 400u);
  EXPECT_EQ(reply->Header("plimsoll-not-dispatched"), "request");
}

TEST(DaemonTransport, AnOversizeHeaderIs431WithTheMark) {
  DaemonUnderTest daemon;
  HttpReply reply = SendOnce(
      daemon.port(),
      {.method = "GET", .target = "/healthz", .headers = {{"X-Padding", std::string(20000, 'p')}}});
  EXPECT_EQ(reply.status, 431u);
  EXPECT_EQ(reply.Header("plimsoll-not-dispatched"), "request");
}

TEST(DaemonTransport, ExpectContinueIsHonoured) {
  DaemonUnderTest daemon;
  TestClient client(daemon.port());
  std::string body = RunBody("console.log(6*7)");
  std::string head =
      "POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
      "Expect: 100-continue\r\nContent-Length: " +
      std::to_string(body.size()) + "\r\n\r\n";
  boost::asio::write(client.socket(), boost::asio::buffer(head));
  char interim[64] = {};
  size_t size = client.socket().read_some(boost::asio::buffer(interim, 25));
  EXPECT_EQ(std::string(interim, size).substr(0, 12), "HTTP/1.1 100");
  auto reply = client.SendRaw(body);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->status, 200u);
  EXPECT_EQ(json::parse(reply->body)["stdout"], "42\n");
}

// What a client of one kind sends, and what it must get back.
struct Mix {
  HttpCall call;
  unsigned status;
  std::string reason;  // "" = no mark
};

std::vector<Mix> Mixes() {
  return {
      {{.method = "POST", .target = "/v1/runs", .body = RunBody("console.log(6*7)")}, 200, ""},
      {{.method = "POST", .target = "/v1/runs", .body = "{nope"}, 400, "request"},
      {{.method = "POST",
        .target = "/v1/runs",
        .body = RunBody("1", R"("minimum_isolation": "vm")")},
       409,
       "isolation"},
      {{.method = "POST", .target = "/v1/runs", .body = R"({"protocol": 9})"}, 409, "protocol"},
      {{.method = "GET", .target = "/v1/describe"}, 200, ""},
      {{.method = "GET", .target = "/nowhere"}, 404, "request"},
      {{.method = "POST", .target = "/v1/runs", .body = RunBody("1"), .content_type = "text/csv"},
       415,
       "request"},
      {{.method = "GET", .target = "/healthz"}, 200, ""},
  };
}

TEST(DaemonTransport, FiftyConcurrentClientsAllGetWellFormedAnswers) {
  DaemonUnderTest daemon({.provider = "embedded", .dev = true, .tune = [](Settings& settings) {
                            settings.run_workers = 2;
                            settings.run_queue = 200;
                            settings.max_concurrent_runs = 250;  // queue, do not shed
                          }});
  std::vector<Mix> mixes = Mixes();
  std::vector<std::future<std::string>> clients;
  for (int i = 0; i < 50; ++i) {
    clients.push_back(std::async(std::launch::async, [&, i]() -> std::string {
      auto client = std::make_unique<TestClient>(daemon.port());
      for (int round = 0; round < 4; ++round) {
        const Mix& mix = mixes[(i + round) % mixes.size()];
        HttpReply reply = client->Send(mix.call);
        // A refusal made before the body was read closes the connection.
        if (!reply.keep_alive) client = std::make_unique<TestClient>(daemon.port());
        std::string where = "client " + std::to_string(i) + " " + mix.call.target + ": ";
        if (reply.status != mix.status) return where + "status " + std::to_string(reply.status);
        if (reply.Header("plimsoll-request-id") != reply.sent_request_id) return where + "no echo";
        if (reply.Header("plimsoll-not-dispatched") != mix.reason) return where + "mark";
        json body = json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
        if (body.is_discarded()) return where + "not JSON";
        if (mix.status >= 400) {
          auto error = ParseErrorJson(reply.body);
          if (!error.ok()) return where + error.error().ToString();
          if (error->request_id != reply.sent_request_id) return where + "body id";
        } else if (mix.call.method == "POST" && !ParseResultJson(reply.body).ok()) {
          return where + "result unreadable";
        }
      }
      return "";
    }));
  }
  for (auto& client : clients) EXPECT_EQ(client.get(), "");
}

TEST(DaemonTransport, DrainFinishesInFlightRunsAndStopsAccepting) {
  DaemonUnderTest daemon;
  uint16_t port = daemon.port();
  daemon.provider().Hold();
  auto in_flight = std::async(std::launch::async, [&] {
    return SendOnce(port,
                    {.method = "POST", .target = "/v1/runs", .body = RunBody("console.log(7)")});
  });
  TestClient idle(port);  // an idle keep-alive connection must not hold the drain
  while (daemon.provider().runs() == 0) std::this_thread::sleep_for(milliseconds(5));

  auto drained = std::async(std::launch::async,
                            [&] { return daemon.server().Drain(std::chrono::seconds(20)); });
  EXPECT_TRUE(idle.WaitForClose(milliseconds(5000)));
  // New connections are no longer accepted.
  bool refused = false;
  for (int attempt = 0; attempt < 100 && !refused; ++attempt) {
    try {
      TestClient late(port);
      late.Send({.method = "GET", .target = "/healthz"});
      std::this_thread::sleep_for(milliseconds(10));
    } catch (const std::exception&) {
      refused = true;
    }
  }
  EXPECT_TRUE(refused);
  EXPECT_EQ(drained.wait_for(milliseconds(100)), std::future_status::timeout);

  daemon.provider().Release();
  HttpReply reply = in_flight.get();
  EXPECT_EQ(reply.status, 200u);
  EXPECT_EQ(json::parse(reply.body)["stdout"], "7\n");
  EXPECT_TRUE(drained.get());
}

}  // namespace
}  // namespace plimsoll::daemon::testing
