// plimsoll::Client against a scripted fake daemon (testing/fake_daemon.h):
// what reaches the wire, and what the client believes of what comes back.
#include "plimsoll/client.h"

#include <gtest/gtest.h>

#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <functional>
#include <nlohmann/json.hpp>
#include <thread>

#include "client/request_id.h"
#include "client/testing/fake_daemon.h"
#include "plimsoll/wire.h"

namespace plimsoll {
namespace {

using client::testing::FakeDaemon;
using client::testing::HonestRunAnswer;
using client::testing::RawResponse;
using client::testing::RefusalAnswer;
using client::testing::Reply;
using client::testing::SeenRequest;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr char kOtherId[] = "fedcba9876543210fedcba9876543210";

Request Snippet(std::string code = "console.log(6*7)") {
  Request request;
  request.timeout_ms = 5000;
  request.javascript = JavascriptPayload{std::move(code)};
  return request;
}

Client OpenOrDie(const std::string& url, ClientOptions options = {}) {
  auto client = Client::Open(url, std::move(options));
  if (!client.ok()) throw std::runtime_error(client.error().ToString());
  return std::move(*client);
}

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  size_t at = text.find(from);
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

milliseconds Since(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

TEST(ClientTest, SendsAFreshIdTheTokenAndTheProtocolAndBelievesAnHonestAnswer) {
  FakeDaemon daemon([](const SeenRequest& seen) { return HonestRunAnswer(seen); });
  Client client = OpenOrDie(daemon.url(), {.bearer_token = "tok-123"});
  Request request = Snippet();
  request.minimum_isolation = "process";
  Expected<Result> first = client.Run(request);
  ASSERT_TRUE(first.ok()) << first.error().ToString();
  EXPECT_EQ(first->stdout_bytes, "42\n");
  EXPECT_EQ(first->isolation, Tier::kProcess);
  ASSERT_TRUE(client.Run(request).ok());

  std::vector<SeenRequest> seen = daemon.requests();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].method, "POST");
  EXPECT_EQ(seen[0].target, "/v1/runs");
  EXPECT_EQ(seen[0].Header("authorization"), "Bearer tok-123");
  EXPECT_EQ(seen[0].Header("content-type"), "application/json");
  EXPECT_EQ(seen[0].Header("host"), "127.0.0.1:" + std::to_string(daemon.port()));
  EXPECT_EQ(seen[0].headers.count("plimsoll-request-id"), 1u);
  EXPECT_TRUE(client::IsWellFormedRequestId(seen[0].Header("plimsoll-request-id")));
  EXPECT_NE(seen[0].Header("plimsoll-request-id"), seen[1].Header("plimsoll-request-id"))
      << "a fresh ID per HTTP request";
  nlohmann::json body = nlohmann::json::parse(seen[0].body);
  EXPECT_EQ(body["protocol"], kProtocol);
  EXPECT_EQ(body["minimum_isolation"], "process");
  EXPECT_EQ(seen[0].body, RequestToJson(request)) << "the request is sent exactly as given";
}

TEST(ClientTest, KeepAliveReusesOneConnectionAndReplacesOneTheDaemonClosed) {
  int calls = 0;
  FakeDaemon daemon([&calls](const SeenRequest& seen) {
    Reply reply = HonestRunAnswer(seen);
    // The second answer keeps the connection "alive" but the server closes
    // it anyway, as an idle timeout would.
    reply.close_after = ++calls == 2;
    return reply;
  });
  Client client = OpenOrDie(daemon.url());
  ASSERT_TRUE(client.Run(Snippet()).ok());
  ASSERT_TRUE(client.Run(Snippet()).ok());
  EXPECT_EQ(client.connections_opened(), 1);
  EXPECT_EQ(daemon.connections_accepted(), 1);
  ASSERT_TRUE(daemon.WaitForClosedConnections(1, milliseconds(5000)));
  Expected<Result> third = client.Run(Snippet());
  ASSERT_TRUE(third.ok()) << "a connection the daemon closed while idle is replaced before "
                             "sending: "
                          << third.error().ToString();
  EXPECT_EQ(client.connections_opened(), 2);
  std::vector<SeenRequest> seen = daemon.requests();
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].connection, 1);
  EXPECT_EQ(seen[1].connection, 1);
  EXPECT_EQ(seen[2].connection, 2);
}

