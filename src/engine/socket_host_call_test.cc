#include "engine/socket_host_call.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "engine/engine.h"

namespace plimsoll::engine {
namespace {

using Clock = std::chrono::steady_clock;

// A relay stand-in: answers each connection with the next canned response
// and keeps what it read.
class FakeRelay {
 public:
  explicit FakeRelay(std::vector<std::string> responses) : responses_(std::move(responses)) {
    char pattern[] = "/tmp/socket-host-call-test-XXXXXX";
    directory_ = mkdtemp(pattern);
    path_ = directory_ + "/api.sock";
    listener_ = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    std::memcpy(address.sun_path, path_.c_str(), path_.size() + 1);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(listen(listener_, 4), 0);
    thread_ = std::thread([this] {
      for (const std::string& response : responses_) {
        int connection = accept(listener_, nullptr, nullptr);
        if (connection < 0) return;
        std::string request;
        char chunk[4096];
        // Read the head, then Content-Length bytes (enough for these tests).
        while (request.find("\r\n\r\n") == std::string::npos) {
          ssize_t got = read(connection, chunk, sizeof chunk);
          if (got <= 0) break;
          request.append(chunk, static_cast<size_t>(got));
        }
        size_t length_at = request.find("Content-Length: ");
        if (length_at != std::string::npos) {
          size_t want = std::stoul(request.substr(length_at + 16));
          while (request.size() - request.find("\r\n\r\n") - 4 < want) {
            ssize_t got = read(connection, chunk, sizeof chunk);
            if (got <= 0) break;
            request.append(chunk, static_cast<size_t>(got));
          }
        }
        requests_.push_back(request);
        (void)!write(connection, response.data(), response.size());
        close(connection);
      }
    });
  }
  ~FakeRelay() {
    shutdown(listener_, SHUT_RDWR);
    thread_.join();
    close(listener_);
    std::filesystem::remove_all(directory_);
  }
  const std::string& path() const { return path_; }
  const std::vector<std::string>& requests() const { return requests_; }

 private:
  std::vector<std::string> responses_;
  std::string directory_, path_;
  int listener_ = -1;
  std::vector<std::string> requests_;
  std::thread thread_;
};

Outcome Evaluate(const std::string& code, const std::string& socket_path) {
  Limits limits;
  limits.deadline = Clock::now() + std::chrono::seconds(5);
  limits.host_call = SocketHostCall(socket_path, limits.deadline);
  auto outcome = EvaluateJavascript(code, limits);
  EXPECT_TRUE(outcome.ok()) << outcome.error().ToString();
  return outcome.ok() ? *outcome : Outcome{};
}

TEST(SocketHostCall, HostGetAndPostTravelAsHttpAndAnswerAsInTheEmbeddedEngine) {
  FakeRelay relay({
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 8\r\n"
      "Connection: close\r\n\r\n{\"id\":7}",
      "HTTP/1.1 201 Created\r\nContent-Length: 0\r\nPlimsoll-Truncated: true\r\n\r\n",
  });
  Outcome outcome = Evaluate(R"(
    const a = host.get('/items/7');
    const b = host.post('/items/7/reservations', {qty: 2});
    console.log(a.status, a.content_type, JSON.parse(a.body).id, b.status, b.truncated);
  )",
                             relay.path());
  EXPECT_EQ(outcome.stdout_bytes, "200 application/json 7 201 true\n") << outcome.stderr_bytes;
  ASSERT_EQ(relay.requests().size(), 2u);
  EXPECT_TRUE(relay.requests()[0].starts_with("GET /items/7 HTTP/1.1\r\n"));
  EXPECT_NE(relay.requests()[1].find("Content-Type: application/json\r\n"), std::string::npos);
  EXPECT_NE(relay.requests()[1].find("\r\n\r\n{\"qty\":2}"), std::string::npos);
}

TEST(SocketHostCall, ARefusalThrowsTheBrokersMessage) {
  FakeRelay relay({
      "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nPlimsoll-Refused: "
      "not_allowed\r\n\r\n{\"error\":\"not_allowed\",\"message\":\"No allow entry matches.\"}",
  });
  Outcome outcome = Evaluate(R"(
    try { host.get('/admin'); } catch (e) { console.log(e.code, e.message); }
  )",
                             relay.path());
  EXPECT_EQ(outcome.stdout_bytes, "refused No allow entry matches.\n");
}

TEST(SocketHostCall, NoRelayAndUnreadableRequestsThrowWithoutHanging) {
  Outcome outcome = Evaluate(R"(
    try { host.get('/x'); } catch (e) { console.log(e.code); }
    try { host.call({method: 'GET'}); } catch (e) { console.log(e.code); }
  )",
                             "/nonexistent/plimsoll/api.sock");
  EXPECT_EQ(outcome.stdout_bytes, "refused\nrefused\n");
}

}  // namespace
}  // namespace plimsoll::engine
