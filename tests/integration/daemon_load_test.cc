// Load: 200 concurrent clients against one in-process daemon (embedded
// provider, --dev, port 0), each sending a deterministic mix of valid runs
// and everything a careless or hostile client sends: bad JSON, a wrong
// protocol, oversize bodies (declared and chunked), unknown routes, wrong
// methods and content types, missing, malformed and repeated request IDs,
// malformed HTTP, pipelined requests, and connections half-closed or reset
// mid-request.
//
// Every answer must be well-formed (Beast parses the status line and
// headers; Content-Type application/json; refusals carry {code, message,
// not_dispatched} and the same mark in Plimsoll-Not-Dispatched; the request
// ID is echoed, in the header and the error body, exactly when one
// well-formed ID was sent). Afterwards the daemon still answers /healthz,
// every connection is gone, the operator log shows no internal error, and the
// provider ran exactly as many runs as were answered 200: a refusal never ran.
//
// The clients use raw blocking sockets with poll() deadlines, so a daemon
// that stops answering fails the test instead of hanging it.
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <future>
#include <latch>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "daemon_fixture.h"
#include "plimsoll/wire.h"

namespace plimsoll::daemon::testing {
namespace {

namespace beast_http = boost::beast::http;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr int kClients = 200;
constexpr int kRoundsPerClient = 10;
constexpr int64_t kMaxBody = 64 * 1024;  // lowered so oversize bodies stay cheap to send
constexpr auto kAnswerDeadline = std::chrono::seconds(45);

std::string Lowercase(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// One client connection on a raw socket. Failures are returned as text.
class RawConnection {
 public:
  explicit RawConnection(uint16_t port) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd_ < 0 || ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      error_ = "connect failed: errno " + std::to_string(errno);
    }
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  const std::string& error() const { return error_; }

  // Writes all of `bytes`; false (and error()) if the peer stopped reading.
  bool Write(std::string_view bytes) {
    while (!bytes.empty()) {
      ssize_t sent = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
      if (sent <= 0) {
        error_ = "send failed: errno " + std::to_string(errno);
        return false;
      }
      bytes.remove_prefix(static_cast<size_t>(sent));
    }
    return true;
  }

  void ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }

  // Closes with SO_LINGER 0: the kernel sends a reset.
  void Reset() {
    linger option{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &option, sizeof option);
    ::close(fd_);
    fd_ = -1;
  }

  // One answer. nullopt with error() empty: the daemon closed the connection
  // before sending a byte of it; with error(): anything else went wrong.
  std::optional<HttpReply> Read() {
    beast_http::response_parser<beast_http::string_body> parser;
    parser.body_limit(64 << 20);
    parser.eager(true);
    auto deadline = Clock::now() + kAnswerDeadline;
    while (true) {
      if (!buffer_.empty()) {
        boost::beast::error_code parse_error;
        size_t used = parser.put(boost::asio::buffer(buffer_), parse_error);
        buffer_.erase(0, used);
        if (parse_error && parse_error != beast_http::error::need_more) {
          error_ = "the answer is not well-formed HTTP: " + parse_error.message();
          return std::nullopt;
        }
        if (parser.is_done()) break;
        if (used > 0) continue;
      }
      if (!Receive(deadline)) return std::nullopt;
      if (closed_) {
        if (parser.got_some() || !buffer_.empty()) error_ = "the answer was cut short";
        return std::nullopt;
      }
    }
    HttpReply reply;
    const auto& response = parser.get();
    reply.status = response.result_int();
    for (const auto& field : response) {
      reply.headers.emplace(Lowercase(std::string(field.name_string())),
                            std::string(field.value()));
    }
    reply.body = response.body();
    reply.keep_alive = response.keep_alive();
    return reply;
  }

  // Whether the daemon closes the connection (EOF) without sending anything.
  bool ClosesSilently() {
    auto deadline = Clock::now() + kAnswerDeadline;
    while (!closed_) {
      if (!Receive(deadline)) return false;
    }
    return buffer_.empty();
  }