TEST(ClientTest, AConnectionCloseAnswerIsNotReused) {
  FakeDaemon daemon([](const SeenRequest& seen) {
    Reply reply = HonestRunAnswer(seen);
    reply.bytes = Replace(reply.bytes, "\r\n\r\n", "\r\nConnection: close\r\n\r\n");
    reply.close_after = true;
    return reply;
  });
  Client client = OpenOrDie(daemon.url());
  ASSERT_TRUE(client.Run(Snippet()).ok());
  ASSERT_TRUE(client.Run(Snippet()).ok());
  EXPECT_EQ(client.connections_opened(), 2);
}

TEST(ClientTest, ASwappedRequestIdTurnsASuccessIntoDataLoss) {
  FakeDaemon daemon([](const SeenRequest& seen) {
    Reply reply = HonestRunAnswer(seen);
    reply.bytes = Replace(reply.bytes, seen.Header("plimsoll-request-id"), kOtherId);
    return reply;
  });
  Client client = OpenOrDie(daemon.url());
  Expected<Result> result = client.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kDataLoss);
  EXPECT_FALSE(NotDispatchedReason(result.error()).has_value());
  EXPECT_NE(result.error().message().find(kOtherId), std::string::npos);
}

TEST(ClientTest, ASwappedRequestIdStripsARefusalsMark) {
  FakeDaemon daemon([](const SeenRequest& seen) {
    Reply reply = RefusalAnswer(seen, NotDispatched::kIsolation, "Below the floor.");
    // Both the header and the body name another call's ID: a proxy swapped it.
    std::string id = seen.Header("plimsoll-request-id");
    reply.bytes = Replace(Replace(reply.bytes, id, kOtherId), id, kOtherId);
    return reply;
  });
  Client client = OpenOrDie(daemon.url());
  Expected<Result> result = client.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_FALSE(NotDispatchedReason(result.error()).has_value()) << result.error().ToString();
  EXPECT_EQ(result.error().code(), ErrorCode::kDataLoss);
  EXPECT_NE(result.error().message().find("Below the floor."), std::string::npos);
}

TEST(ClientTest, AnHonestRefusalKeepsItsMark) {
  FakeDaemon daemon([](const SeenRequest& seen) {
    return RefusalAnswer(seen, NotDispatched::kIsolation, "Below the floor.");
  });
  Client client = OpenOrDie(daemon.url());
  Expected<Result> result = client.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kIsolation);
  EXPECT_EQ(result.error().message(), "Below the floor.");
}

TEST(ClientTest, ATamperedRecordDigestIsDataLoss) {
  FakeDaemon daemon([](const SeenRequest& seen) {
    return HonestRunAnswer(seen, Tier::kProcess,
                           [](Result& result) { result.record.record_sha256[0] ^= 1; });
  });
  Client client = OpenOrDie(daemon.url());
  Expected<Result> result = client.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kDataLoss);
  EXPECT_FALSE(NotDispatchedReason(result.error()).has_value());
  EXPECT_NE(result.error().message().find("record_sha256"), std::string::npos)
      << result.error().message();
}

TEST(ClientTest, ChangedOutputsAreDataLoss) {
  FakeDaemon daemon([](const SeenRequest& seen) {
    return HonestRunAnswer(seen, Tier::kProcess,
                           [](Result& result) { result.stdout_bytes = "41\n"; });
  });
  Client client = OpenOrDie(daemon.url());
  Expected<Result> result = client.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kDataLoss);
  EXPECT_NE(result.error().message().find("result_sha256"), std::string::npos);
}

TEST(ClientTest, ATierBelowTheFloorIsDataLoss) {
  // A daemon that ignores the floor and answers with a self-consistent record.
  FakeDaemon daemon([](const SeenRequest& seen) { return HonestRunAnswer(seen, Tier::kProcess); });
  Client client = OpenOrDie(daemon.url());
  Request request = Snippet();
  request.minimum_isolation = "container";
  Expected<Result> result = client.Run(request);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kDataLoss);
  EXPECT_FALSE(NotDispatchedReason(result.error()).has_value());
  EXPECT_NE(result.error().message().find("does not meet the requested floor \"container\""),
            std::string::npos)
      << result.error().message();
}

