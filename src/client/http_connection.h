// One kept-alive HTTP/1.1 connection to a daemon (TCP, TLS over TCP, or a
// Unix socket), with deadlines on every step.
//
// Blocking calls built on Beast's asynchronous operations run on a private
// io_context, because beast::basic_stream's timeouts (expires_at) apply only
// to asynchronous operations. The socket, the TLS state and the io_context
// are owned here and released by the destructor.
//
// Error marks follow docs/client.md: nothing written yet (no connection, TLS
// failure, cleartext refused after resolution) is a Refusal; anything after
// the first byte of the request left is unmarked.
//
// Thread-safety: Exchange from one thread at a time (Client serialises calls
// with its mutex); connections_opened from any thread.
//
// Usage:
//   auto connection = HttpConnection::Create(url, settings);
//   Expected<HttpAnswer> answer = (*connection)->Exchange(
//       {.method = "GET", .target = "/healthz", .budget = 30s});
#ifndef PLIMSOLL_CLIENT_HTTP_CONNECTION_H_
#define PLIMSOLL_CLIENT_HTTP_CONNECTION_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "client/daemon_url.h"
#include "client/http_answer.h"
#include "plimsoll/error.h"

namespace plimsoll::client {

struct ConnectionSettings {
  bool allow_cleartext = false;
  std::string ca_file;  // https: "" = the system's trust store
  int64_t max_response_bytes = int64_t{16} << 20;
  std::chrono::milliseconds connect_timeout{10'000};
};

struct HttpCall {
  std::string method = "GET";  // "GET", "POST" or "DELETE"
  std::string target;
  std::vector<std::pair<std::string, std::string>> headers;  // Host is added
  std::string body;                                          // POST only
  // Bound on the whole exchange, connecting included.
  std::chrono::milliseconds budget{30'000};
  // Appended to errors after the request left, e.g. "the code may have run".
  std::string consequence = "the call may have taken effect";
};

class HttpConnection {
 public:
  // Prepares the TLS context for https (reads the CA file). Does not connect.
  // Refusal(kRequest) when the CA file cannot be used.
  static Expected<std::unique_ptr<HttpConnection>> Create(DaemonUrl url,
                                                          ConnectionSettings settings);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Sends `call` on the kept connection if the daemon has not closed it,
  // else on a new one, and reads one answer (at most max_response_bytes of
  // body). The connection is closed after any error, when the answer says
  // `Connection: close`, or when bytes follow the answer.
  Expected<HttpAnswer> Exchange(const HttpCall& call);

  // Thread-safe (may be read while another thread is inside Exchange).
  int64_t connections_opened() const { return connections_opened_.load(); }

 private:
  struct State;
  HttpConnection(DaemonUrl url, ConnectionSettings settings, std::unique_ptr<State> state);

  DaemonUrl url_;
  ConnectionSettings settings_;
  std::unique_ptr<State> state_;
  std::atomic<int64_t> connections_opened_{0};
};

}  // namespace plimsoll::client

#endif  // PLIMSOLL_CLIENT_HTTP_CONNECTION_H_
