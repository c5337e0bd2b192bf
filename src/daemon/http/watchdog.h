// A per-connection timer that cancels the socket's pending operation when a
// phase (idle wait, header, body, write) takes too long.
//
// Why not beast::tcp_stream's timeouts: they close the socket on expiry, and
// a slow client must still get its 408 answer with the "nothing ran" mark.
// Cancelling instead leaves the socket open for that answer.
//
// Must be used from the connection's strand only. Each Arm() starts a new
// generation, so a stale expiry never cancels a later operation.
//
// Usage:
//   Watchdog dog(socket);
//   dog.Arm(limits.header_timeout);
//   co_await http::async_read_header(socket, buffer, parser, ...);
//   dog.Disarm();
//   if (dog.expired()) { ... 408 ... }
#ifndef PLIMSOLL_DAEMON_HTTP_WATCHDOG_H_
#define PLIMSOLL_DAEMON_HTTP_WATCHDOG_H_

#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <cstdint>
#include <memory>

namespace plimsoll::daemon::http {

template <class Socket>
class Watchdog {
 public:
  explicit Watchdog(Socket& socket)
      : timer_(socket.get_executor()), shared_(std::make_shared<Shared>()) {
    shared_->socket = &socket;
  }
  ~Watchdog() {
    shared_->socket = nullptr;  // a late expiry must not touch the socket
    timer_.cancel();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void Arm(std::chrono::milliseconds timeout) {
    uint64_t generation = ++shared_->generation;
    shared_->expired = false;
    timer_.expires_after(timeout);
    timer_.async_wait([shared = shared_, generation](const boost::system::error_code& error) {
      if (error || shared->generation != generation || shared->socket == nullptr) return;
      shared->expired = true;
      boost::system::error_code ignored;
      shared->socket->cancel(ignored);
    });
  }

  void Disarm() {
    ++shared_->generation;
    timer_.cancel();
  }

  // Whether the last armed phase ran out of time.
  bool expired() const { return shared_->expired; }

 private:
  struct Shared {
    Socket* socket = nullptr;
    uint64_t generation = 0;
    bool expired = false;
  };
  boost::asio::steady_timer timer_;
  std::shared_ptr<Shared> shared_;
};

}  // namespace plimsoll::daemon::http

#endif  // PLIMSOLL_DAEMON_HTTP_WATCHDOG_H_