// A daemon's (or an on-path rewriter's) answer to the first call of session
// kOtherId at tier `tier`, with every digest and the chain link intact.
Reply FirstSessionCallAnswer(const SeenRequest& seen, Tier tier) {
  Expected<Request> request = ParseRequestJson(seen.body);
  if (!request.ok()) throw std::runtime_error("the client sent " + request.error().ToString());
  Result result;
  result.provider = "fake";
  result.isolation = tier;
  result.environment = "sha256:fake";
  result.kind = PayloadKind::kCell;
  result.duration_ms = 2;
  result.record = MakeRecord(*request, result, "sha256:policy", {1000, 1002},
                             SessionLink{SessionIdDigest(kOtherId), 1, ""});
  return {.bytes = RawResponse(200, {{"Plimsoll-Request-Id", seen.Header("plimsoll-request-id")}},
                               ResultToJson(result))};
}

TEST(ClientTest, ASessionFloorToldByTheCallerHoldsEveryCallOfThatSession) {
  // The session was opened elsewhere (another Client, another process) with
  // floor container; this Client only hears of it through SetSessionFloor.
  FakeDaemon daemon(
      [](const SeenRequest& seen) { return FirstSessionCallAnswer(seen, Tier::kProcess); });
  Client client = OpenOrDie(daemon.url());
  Request cell;  // a cell asks no floor of its own
  cell.cell = CellPayload{"javascript", "6 * 7"};

  ChainState unheld;
  ASSERT_TRUE(client.RunInSession(kOtherId, cell, unheld).ok())
      << "without a floor, a process-tier answer meets every check";

  ASSERT_TRUE(client.SetSessionFloor(kOtherId, "container").ok());
  ChainState chain;
  Expected<Result> lowered = client.RunInSession(kOtherId, cell, chain);
  ASSERT_FALSE(lowered.ok()) << "a cell below the floor the caller gave was believed";
  EXPECT_EQ(lowered.error().code(), ErrorCode::kDataLoss);
  EXPECT_FALSE(NotDispatchedReason(lowered.error()).has_value());
  EXPECT_NE(lowered.error().message().find("below the floor \"container\" the session was opened"),
            std::string::npos)
      << lowered.error().message();
  EXPECT_EQ(chain.last_sequence, 0);

  // A later SetSessionFloor replaces the floor.
  ASSERT_TRUE(client.SetSessionFloor(kOtherId, "process").ok());
  EXPECT_TRUE(client.RunInSession(kOtherId, cell, chain).ok());
}

TEST(ClientTest, SetSessionFloorRefusesWhatIsNotASessionOrAFloor) {
  FakeDaemon daemon([](const SeenRequest& seen) { return HonestRunAnswer(seen); });
  Client client = OpenOrDie(daemon.url());
  for (std::string_view floor : {"", "none", "unknown", "Container", "bogus"}) {
    Status set = client.SetSessionFloor(kOtherId, floor);
    ASSERT_FALSE(set.ok()) << floor;
    EXPECT_EQ(NotDispatchedReason(set.error()), NotDispatched::kRequest) << floor;
  }
  Status bad_id = client.SetSessionFloor("not-a-session", "container");
  ASSERT_FALSE(bad_id.ok());
  EXPECT_EQ(NotDispatchedReason(bad_id.error()), NotDispatched::kRequest);
  EXPECT_EQ(daemon.connections_accepted(), 0) << "setting a floor sends nothing";
}

TEST(ClientTest, AnOversizedAnswerIsAnErrorWithoutAMark) {
  // Content-Length beyond the default 16 MiB: refused from the header alone.
  FakeDaemon daemon([](const SeenRequest& seen) {
    Reply reply = HonestRunAnswer(seen);
    reply.bytes = Replace(reply.bytes, "Content-Length: ", "Content-Length: 99999999");
    reply.close_after = true;
    return reply;
  });
  Client client = OpenOrDie(daemon.url());
  Expected<Result> result = client.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kDataLoss);
  EXPECT_FALSE(NotDispatchedReason(result.error()).has_value());
  EXPECT_NE(result.error().message().find("larger than the client's limit of 16777216 bytes"),
            std::string::npos)
      << result.error().message();
}

TEST(ClientTest, AnAnswerThatGrowsPastTheLimitWithoutALengthIsAnError) {
  // No Content-Length: the body runs to the close, and past a 1000-byte limit.
  FakeDaemon daemon([](const SeenRequest& seen) {
    std::string bytes =
        "HTTP/1.1 200 OK\r\nPlimsoll-Request-Id: " + seen.Header("plimsoll-request-id") +
        "\r\nConnection: close\r\n\r\n" + std::string(5000, 'x');
    return Reply{.bytes = bytes, .close_after = true};
  });
  Client client = OpenOrDie(daemon.url(), {.max_response_bytes = 1000});
  Expected<Result> result = client.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kDataLoss);
  EXPECT_FALSE(NotDispatchedReason(result.error()).has_value());
  EXPECT_NE(result.error().message().find("1000 bytes"), std::string::npos);
}

