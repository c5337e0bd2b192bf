// A scripted upstream API for the broker's tests: a real HTTP/1.1 server on
// 127.0.0.1 port 0 (plain, or TLS with a given certificate) on its own
// thread, one connection at a time, that records every request it read
// (request line, headers as sent, body) and answers as the test's script
// says: an ordinary answer, raw bytes, or nothing at all.
//
// Usage:
//   FakeUpstream upstream([](const ReceivedRequest& request) {
//     return UpstreamReply{.status = 200, .body = "{}"};
//   });
//   auto answer = CallUpstream({.origin = upstream.origin(), .path = "/items"}, deadline);
//   EXPECT_EQ(upstream.requests().size(), 1u);
//
// Test code only: setup failures throw. Accessors are thread-safe.
#ifndef PLIMSOLL_BROKER_TESTING_FAKE_UPSTREAM_H_
#define PLIMSOLL_BROKER_TESTING_FAKE_UPSTREAM_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "broker/origin.h"

namespace plimsoll::broker::testing {

struct ReceivedRequest {
  std::string request_line{};  // "GET /items/1 HTTP/1.1"
  std::string method{};
  std::string target{};
  std::vector<std::pair<std::string, std::string>> headers{};  // as sent, in order
  std::string body{};

  // The values of the header `name` (any case), in order.
  std::vector<std::string> Headers(std::string_view name) const;
  // The first value of `name`, "" when absent.
  std::string Header(std::string_view name) const;
  // Everything that was read, for "the token never appears" checks.
  std::string Everything() const;
};

struct UpstreamReply {
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers{};
  std::string body{};  // sent with a Content-Length
  // When not empty, written as is instead of the above.
  std::string raw{};
  // Write nothing; hold the connection until the client closes it or the
  // server stops.
  bool never_answer = false;
};

using UpstreamScript = std::function<UpstreamReply(const ReceivedRequest&)>;

struct FakeUpstreamTls {
  std::string certificate_path{};
  std::string key_path{};
};

class FakeUpstream {
 public:
  // Listens on `address` (an IPv4 loopback address) port 0.
  explicit FakeUpstream(UpstreamScript script, std::optional<FakeUpstreamTls> tls = std::nullopt,
                        const std::string& address = "127.0.0.1");
  ~FakeUpstream();  // stops the thread
  FakeUpstream(const FakeUpstream&) = delete;
  FakeUpstream& operator=(const FakeUpstream&) = delete;

  uint16_t port() const;
  // http://ADDRESS:PORT, or https://.
  Origin origin() const;
  std::vector<ReceivedRequest> requests() const;
  int connections_accepted() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_{};
};

}  // namespace plimsoll::broker::testing

#endif  // PLIMSOLL_BROKER_TESTING_FAKE_UPSTREAM_H_
