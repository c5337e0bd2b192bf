// A deliberately small HTTP/1.1 client for the daemon benchmarks: raw
// sockets, one request written with one send(), answers read with a
// Content-Length framing reader (plimsolld always sends Content-Length). No
// Beast, no allocation per request beyond the answer's bytes, so what the
// client itself costs stays small (plimsoll-http-bench reports it).
//
// Not a general client: it expects plimsolld's answers, and treats anything
// else (chunked bodies, a missing Content-Length) as an error.
//
// Usage:
//   plimsoll::bench::Connection connection;
//   if (!connection.Connect(port, &error)) ...
//   std::string request = RunRequest(body, RequestId(1));
//   connection.Send(request, &error);
//   Answer answer;
//   while (!connection.TakeAnswer(&answer, &error)) connection.Receive(deadline, &error);
#ifndef PLIMSOLL_BENCH_TOOLS_HTTP_CLIENT_H_
#define PLIMSOLL_BENCH_TOOLS_HTTP_CLIENT_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace plimsoll::bench {

struct Answer {
  int status = 0;
  std::string request_id;  // the Plimsoll-Request-Id header, "" when absent
  std::string body;
  bool close = false;  // Connection: close
};

// 32 lowercase hex digits made from `counter` (fresh per request, cheap).
std::string RequestId(uint64_t counter);

// A POST /v1/runs request with `body` and `request_id`.
std::string RunRequest(std::string_view body, std::string_view request_id);
// A GET request for `target` (e.g. /healthz) with `request_id`.
std::string GetRequest(std::string_view target, std::string_view request_id);

class Connection {
 public:
  Connection() = default;
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Connects to 127.0.0.1:port (TCP_NODELAY). `nonblocking` for epoll use.
  bool Connect(uint16_t port, bool nonblocking, std::string* error);
  int fd() const { return fd_; }

  // Writes all of `bytes` (blocking connections only).
  bool Send(std::string_view bytes, std::string* error);
  // Writes what the socket takes now; returns bytes written, -1 on error.
  long SendSome(std::string_view bytes, std::string* error);

  // Waits (blocking connections) until bytes arrive or `deadline`; appends
  // them to the buffer. False on error, timeout or end of stream.
  bool Receive(std::chrono::steady_clock::time_point deadline, std::string* error);
  // Reads what is there without waiting (nonblocking connections). False on
  // error or end of stream; true (possibly with nothing read) otherwise.
  bool ReceiveAvailable(std::string* error);

  // Takes one complete answer from the buffer, if there is one. A malformed
  // answer sets `error` and returns false; so does "not complete yet", with
  // `error` left empty.
  bool TakeAnswer(Answer* answer, std::string* error);

 private:
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace plimsoll::bench

#endif  // PLIMSOLL_BENCH_TOOLS_HTTP_CLIENT_H_