TEST(ClientTest, MalformedAnswersAreErrorsWithoutAMark) {
  struct Case {
    const char* name;
    std::function<Reply(const SeenRequest&)> reply;
  };
  auto echo = [](const SeenRequest& seen) -> std::vector<std::pair<std::string, std::string>> {
    return {{"Plimsoll-Request-Id", seen.Header("plimsoll-request-id")},
            {"Plimsoll-Not-Dispatched", "isolation"}};
  };
  std::vector<Case> cases = {
      {"truncated JSON",
       [&](const SeenRequest& seen) { return Reply{RawResponse(200, echo(seen), "{\"prov")}; }},
      {"JSON that is not a result",
       [&](const SeenRequest& seen) { return Reply{RawResponse(200, echo(seen), "[1,2]")}; }},
      {"an error body that is not JSON",
       [&](const SeenRequest& seen) { return Reply{RawResponse(409, echo(seen), "<html>")}; }},
      {"not HTTP at all",
       [](const SeenRequest&) {
         return Reply{"SSH-2.0-OpenSSH\r\n\r\n", true};
       }},
      {"closed without answering",
       [](const SeenRequest&) {
         return Reply{"", true};
       }},
      {"a body shorter than its length",
       [&](const SeenRequest& seen) {
         return Reply{
             Replace(RawResponse(200, echo(seen), "{}"), "Content-Length: 2", "Content-Length: 50"),
             true};
       }},
      {"a deep JSON bomb",
       [&](const SeenRequest& seen) {
         return Reply{RawResponse(200, echo(seen), std::string(100000, '[') + "]")};
       }},
  };
  for (const Case& malformed : cases) {
    FakeDaemon daemon(malformed.reply);
    Client client = OpenOrDie(daemon.url());
    Expected<Result> result = client.Run(Snippet());
    ASSERT_FALSE(result.ok()) << malformed.name;
    EXPECT_FALSE(NotDispatchedReason(result.error()).has_value())
        << malformed.name << ": " << result.error().ToString();
    EXPECT_EQ(result.error().code(), ErrorCode::kDataLoss)
        << malformed.name << ": " << result.error().ToString();
  }
}

