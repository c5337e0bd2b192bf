// A scripted stand-in for plimsolld in the client's unit tests: a real
// HTTP/1.1 server on 127.0.0.1 port 0 (plain or TLS) on one thread, serving
// one connection at a time, whose answers a test writes byte for byte, so it
// can swap request IDs, tamper with records, send garbage, send too much,
// close early or never answer.
//
// Usage:
//   FakeDaemon daemon([](const SeenRequest& seen) { return HonestRunAnswer(seen); });
//   auto client = Client::Open(daemon.url());
//   ... client->Run(request) ...
//   EXPECT_EQ(daemon.connections_accepted(), 1);
#ifndef PLIMSOLL_CLIENT_TESTING_FAKE_DAEMON_H_
#define PLIMSOLL_CLIENT_TESTING_FAKE_DAEMON_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "net/testing/test_certificate.h"
#include "plimsoll/result.h"

namespace plimsoll::client::testing {

struct SeenRequest {
  std::string method;
  std::string target;
  std::multimap<std::string, std::string> headers;  // names lowercased
  std::string body;
  int connection = 0;  // 1 for the first accepted connection, ...

  // The first value of a header, "" when absent.
  std::string Header(const std::string& lowercase_name) const;
};

// What the server does with one request.
struct Reply {
  std::string bytes{};        // written as is
  bool close_after = false;   // close the connection after writing
  bool never_answer = false;  // write nothing; hold the connection until the server stops
};
using Script = std::function<Reply(const SeenRequest&)>;

class FakeDaemon {
 public:
  // With `tls`, serves TLS with that certificate.
  explicit FakeDaemon(Script script,
                      std::optional<net::testing::TestCertificate> tls = std::nullopt);
  ~FakeDaemon();
  FakeDaemon(const FakeDaemon&) = delete;
  FakeDaemon& operator=(const FakeDaemon&) = delete;

  uint16_t port() const { return port_; }
  // "http://127.0.0.1:PORT" (or https://).
  std::string url() const;
  int connections_accepted() const;
  std::vector<SeenRequest> requests() const;
  // Waits until `count` connections have been closed by either side.
  bool WaitForClosedConnections(int count, std::chrono::milliseconds bound);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  uint16_t port_ = 0;
  bool tls_ = false;
};

// A raw HTTP/1.1 response with a Content-Length of body.size().
std::string RawResponse(unsigned status,
                        const std::vector<std::pair<std::string, std::string>>& headers,
                        const std::string& body, bool keep_alive = true);

// An honest answer to the run request in `seen` (tier `tier`), echoing its
// request ID, after `tamper` changes the result (record already made).
Reply HonestRunAnswer(const SeenRequest& seen, Tier tier = Tier::kProcess,
                      const std::function<void(Result&)>& tamper = {});

// An honest refusal with `reason`, echoing the request ID.
Reply RefusalAnswer(const SeenRequest& seen, NotDispatched reason, const std::string& message);

}  // namespace plimsoll::client::testing

#endif  // PLIMSOLL_CLIENT_TESTING_FAKE_DAEMON_H_