 private:
  bool Receive(Clock::time_point deadline) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now()).count();
    pollfd descriptor{fd_, POLLIN, 0};
    if (left <= 0 || ::poll(&descriptor, 1, static_cast<int>(left)) <= 0) {
      error_ = "no answer within " + std::to_string(kAnswerDeadline.count()) + " s";
      return false;
    }
    char chunk[16 * 1024];
    ssize_t size = ::recv(fd_, chunk, sizeof chunk, 0);
    if (size < 0 && errno == ECONNRESET) size = 0;  // a close with unread input
    if (size < 0) {
      error_ = "recv failed: errno " + std::to_string(errno);
      return false;
    }
    if (size == 0) closed_ = true;
    buffer_.append(chunk, static_cast<size_t>(size));
    return true;
  }

  int fd_ = -1;
  std::string buffer_;
  bool closed_ = false;
  std::string error_;
};

struct Header {
  std::string name;
  std::string value;
};

std::string RequestBytes(const std::string& method, const std::string& target,
                         const std::vector<Header>& headers, const std::string& body,
                         bool content_length = true) {
  std::string out = method + " " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  for (const Header& header : headers) out += header.name + ": " + header.value + "\r\n";
  if (content_length && (method == "POST" || !body.empty())) {
    out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  return out + "\r\n" + body;
}

// What one answer must look like. `id` is the ID the client sent when it sent
// exactly one well-formed ID, else "" (nothing may be echoed).
struct Expectation {
  unsigned status = 200;
  std::string code{};    // error code for refusals
  std::string reason{};  // the mark for refusals
  std::string id{};
  bool run = false;  // a 200 from /v1/runs: a result printing 42
};

std::string CheckAnswer(const HttpReply& reply, const Expectation& expected) {
  std::string where =
      "status " + std::to_string(reply.status) + " body " + reply.body.substr(0, 300) + ": ";
  if (reply.status != expected.status) {
    return where + "expected status " + std::to_string(expected.status);
  }
  if (reply.Header("content-type") != "application/json") return where + "content type";
  if (reply.Count("plimsoll-request-id") != (expected.id.empty() ? 0u : 1u) ||
      reply.Header("plimsoll-request-id") != expected.id) {
    return where + "request-ID echo: expected \"" + expected.id + "\", got \"" +
           reply.Header("plimsoll-request-id") + "\"";
  }
  if (expected.status == 200) {
    if (reply.Count("plimsoll-not-dispatched") != 0) return where + "a mark on a success";
    if (!expected.run) return "";
    Expected<Result> result = ParseResultJson(reply.body);
    if (!result.ok()) return where + result.error().ToString();
    if (result->stdout_bytes != "42\n" || result->exit_code != 0) return where + "wrong result";
    return "";
  }
  Expected<ErrorAnswer> error = ParseErrorJson(reply.body);
  if (!error.ok()) return where + error.error().ToString();
  if (ErrorCodeName(error->error.code()) != expected.code) return where + "code";
  if (!error->error.not_dispatched() ||
      NotDispatchedName(*error->error.not_dispatched()) != expected.reason) {
    return where + "expected the mark " + expected.reason;
  }
  if (reply.Header("plimsoll-not-dispatched") != expected.reason) return where + "mark header";
  if (error->request_id != expected.id) return where + "request_id in the body";
  if (error->error.message().empty()) return where + "empty message";
  return "";
}

// What all clients saw, for the final accounting.
struct Tally {
  std::atomic<int> ok_runs{0};  // 200 answers from POST /v1/runs
  std::mutex mutex;
  std::map<std::string, int> done;  // per kind
  std::vector<std::string> failures;

  void Record(const std::string& kind, const std::string& failure) {
    std::lock_guard lock(mutex);
    ++done[kind];
    if (!failure.empty() && failures.size() < 20) failures.push_back(kind + ": " + failure);
  }
};

const std::string kRun = RunBody("console.log(6*7)");
const std::vector<Header> kJson = {{"Content-Type", "application/json"}};

std::vector<Header> With(std::vector<Header> headers, std::vector<Header> more) {
  headers.insert(headers.end(), more.begin(), more.end());
  return headers;
}

// A client's connection, reopened whenever the daemon closes it.
class Client {
 public:
  Client(uint16_t port, Tally& tally) : port_(port), tally_(tally) {}

  // Sends one request on the kept-alive connection and checks its answer.
  std::string Exchange(const std::string& bytes, const Expectation& expected) {
    if (!connection_) connection_ = std::make_unique<RawConnection>(port_);
    if (!connection_->error().empty()) return connection_->error();
    connection_->Write(bytes);  // a refusal may come before the whole body is taken
    std::optional<HttpReply> reply = connection_->Read();
    if (!reply) {
      std::string error = connection_->error();
      return error.empty() ? "the daemon closed the connection without answering" : error;
    }
    if (expected.run && reply->status == 200) ++tally_.ok_runs;
    std::string failure = CheckAnswer(*reply, expected);
    if (!reply->keep_alive) connection_.reset();
    return failure;
  }

  // A connection of its own for the transport cases.
  std::unique_ptr<RawConnection> Fresh() {
    connection_.reset();
    return std::make_unique<RawConnection>(port_);
  }

  Tally& tally() { return tally_; }
  uint16_t port() const { return port_; }

 private:
  uint16_t port_;
  Tally& tally_;
  std::unique_ptr<RawConnection> connection_;
};

using Kind = std::pair<std::string, std::string (*)(Client&)>;

std::string ValidRun(Client& client) {
  std::string id = FreshRequestId();
  return client.Exchange(
      RequestBytes("POST", "/v1/runs", With(kJson, {{"Plimsoll-Request-Id", id}}), kRun),
      {.status = 200, .id = id, .run = true});
}

std::string RunWithoutId(Client& client) {
  return client.Exchange(RequestBytes("POST", "/v1/runs", kJson, kRun),
                         {.status = 200, .run = true});
}

std::string RunWithGarbageIds(Client& client) {
  // Malformed and repeated IDs are neither echoed nor refused: the run runs.
  std::string id = FreshRequestId();
  std::string upper = id;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  std::string failure = client.Exchange(
      RequestBytes("POST", "/v1/runs", With(kJson, {{"Plimsoll-Request-Id", upper + "x"}}), kRun),
      {.status = 200, .run = true});
  if (!failure.empty()) return failure;
  return client.Exchange(
      RequestBytes("POST", "/v1/runs",
                   With(kJson, {{"Plimsoll-Request-Id", id}, {"plimsoll-request-id", id}}), kRun),
      {.status = 200, .run = true});
}

std::string BadJson(Client& client) {
  std::string id = FreshRequestId();
  return client.Exchange(
      RequestBytes("POST", "/v1/runs", With(kJson, {{"Plimsoll-Request-Id", id}}),
                   R"({"protocol": 1, "javascript": {"code": )"),
      {.status = 400, .code = "invalid_argument", .reason = "request", .id = id});
}

std::string BadJsonGarbageId(Client& client) {
  return client.Exchange(
      RequestBytes("POST", "/v1/runs", With(kJson, {{"Plimsoll-Request-Id", "not-an-id"}}),
                   "\xff\xfe{"),
      {.status = 400, .code = "invalid_argument", .reason = "request"});
}

std::string WrongProtocol(Client& client) {
  std::string id = FreshRequestId();
  return client.Exchange(
      RequestBytes("POST", "/v1/runs", With(kJson, {{"Plimsoll-Request-Id", id}}),
                   R"j({"protocol": 2, "javascript": {"code": "console.log(6*7)"}})j"),
      {.status = 409, .code = "failed_precondition", .reason = "protocol", .id = id});
}

std::string OversizeDeclared(Client& client) {
  std::string id = FreshRequestId();
  std::string body(kMaxBody + 1, ' ');
  return client.Exchange(
      RequestBytes("POST", "/v1/runs", With(kJson, {{"Plimsoll-Request-Id", id}}), body),
      {.status = 413, .code = "invalid_argument", .reason = "request", .id = id});
}

std::string OversizeChunked(Client& client) {
  std::string id = FreshRequestId();
  std::string chunk(16 * 1024, ' ');
  std::string body;
  char size_line[32];
  std::snprintf(size_line, sizeof size_line, "%zx\r\n", chunk.size());
  for (int64_t sent = 0; sent <= kMaxBody; sent += static_cast<int64_t>(chunk.size())) {
    body += size_line + chunk + "\r\n";
  }
  body += "0\r\n\r\n";
  return client.Exchange(
      RequestBytes("POST", "/v1/runs",
                   With(kJson, {{"Plimsoll-Request-Id", id}, {"Transfer-Encoding", "chunked"}}),
                   body, /*content_length=*/false),
      {.status = 413, .code = "invalid_argument", .reason = "request", .id = id});
}

std::string UnknownRoute(Client& client) {
  std::string id = FreshRequestId();
  return client.Exchange(
      RequestBytes("GET", "/v2/nothing/%ff?x=1", {{"Plimsoll-Request-Id", id}}, ""),
      {.status = 404, .code = "not_found", .reason = "request", .id = id});
}

std::string WrongMethodAndType(Client& client) {
  std::string id = FreshRequestId();
  std::string failure =
      client.Exchange(RequestBytes("DELETE", "/v1/runs", {{"Plimsoll-Request-Id", id}}, ""),
                      {.status = 405, .code = "invalid_argument", .reason = "request", .id = id});
  if (!failure.empty()) return failure;
  return client.Exchange(RequestBytes("POST", "/v1/runs", {{"Content-Type", "text/plain"}}, kRun),
                         {.status = 415, .code = "invalid_argument", .reason = "request"});
}

std::string MalformedHttp(Client& client) {
  auto connection = client.Fresh();
  connection->Write("THIS IS NOT HTTP\r\n\r\n");
  std::optional<HttpReply> reply = connection->Read();
  if (!reply) return "no answer to malformed HTTP: " + connection->error();
  return CheckAnswer(*reply, {.status = 400, .code = "invalid_argument", .reason = "request"});
}

std::string Pipelined(Client& client) {
  // Three requests in one write; three answers in order on one connection.
  auto connection = client.Fresh();
  std::string first = FreshRequestId();
  std::string second = FreshRequestId();
  connection->Write(
      RequestBytes("GET", "/healthz", {{"Plimsoll-Request-Id", first}}, "") +
      RequestBytes("POST", "/v1/runs", With(kJson, {{"Plimsoll-Request-Id", second}}), kRun) +
      RequestBytes("POST", "/v1/runs", kJson, "[1, 2"));
  const Expectation expected[] = {{.status = 200, .id = first},
                                  {.status = 200, .id = second, .run = true},
                                  {.status = 400, .code = "invalid_argument", .reason = "request"}};
  for (const Expectation& expectation : expected) {
    std::optional<HttpReply> reply = connection->Read();
    if (!reply) return "a pipelined answer is missing: " + connection->error();
    if (expectation.run && reply->status == 200) ++client.tally().ok_runs;
    std::string failure = CheckAnswer(*reply, expectation);
    if (!failure.empty()) return failure;
  }
  return "";
}

std::string HalfClosedAfterRequest(Client& client) {
  // The client sends a whole run and closes its sending side: it must still
  // get the answer, then the daemon closes.
  auto connection = client.Fresh();
  std::string id = FreshRequestId();
  connection->Write(
      RequestBytes("POST", "/v1/runs", With(kJson, {{"Plimsoll-Request-Id", id}}), kRun));
  connection->ShutdownWrite();
  std::optional<HttpReply> reply = connection->Read();
  if (!reply) return "no answer after a half-close: " + connection->error();
  if (reply->status == 200) ++client.tally().ok_runs;
  std::string failure = CheckAnswer(*reply, {.status = 200, .id = id, .run = true});
  if (!failure.empty()) return failure;
  return connection->ClosesSilently() ? "" : "the daemon did not close after the half-close";
}

std::string HalfClosedMidHeader(Client& client) {
  auto connection = client.Fresh();
  connection->Write("POST /v1/runs HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: applic");
  connection->ShutdownWrite();
  return connection->ClosesSilently() ? "" : "an answer or no close for a cut-off header";
}

std::string HalfClosedMidBody(Client& client) {
  // A whole valid header and half a body: nothing to run, nobody to answer.
  auto connection = client.Fresh();
  std::string partial = RequestBytes("POST", "/v1/runs", kJson, kRun);
  connection->Write(partial.substr(0, partial.size() - kRun.size() / 2));
  connection->ShutdownWrite();
  return connection->ClosesSilently() ? "" : "an answer or no close for a cut-off body";
}

std::string ResetMidBody(Client& client) {
  auto connection = client.Fresh();
  std::string partial = RequestBytes("POST", "/v1/runs", kJson, kRun);
  connection->Write(partial.substr(0, partial.size() - 5));
  connection->Reset();
  return "";
}

std::string ConnectAndLeave(Client& client) {
  auto connection = client.Fresh();
  connection->ShutdownWrite();
  return connection->ClosesSilently() ? "" : "an empty connection was not closed quietly";
}

std::string Healthz(Client& client) {
  std::string id = FreshRequestId();
  return client.Exchange(RequestBytes("GET", "/healthz", {{"Plimsoll-Request-Id", id}}, ""),
                         {.status = 200, .id = id});
}

const std::vector<Kind>& Kinds() {
  static const std::vector<Kind> kinds = {
      {"valid run", ValidRun},
      {"bad JSON", BadJson},
      {"run without ID", RunWithoutId},
      {"wrong protocol", WrongProtocol},
      {"oversize declared body", OversizeDeclared},
      {"valid run", ValidRun},
      {"unknown route", UnknownRoute},
      {"half-closed after request", HalfClosedAfterRequest},
      {"run with garbage or repeated IDs", RunWithGarbageIds},
      {"bad JSON, garbage ID", BadJsonGarbageId},
      {"oversize chunked body", OversizeChunked},
      {"half-closed mid-header", HalfClosedMidHeader},
      {"wrong method and content type", WrongMethodAndType},
      {"pipelined", Pipelined},
      {"half-closed mid-body", HalfClosedMidBody},
      {"malformed HTTP", MalformedHttp},
      {"reset mid-body", ResetMidBody},
      {"connect and leave", ConnectAndLeave},
      {"healthz", Healthz},
  };
  return kinds;
}

TEST(DaemonLoad, TwoHundredClientsMixingRunsAndRefusalsAllGetWellFormedAnswers) {
  DaemonUnderTest daemon({.provider = "embedded", .dev = true, .tune = [](Settings& settings) {
                            settings.io_threads = 2;
                            settings.run_workers = 2;
                            // Queue, never shed: every valid run must be answered 200.
                            settings.run_queue = 2 * kClients * kRoundsPerClient;
                            settings.max_concurrent_runs = 2 * kClients * kRoundsPerClient;
                            settings.http.max_body_bytes = kMaxBody;
                          }});
  Tally tally;
  std::latch start(kClients);
  std::vector<std::thread> threads;
  threads.reserve(kClients);
  auto started = Clock::now();
  for (int i = 0; i < kClients; ++i) {
    threads.emplace_back([&, i] {
      Client client(daemon.port(), tally);
      start.arrive_and_wait();  // all 200 start together
      const auto& kinds = Kinds();
      for (int round = 0; round < kRoundsPerClient; ++round) {
        const Kind& kind = kinds[(static_cast<size_t>(i) * 7 + round) % kinds.size()];
        tally.Record(kind.first, kind.second(client));
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  auto seconds = std::chrono::duration<double>(Clock::now() - started).count();

  int exchanges = 0;
  for (const auto& [kind, count] : tally.done) exchanges += count;
  EXPECT_EQ(exchanges, kClients * kRoundsPerClient);
  std::set<std::string> names;
  for (const Kind& kind : Kinds()) names.insert(kind.first);
  EXPECT_EQ(tally.done.size(), names.size()) << "every kind of client ran";
  for (const std::string& failure : tally.failures) ADD_FAILURE() << failure;

  // Still serving.
  RawConnection health(daemon.port());
  std::string id = FreshRequestId();
  health.Write(RequestBytes("GET", "/healthz", {{"Plimsoll-Request-Id", id}}, ""));
  std::optional<HttpReply> reply = health.Read();
  ASSERT_TRUE(reply.has_value()) << health.error();
  EXPECT_EQ(CheckAnswer(*reply, {.status = 200, .id = id}), "");

  // Refusals ran nothing: the provider ran exactly the runs answered 200.
  EXPECT_GT(tally.ok_runs.load(), kClients / 2);
  EXPECT_EQ(daemon.provider().runs(), tally.ok_runs.load());

  // Every connection of the storm is gone (half-closed and reset ones too);
  // only the health check's may remain until it closes.
  auto deadline = Clock::now() + std::chrono::seconds(10);
  while (daemon.server().open_connections() > 1 && Clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(20));
  }
  EXPECT_LE(daemon.server().open_connections(), 1u);

  std::string log = daemon.log_text();
  EXPECT_EQ(log.find("internal error"), std::string::npos) << log;
  EXPECT_EQ(log.find("A connection failed"), std::string::npos) << log;

  std::printf("load: %d clients x %d exchanges in %.1f s; %d runs answered 200 and run; kinds:",
              kClients, kRoundsPerClient, seconds, tally.ok_runs.load());
  for (const auto& [kind, count] : tally.done) std::printf(" [%s] %d", kind.c_str(), count);
  std::printf("\n");
}

}  // namespace
}  // namespace plimsoll::daemon::testing