TEST(ClientTest, ASilentDaemonTimesOutAtTheRunsTimeoutPlusTheMargin) {
  FakeDaemon daemon([](const SeenRequest&) { return Reply{.never_answer = true}; });
  Client client = OpenOrDie(daemon.url(), {.run_timeout_margin = milliseconds(300)});
  Request request = Snippet();
  request.timeout_ms = 200;
  auto start = Clock::now();
  Expected<Result> result = client.Run(request);
  milliseconds took = Since(start);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().code(), ErrorCode::kDeadlineExceeded);
  EXPECT_FALSE(NotDispatchedReason(result.error()).has_value()) << "the request was sent";
  EXPECT_NE(result.error().message().find("within 500 ms"), std::string::npos)
      << result.error().message();
  EXPECT_GE(took, milliseconds(500));
  EXPECT_LT(took, milliseconds(10'000));
}

TEST(ClientTest, DescribeAndHealthzUseTheCallTimeout) {
  FakeDaemon daemon([](const SeenRequest&) { return Reply{.never_answer = true}; });
  Client client = OpenOrDie(daemon.url(), {.call_timeout = milliseconds(200)});
  auto start = Clock::now();
  Status health = client.Healthz();
  ASSERT_FALSE(health.ok());
  EXPECT_EQ(health.error().code(), ErrorCode::kDeadlineExceeded);
  EXPECT_LT(Since(start), milliseconds(10'000));
}

TEST(ClientTest, ANonLoopbackCleartextUrlIsRefusedWithoutConnecting) {
  auto start = Clock::now();
  auto client = Client::Open("http://192.0.2.1:8470");
  EXPECT_LT(Since(start), milliseconds(1000)) << "refused at once, no connection attempt";
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(NotDispatchedReason(client.error()), NotDispatched::kRequest);
  EXPECT_NE(client.error().message().find("Refusing cleartext http:// to 192.0.2.1"),
            std::string::npos);
  EXPECT_NE(client.error().message().find("--allow-cleartext"), std::string::npos);
  EXPECT_TRUE(Client::Open("https://192.0.2.1:8470").ok()) << "TLS needs no permission";
  EXPECT_TRUE(Client::Open("http://192.0.2.1:8470", {.allow_cleartext = true}).ok());
}

TEST(ClientTest, AnUnreachableDaemonIsARefusalBecauseNothingWasSent) {
  // A port nobody listens on: bind one, then close it.
  uint16_t port = 0;
  {
    boost::asio::io_context io;
    boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    port = acceptor.local_endpoint().port();
  }
  Client client = OpenOrDie("http://127.0.0.1:" + std::to_string(port));
  Expected<Result> result = client.Run(Snippet());
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kCapacity);
  EXPECT_NE(result.error().message().find("Nothing was sent"), std::string::npos);
  EXPECT_EQ(client.connections_opened(), 0);

  Client missing_socket = OpenOrDie("unix:/nonexistent/plimsoll.sock");
  EXPECT_EQ(NotDispatchedReason(missing_socket.Run(Snippet()).error()), NotDispatched::kCapacity);
}

TEST(ClientTest, AConnectTimeoutIsBoundedAndMarked) {
  // 192.0.2.1 (TEST-NET-1) is never routed: the connect either hangs until
  // the bound or fails at once (no route); both are "nothing was sent".
  Client client = OpenOrDie("http://192.0.2.1:8470",
                            {.allow_cleartext = true, .connect_timeout = milliseconds(300)});
  auto start = Clock::now();
  Expected<Result> result = client.Run(Snippet());
  EXPECT_LT(Since(start), milliseconds(5000));
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(NotDispatchedReason(result.error()), NotDispatched::kCapacity)
      << result.error().ToString();
}

TEST(ClientTest, OpenRefusesBadUrlsAndOptions) {
  EXPECT_EQ(NotDispatchedReason(Client::Open("ftp://x").error()), NotDispatched::kRequest);
  auto newline = Client::Open("http://127.0.0.1:1", {.bearer_token = "abc\r\nX-Evil: 1"});
  ASSERT_FALSE(newline.ok());
  EXPECT_NE(newline.error().message().find("token file"), std::string::npos);
  EXPECT_FALSE(Client::Open("http://127.0.0.1:1", {.max_response_bytes = 0}).ok());
  EXPECT_FALSE(Client::Open("http://127.0.0.1:1", {.connect_timeout = milliseconds(0)}).ok());
}

TEST(ClientTest, APathPrefixIsPrependedToEveryRoute) {
  FakeDaemon daemon([](const SeenRequest& seen) {
    return Reply{RawResponse(200, {{"Plimsoll-Request-Id", seen.Header("plimsoll-request-id")}},
                             R"({"status":"ok"})")};
  });
  Client client = OpenOrDie(daemon.url() + "/sandbox/");
  ASSERT_TRUE(client.Healthz().ok());
  EXPECT_EQ(daemon.requests().at(0).target, "/sandbox/healthz");
}

TEST(ClientTest, DescribeReadsTheDescription) {
  FakeDaemon daemon([](const SeenRequest& seen) {
    Description description;
    description.provider = "fake";
    description.tier = Tier::kContainer;
    Evidence evidence;
    evidence.tier = Tier::kContainer;
    return Reply{RawResponse(200, {{"Plimsoll-Request-Id", seen.Header("plimsoll-request-id")}},
                             DescriptionToJson(description, evidence))};
  });
  Client client = OpenOrDie(daemon.url());
  Expected<DaemonDescription> description = client.Describe();
  ASSERT_TRUE(description.ok()) << description.error().ToString();
  EXPECT_EQ(description->description.provider, "fake");
  EXPECT_EQ(description->tier, Tier::kContainer);
  EXPECT_EQ(daemon.requests().at(0).target, "/v1/describe");
  EXPECT_EQ(daemon.requests().at(0).method, "GET");
}

TEST(ClientTest, AClientIsSafeToShareAcrossThreads) {
  FakeDaemon daemon([](const SeenRequest& seen) { return HonestRunAnswer(seen); });
  Client client = OpenOrDie(daemon.url());
  std::vector<std::thread> threads;
  std::atomic<int> believed{0};
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int j = 0; j < 5; ++j) believed += client.Run(Snippet()).ok() ? 1 : 0;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(believed.load(), 20);
  EXPECT_EQ(client.connections_opened(), 1);
}

}  // namespace
}  // namespace plimsoll
